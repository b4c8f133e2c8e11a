// RunScenario (scenario.h): plays a scenario's events through SchedulerLoop and checks the
// expectations after each. The parts of docs/scenarios.md played here:
//  - the clock: the earliest creationTimestamp, moved by created pods and `advance`;
//  - after each event, "settle": the scheduler loop runs until quiet; with `recreateEvicted`,
//    every evicted pod with a controller is replaced at once (<name>-r1, -r2, ...: same spec,
//    new uid, creationTimestamp = now) and the loop runs again, until nothing changes;
//  - the checks bound ("*" = any node), evicted, untouched, pending and gated.
// Thread-safety: none.
#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "bench/sim/scenario.h"
#include "bench/sim/scheduler_loop.h"
#include "policies/policies.h"

namespace capext {
namespace {

// Upper bound on settle rounds per event (each round either changes something or stops).
constexpr int kMaxSettleRounds = 1000;

class ScenarioRunner {
 public:
  ScenarioRunner(const Scenario& scenario, ClusterState* state, SchedulerLoop* loop)
      : scenario_(scenario), state_(state), loop_(loop) {}

  void Start() {
    // The clock starts at the earliest creation time seen and moves with created pods.
    for (const auto& pod : scenario_.cluster.pods)
      EarliestClock(pod.creation_ms);
    for (const auto& e : scenario_.events) {
      for (const auto& pod : e.pods)
        EarliestClock(pod.creation_ms);
    }
    Settle();
  }

  // Applies event i and settles; returns what it did, for the report line.
  std::string Apply(const ScenarioEvent& event) {
    evicted_.clear();
    placement_before_.clear();
    for (const auto& [uid, pod] : state_->pods())
      placement_before_[pod.Key()] = pod.node_name;
    std::string what;
    switch (event.kind) {
      case ScenarioEvent::Kind::kCreate:
      case ScenarioEvent::Kind::kCreateGroup:
        for (const Pod& pod : event.pods)
          now_ = std::max(now_, pod.creation_ms);
        for (Pod pod : event.pods)
          Create(std::move(pod));
        what = event.kind == ScenarioEvent::Kind::kCreate
                   ? "create " + event.pods.front().Key()
                   : fmt::format("createGroup {} x{}", event.target, event.pods.size());
        break;
      case ScenarioEvent::Kind::kCreatePodGroup:
        what = fmt::format("create PodGroup {}/{}", event.pod_group.ns, event.pod_group.name);
        break;
      case ScenarioEvent::Kind::kDelete: {
        if (const Pod* pod = Find(event.target))
          state_->DeletePod(pod->uid.empty() ? pod->Key() : pod->uid);
        what = "delete " + event.target;
        break;
      }
      case ScenarioEvent::Kind::kAdvance:
        now_ += event.advance_ms;
        what = fmt::format("advance {}ms", event.advance_ms);
        break;
    }
    Settle();
    return what;
  }

  // The problems with `expect` right after an event (empty: it holds), and the checks made.
  void Check(const ScenarioExpectation& expect, std::vector<std::string>* checks,
             std::vector<std::string>* problems) const {
    const auto& reasons = loop_->pending_reasons();
    auto reason_of = [&](const std::string& key) {
      auto it = reasons.find(key);
      return it == reasons.end() ? std::string() : it->second;
    };
    for (const auto& [key, node] : expect.bound) {
      const Pod* pod = Find(key);
      checks->push_back(fmt::format("{} bound to {}", key, node));
      if (pod == nullptr) {
        problems->push_back(fmt::format("{} does not exist", key));
      } else if (node == "*" ? !pod->IsBound() : pod->node_name != node) {
        problems->push_back(fmt::format(
            "{} is {}", key,
            pod->node_name.empty() ? "pending: " + reason_of(key) : "bound to " + pod->node_name));
      }
    }
    for (const auto& key : expect.evicted) {
      checks->push_back(fmt::format("{} evicted", key));
      if (evicted_.count(key) == 0) problems->push_back(fmt::format("{} was not evicted", key));
    }
    for (const auto& key : expect.untouched) {
      checks->push_back(fmt::format("{} untouched", key));
      const Pod* pod = Find(key);
      auto before = placement_before_.find(key);
      if (evicted_.count(key) != 0 || pod == nullptr) {
        problems->push_back(fmt::format("{} was evicted", key));
      } else if (before != placement_before_.end() && before->second != pod->node_name) {
        problems->push_back(
            fmt::format("{} moved from {} to {}", key, before->second, pod->node_name));
      }
    }
    for (const auto& [key, text] : expect.pending) {
      checks->push_back(fmt::format("{} pending ({})", key, text));
      const Pod* pod = Find(key);
      const std::string reason = reason_of(key);
      if (pod == nullptr) {
        problems->push_back(fmt::format("{} does not exist", key));
      } else if (pod->IsBound()) {
        problems->push_back(fmt::format("{} is bound to {}", key, pod->node_name));
      } else if (reasons.count(key) == 0 || reason.find(text) == std::string::npos) {
        problems->push_back(
            fmt::format("{} pending reason \"{}\" does not contain \"{}\"", key, reason, text));
      }
    }
    for (const auto& [key, text] : expect.gated) {
      checks->push_back(fmt::format("{} gated ({})", key, text));
      const Pod* pod = Find(key);
      if (pod == nullptr) {
        problems->push_back(fmt::format("{} does not exist", key));
      } else if (pod->IsBound()) {
        problems->push_back(fmt::format("{} is bound to {}", key, pod->node_name));
      } else {
        problems->push_back(fmt::format("{} is not gated (admission: filter gates no pod)", key));
      }
    }
  }

 private:
  void EarliestClock(int64_t creation_ms) {
    if (creation_ms != 0 && (now_ == 0 || creation_ms < now_)) now_ = creation_ms;
  }

  const Pod* Find(const std::string& key) const {
    const auto slash = key.find('/');
    if (slash == std::string::npos) return nullptr;
    return state_->FindPodByName(key.substr(0, slash), key.substr(slash + 1));
  }

  void Create(Pod pod) { state_->UpsertPod(std::move(pod)); }

  // The scheduler loop until quiet, then the controllers' replacements, until nothing changes.
  void Settle() {
    for (int round = 0; round < kMaxSettleRounds; ++round) {
      SchedulerLoop::PassResult pass = loop_->RunUntilQuiet(now_);
      for (const auto& e : pass.evicted)
        evicted_.insert(e.victim.Key());
      if (pass.bound.empty() && pass.evicted.empty()) break;
    }
  }

  const Scenario& scenario_;
  ClusterState* state_;
  SchedulerLoop* loop_;
  int64_t now_ = 0;
  std::set<std::string> evicted_;                        // by the last event
  std::map<std::string, std::string> placement_before_;  // pod key -> node, before it
};

}  // namespace

ScenarioReport RunScenario(const Scenario& scenario, std::ostream& out) {
  ScenarioReport report;
  const auto* semantics = QuotaSemanticsPolicies().Find(scenario.quota_semantics);
  const auto* scoring = NodeScoringPolicies().Find(scenario.scoring);
  if (semantics == nullptr || scoring == nullptr) {
    out << fmt::format("FAIL {}: unknown quotaSemantics (expected {}) or scoring (expected {})\n",
                       scenario.name, QuotaSemanticsPolicies().NamesText(),
                       NodeScoringPolicies().NamesText());
    ++report.failed;
    return report;
  }
  ClusterState state(semantics->make());
  ApplySnapshot(scenario.cluster, &state);
  SchedulerLoop loop(&state, scoring->make(), VictimOrderPolicies().default_entry().make(),
                     SchedulerLoopOptions{});
  ScenarioRunner runner(scenario, &state, &loop);
  runner.Start();
  for (std::size_t i = 0; i < scenario.events.size(); ++i) {
    const std::string what = runner.Apply(scenario.events[i]);
    auto it = scenario.expect.find(static_cast<int>(i));
    if (it == scenario.expect.end()) continue;
    std::vector<std::string> checks, problems;
    runner.Check(it->second, &checks, &problems);
    std::string summary;
    for (const auto& c : checks)
      summary += (summary.empty() ? "" : ", ") + c;
    if (problems.empty()) {
      ++report.passed;
      out << fmt::format("PASS {} event {} ({}): {}\n", scenario.name, i, what, summary);
    } else {
      ++report.failed;
      std::string detail;
      for (const auto& p : problems)
        detail += (detail.empty() ? "" : "; ") + p;
      out << fmt::format("FAIL {} event {} ({}): {} -- {}\n", scenario.name, i, what, summary,
                         detail);
    }
  }
  return report;
}

}  // namespace capext
