// RunScenario (scenario.h): a scenario file played by the simulator's one driver (simulation.h):
// the file's cluster is the background, its quotas are enforced as they are, and its events are
// script steps. Pending pods of the file's cluster are created in a first step at the start. The
// driver examines every node (scheduling and reclaim) and its reclaim controller is never behind
// (reclaim_at_once), so after each step the cluster is where kube-scheduler plus the extender
// settle; the expectations are checked there.
#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

#include "bench/sim/scenario.h"
#include "bench/sim/simulation.h"
#include "core/group_quota.h"
#include "core/placement.h"
#include "core/pod_group.h"
#include "policies/node_scorers.h"
#include "policies/policies.h"

namespace capext {
namespace {

std::string StoreKey(const Pod& pod) {
  return pod.uid.empty() ? pod.Key() : pod.uid;
}

PodGroupSpec SpecOf(const ScenarioPodGroup& g) {
  PodGroupSpec spec;
  spec.key = GroupKey{kCoschedulingApiGroup, g.ns, g.name};
  spec.min_member = g.min_member;
  spec.schedule_timeout_ms = g.schedule_timeout_ms;
  return spec;
}

// The script of a scenario: step 0 creates the cluster's pending (and finished) pods at the start,
// step i + 1 is event i. The clock starts at the earliest creation time seen and moves with
// created pods and advances.
std::vector<ScriptStep> ScriptOf(const Scenario& scenario, Snapshot* background) {
  int64_t now = 0;
  for (const auto& pod : scenario.cluster.pods) {
    if (pod.creation_ms != 0 && (now == 0 || pod.creation_ms < now)) now = pod.creation_ms;
  }
  for (const auto& e : scenario.events) {
    for (const Pod& pod : e.pods) {
      if (pod.creation_ms != 0 && (now == 0 || pod.creation_ms < now)) now = pod.creation_ms;
    }
  }
  std::vector<ScriptStep> script(1);
  script[0].t_ms = now;
  for (const ScenarioPodGroup& g : scenario.pod_groups)
    script[0].pod_groups.push_back(SpecOf(g));
  *background = scenario.cluster;
  background->pods.clear();
  for (const Pod& pod : scenario.cluster.pods) {
    if (pod.IsBound() && !pod.IsTerminal()) {
      background->pods.push_back(pod);
    } else {
      script[0].create.push_back(pod);
    }
  }
  for (const ScenarioEvent& event : scenario.events) {
    ScriptStep step;
    switch (event.kind) {
      case ScenarioEvent::Kind::kCreate:
      case ScenarioEvent::Kind::kCreateGroup:
        for (const Pod& pod : event.pods) {
          now = std::max(now, pod.creation_ms);
          step.create.push_back(pod);
        }
        break;
      case ScenarioEvent::Kind::kCreatePodGroup:
        step.pod_groups.push_back(SpecOf(event.pod_group));
        break;
      case ScenarioEvent::Kind::kDelete:
        step.remove.push_back(event.target);
        break;
      case ScenarioEvent::Kind::kAdvance:
        now += event.advance_ms;
        break;
    }
    step.t_ms = now;
    script.push_back(std::move(step));
  }
  return script;
}

std::string EventText(const ScenarioEvent& event) {
  switch (event.kind) {
    case ScenarioEvent::Kind::kCreate:
      return "create " + event.pods.front().Key();
    case ScenarioEvent::Kind::kCreateGroup:
      return fmt::format("createGroup {} x{}", event.target, event.pods.size());
    case ScenarioEvent::Kind::kCreatePodGroup:
      return fmt::format("create PodGroup {}/{}", event.pod_group.ns, event.pod_group.name);
    case ScenarioEvent::Kind::kDelete:
      return "delete " + event.target;
    case ScenarioEvent::Kind::kAdvance:
      return fmt::format("advance {}ms", event.advance_ms);
  }
  return "";
}

// Why a pending pod does not fit as the cluster is now: the core's filter over every node, as
// kube-scheduler would report its next attempt (the cluster is settled: the attempt fails).
std::string PendingReason(const ClusterState& state, const NormalizedPod& pod) {
  // Filter mode's group rule first: a member of a starting group waits for its group's need.
  if (const GroupQuotaCheck group = CheckGroupQuota(state, pod);
      group.applies && !group.status.ok()) {
    return group.status.message();
  }
  return SummarizeUnschedulable(FindFeasibleNodes(state, pod));
}

// Checks event `i`'s expectations on `state`; `before` is each pod's node before the event,
// `evicted` the keys the event evicted.
std::vector<std::string> Problems(const ScenarioExpectation& expect, const ClusterState& state,
                                  const std::map<std::string, std::string>& before,
                                  const std::set<std::string>& evicted,
                                  const std::map<std::string, std::string>& gate_reasons,
                                  std::vector<std::string>* checks) {
  std::vector<std::string> problems;
  auto find = [&](const std::string& key) -> const NormalizedPod* {
    const auto slash = key.find('/');
    if (slash == std::string::npos) return nullptr;
    return state.FindPodByName(key.substr(0, slash), key.substr(slash + 1));
  };
  for (const auto& [key, node] : expect.bound) {
    const NormalizedPod* pod = find(key);
    checks->push_back(fmt::format("{} bound to {}", key, node));
    if (pod == nullptr) {
      problems.push_back(fmt::format("{} does not exist", key));
    } else if (node == "*" ? !pod->IsBound() : pod->node_name != node) {
      problems.push_back(fmt::format("{} is {}", key,
                                     pod->node_name.empty()
                                         ? "pending: " + PendingReason(state, *pod)
                                         : "bound to " + pod->node_name));
    }
  }
  for (const auto& key : expect.evicted) {
    checks->push_back(fmt::format("{} evicted", key));
    if (evicted.count(key) == 0) problems.push_back(fmt::format("{} was not evicted", key));
  }
  for (const auto& key : expect.untouched) {
    checks->push_back(fmt::format("{} untouched", key));
    const NormalizedPod* pod = find(key);
    auto was = before.find(key);
    if (evicted.count(key) != 0 || pod == nullptr) {
      problems.push_back(fmt::format("{} was evicted", key));
    } else if (was != before.end() && was->second != pod->node_name) {
      problems.push_back(fmt::format("{} moved from {} to {}", key, was->second, pod->node_name));
    }
  }
  for (const auto& [key, text] : expect.pending) {
    checks->push_back(fmt::format("{} pending ({})", key, text));
    const NormalizedPod* pod = find(key);
    if (pod == nullptr) {
      problems.push_back(fmt::format("{} does not exist", key));
    } else if (pod->IsBound()) {
      problems.push_back(fmt::format("{} is bound to {}", key, pod->node_name));
    } else if (const std::string reason = PendingReason(state, *pod);
               reason.find(text) == std::string::npos) {
      problems.push_back(
          fmt::format("{} pending reason \"{}\" does not contain \"{}\"", key, reason, text));
    }
  }
  for (const auto& [key, text] : expect.gated) {
    checks->push_back(fmt::format("{} gated ({})", key, text));
    const NormalizedPod* pod = find(key);
    auto reason = gate_reasons.find(key);
    const std::string why = reason == gate_reasons.end() ? "" : reason->second;
    if (pod == nullptr) {
      problems.push_back(fmt::format("{} does not exist", key));
    } else if (pod->IsBound()) {
      problems.push_back(fmt::format("{} is bound to {}", key, pod->node_name));
    } else if (!pod->quota_gated || reason == gate_reasons.end()) {
      problems.push_back(
          fmt::format("{} is not gated (pending: {})", key, PendingReason(state, *pod)));
    } else if (why.find(text) == std::string::npos) {
      problems.push_back(
          fmt::format("{} gate reason \"{}\" does not contain \"{}\"", key, why, text));
    }
  }
  return problems;
}

}  // namespace

ScenarioReport RunScenario(const Scenario& scenario, std::ostream& out,
                           const ScenarioProbe& probe) {
  ScenarioReport report;
  const auto* semantics = QuotaSemanticsPolicies().Find(scenario.quota_semantics);
  const auto* scoring = NodeScoringPolicies().Find(scenario.scoring);
  const auto* order = VictimOrderPolicies().Find(scenario.victim_order);
  if (semantics == nullptr || scoring == nullptr || order == nullptr) {
    out << fmt::format(
        "FAIL {}: unknown quotaSemantics (expected {}), scoring (expected {}) or victimOrder "
        "(expected {})\n",
        scenario.name, QuotaSemanticsPolicies().NamesText(), NodeScoringPolicies().NamesText(),
        VictimOrderPolicies().NamesText());
    ++report.failed;
    return report;
  }
  SimulationInput input;
  input.script = ScriptOf(scenario, &input.background);
  input.nodes = input.background.nodes;
  // Store key -> namespace/name of every pod the scenario names (evicted pods leave the state).
  std::map<std::string, std::string> key_of;
  for (const auto& pod : scenario.cluster.pods)
    key_of[StoreKey(pod)] = pod.Key();
  for (const auto& event : scenario.events) {
    for (const Pod& pod : event.pods)
      key_of[StoreKey(pod)] = pod.Key();
  }

  SimulationOptions options;
  options.cluster_quotas = semantics->make();
  options.device_class_mappings = scenario.device_class_mappings;
  options.scoring = scenario.scoring;
  options.victim_order = scenario.victim_order;
  options.sampling = NodeSampling::kAll;
  options.reclaim_at_once = true;
  options.admission =
      scenario.admission == ScenarioAdmission::kGate ? SimAdmission::kGang : SimAdmission::kPod;
  options.recreate_evicted = scenario.recreate_evicted;
  options.reclaim_interval_ms = 0;
  options.until_ms = input.script.back().t_ms;
  std::set<std::string> evicted;                    // by the step being played
  std::map<std::string, std::string> gate_reasons;  // pod key -> why its gate stays on
  options.observer = [&](const char* event, const std::string& pod, const std::string& detail,
                         int64_t) {
    auto it = key_of.find(pod);
    const std::string key = it != key_of.end() ? it->second : pod;
    if (std::string_view(event) == "evict") evicted.insert(key);
    if (std::string_view(event) == "create") key_of[pod] = pod;  // a controller's replacement
    if (std::string_view(event) == "gated") gate_reasons[key] = detail;
  };
  std::map<std::string, std::string> before;  // pod key -> node, after the previous step
  options.after_step = [&](std::size_t step, const ClusterState& state) {
    if (step > 0) {
      const std::size_t i = step - 1;
      if (probe) probe(i, state);
      if (auto it = scenario.expect.find(static_cast<int>(i)); it != scenario.expect.end()) {
        std::vector<std::string> checks;
        const std::vector<std::string> problems =
            Problems(it->second, state, before, evicted, gate_reasons, &checks);
        std::string summary;
        for (const auto& c : checks)
          summary += (summary.empty() ? "" : ", ") + c;
        const std::string what = EventText(scenario.events[i]);
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
    }
    evicted.clear();
    before.clear();
    for (const auto& [uid, pod] : state.pods())
      before[pod.Key()] = pod.node_name;
  };
  SimulationResult result;
  if (Status s = RunSimulation(input, options, &result); !s.ok()) {
    out << fmt::format("FAIL {}: {}\n", scenario.name, s.message());
    ++report.failed;
  }
  report.evictions = result.evictions;
  report.gang_plans = result.gang_plans;
  report.gang_plan_victims = result.gang_plan_victims;
  report.wasted_evictions = result.wasted_evictions;
  return report;
}

}  // namespace capext
