#include "tests/support/random_changes.h"

#include <rapidjson/document.h>

#include <algorithm>
#include <cstdlib>
#include <iostream>

#include <fmt/format.h>

namespace capext::testing {
namespace {

// Decodes a generated object of any kind; a generator bug aborts the test run loudly.
KubeObject Decode(const JsonTree& object, const DecodeOptions& options) {
  rapidjson::Document doc;
  const std::string json = object.ToJson();
  doc.Parse(json.c_str());
  KubeObject out;
  bool skipped = false;
  std::string kind;
  const Status s = DecodeKubeObject(doc, options, "", &out, &skipped, &kind);
  if (!s.ok() || skipped) {
    std::cerr << "generated object does not decode: " << s.message() << "\n" << json << "\n";
    std::abort();
  }
  return out;
}

}  // namespace

Pod DecodeGeneratedPod(const JsonTree& pod, const DecodeOptions& options) {
  return std::get<Pod>(Decode(pod, options));
}

void BuildDenseState(RandomCluster& generator, const ClusterCase& c, ClusterState* out) {
  if (Status s = BuildState(c, out); !s.ok()) {
    std::cerr << "generated case does not decode: " << s.message() << "\n";
    std::abort();
  }
  SeededRandom& rng = generator.rng();
  std::vector<ResourceName> dims;
  if (rng.Chance(65)) dims.push_back(ResourceName::Of("nvidia.com/gpu"));
  if (rng.Chance(40)) dims.push_back(kEphemeralStorageName);
  if (rng.Chance(15)) dims.push_back(kPodsName);
  out->EnableDenseNodes(std::move(dims));
}

NormalizedPod QuestionFor(RandomCluster& generator, const ClusterState& state,
                          const DecodeOptions& options) {
  SeededRandom& rng = generator.rng();
  if (rng.Chance(30)) {
    std::vector<std::string> pending;
    for (const auto& [key, pod] : state.pods()) {
      if (!pod.IsBound() && !pod.IsTerminal() && state.FindReservation(key) == nullptr)
        pending.emplace_back(key);
    }
    std::sort(pending.begin(), pending.end());
    if (!pending.empty()) return *state.FindPod(rng.Pick(pending));
  }
  std::string node = "gone-node";
  if (!state.nodes().empty()) {
    auto it = state.nodes().begin();
    std::advance(it, rng.Below(static_cast<int>(state.nodes().size())));
    node = it->first;
  }
  JsonTree pod =
      generator.NewPod(generator.AnyNamespace(),
                       rng.Chance(10) ? PodLifecycle::kNominated : PodLifecycle::kPending, node);
  if (rng.Chance(60)) {
    pod["spec"]["priority"] = rng.Pick({500, 1000, 100000});
    pod["spec"]["preemptionPolicy"] = "PreemptLowerPriority";
  }
  return state.Normalize(DecodeGeneratedPod(pod, options));
}

template <typename Keep>
std::vector<std::string> RandomChanges::PodKeys(const ClusterState& state, Keep keep) const {
  std::vector<std::string> keys;
  for (const auto& [key, pod] : state.pods()) {
    if (keep(pod)) keys.emplace_back(key);
  }
  std::sort(keys.begin(), keys.end());
  return keys;
}

std::string RandomChanges::AnyNode(const ClusterState& state) {
  SeededRandom& rng = gen_->rng();
  if (state.nodes().empty() || rng.Chance(5)) return "gone-node";
  auto it = state.nodes().begin();
  std::advance(it, rng.Below(static_cast<int>(state.nodes().size())));
  return it->first;
}

std::string RandomChanges::Apply(ClusterState* state) {
  SeededRandom& rng = gen_->rng();
  now_ms_ += 1000;
  auto pending = [&](const NormalizedPod& p) { return !p.IsBound() && !p.IsTerminal(); };
  auto bound = [&](const NormalizedPod& p) { return p.IsBound() && !p.IsTerminal(); };
  const int change = rng.Below(17);
  switch (change) {
    case 0:
    case 1: {  // a pending pod is bound (as EmbeddedBinder or the watch shows it)
      const auto keys = PodKeys(*state, pending);
      if (keys.empty()) break;
      const std::string& key = rng.Pick(keys);
      NormalizedPod p = *state->FindPod(key);
      p.node_name = AnyNode(*state);
      p.phase = PodPhase::kRunning;
      p.start_ms = now_ms_;
      p.nominated_node_name.clear();
      state->UpsertPod(std::move(p));
      return "bind " + key;
    }
    case 2: {
      const auto keys = PodKeys(*state, [](const NormalizedPod&) { return true; });
      if (keys.empty()) break;
      const std::string key = rng.Pick(keys);
      state->DeletePod(key);
      return "delete pod " + key;
    }
    case 3: {  // a bound pod finishes, or starts terminating
      const auto keys = PodKeys(*state, bound);
      if (keys.empty()) break;
      const std::string& key = rng.Pick(keys);
      Pod p = *state->FindPod(key);
      const bool finish = rng.Chance(50);
      if (finish) {
        p.phase = rng.Chance(50) ? PodPhase::kSucceeded : PodPhase::kFailed;
      } else {
        p.terminating = true;
      }
      state->UpsertPod(std::move(p));
      return (finish ? "finish " : "terminating ") + key;
    }
    case 4:
    case 5: {  // a new pod, pending or bound
      const bool is_bound = rng.Chance(50);
      const JsonTree pod =
          gen_->NewPod(gen_->AnyNamespace(),
                       is_bound ? PodLifecycle::kRunning
                                : rng.Pick({PodLifecycle::kPending, PodLifecycle::kNominated}),
                       AnyNode(*state));
      Pod p = DecodeGeneratedPod(pod, options_);
      const std::string what = fmt::format("new pod {} on [{}]", p.Key(), p.node_name);
      state->UpsertPod(std::move(p));
      return what;
    }
    case 6: {  // /bind reserves, or a reservation ends
      if (!state->reservations().empty() && rng.Chance(40)) {
        std::vector<std::string> keys;
        for (const auto& [key, r] : state->reservations())
          keys.push_back(key);
        std::sort(keys.begin(), keys.end());
        const std::string key = rng.Pick(keys);
        state->ReleaseReservation(key);
        return "release reservation " + key;
      }
      const auto keys = PodKeys(*state, pending);
      if (keys.empty()) break;
      const std::string& key = rng.Pick(keys);
      const std::string node = AnyNode(*state);
      state->Reserve(key, node, now_ms_, now_ms_ + 1000 * rng.Between(1, 20));
      return fmt::format("reserve {} on {}", key, node);
    }
    case 7: {  // our reclaim nominates, or a nomination ends
      const auto keys = PodKeys(*state, pending);
      if (keys.empty()) break;
      const std::string& key = rng.Pick(keys);
      if (state->FindOurNomination(key) != nullptr && rng.Chance(50)) {
        state->ReleaseNomination(key);
        return "release nomination " + key;
      }
      const std::string node = AnyNode(*state);
      state->Nominate(key, node, now_ms_ + 1000 * rng.Between(1, 20));
      return fmt::format("nominate {} on {}", key, node);
    }
    case 8: {  // kube-scheduler's preemption sets (or clears) status.nominatedNodeName
      const auto keys = PodKeys(*state, pending);
      if (keys.empty()) break;
      const std::string& key = rng.Pick(keys);
      Pod p = *state->FindPod(key);
      p.nominated_node_name = rng.Chance(25) ? "" : AnyNode(*state);
      const std::string what =
          fmt::format("status nomination of {} -> [{}]", key, p.nominated_node_name);
      state->UpsertPod(std::move(p));
      return what;
    }
    case 9:
    case 10: {  // a node changes (allocatable, labels, taints), appears or goes
      const int kind = rng.Below(10);
      if (kind < 6 && !state->nodes().empty()) {
        const std::string name = AnyNode(*state);
        if (name == "gone-node") break;
        state->UpsertNode(std::get<Node>(Decode(gen_->NewNode(name), options_)));
        return "update node " + name;
      }
      if (kind < 8) {
        const std::string name = "m" + std::to_string(++nodes_added_);
        state->UpsertNode(std::get<Node>(Decode(gen_->NewNode(name), options_)));
        return "add node " + name;
      }
      if (state->nodes().size() <= 1) break;
      const std::string name = AnyNode(*state);
      state->DeleteNode(name);
      return "delete node " + name;
    }
    case 11: {  // a PriorityClass changes value (re-resolving pods' priorities) or goes
      const std::string name = rng.Pick<std::string>({"batch", "service", "default-a", "missing"});
      if (rng.Chance(25)) {
        state->DeletePriorityClass(name);
        return "delete class " + name;
      }
      PriorityClass pc;
      pc.name = name;
      pc.value = rng.Pick({0, 50, 100, 700, 1000, 5000});
      pc.global_default = name == "default-a";
      state->UpsertPriorityClass(pc);
      return fmt::format("class {} = {}", name, pc.value);
    }
    case 12: {  // a quota changes (sometimes its parent too) or goes
      if (gen_->quota_plans().empty()) break;
      const std::string ns = rng.Pick(gen_->quota_plans()).ns;
      if (rng.Chance(20)) {
        if (const ElasticQuota* q = state->QuotaFor(ns)) {
          const std::string name = q->name;
          state->DeleteQuota(ns, name);
          return "delete quota " + ns + "/" + name;
        }
        break;
      }
      const auto quota = std::get<ElasticQuota>(Decode(gen_->ChangedQuota(ns), options_));
      state->UpsertQuota(quota);
      return fmt::format("update quota {} (parent '{}')", quota.Key(), quota.parent);
    }
    case 13: {
      const std::vector<std::string> expired = state->Expire(now_ms_);
      return fmt::format("expire at {}: {} held", now_ms_, expired.size());
    }
    case 14: {  // a PDB (its status changes with evictions)
      PodDisruptionBudget pdb;
      pdb.ns = gen_->AnyNamespace();
      pdb.name = "pdb-change";
      LabelSelector selector;
      selector.match_labels["app"] = rng.Pick<std::string>({"a", "b"});
      pdb.selector = selector;
      pdb.disruptions_allowed = rng.Between(0, 2);
      state->UpsertPdb(pdb);
      return "pdb in " + pdb.ns;
    }
    default: {  // the same pod seen again (a watch resync): nothing may change
      const auto keys = PodKeys(*state, [](const NormalizedPod&) { return true; });
      if (keys.empty()) break;
      const std::string& key = rng.Pick(keys);
      state->UpsertPod(NormalizedPod(*state->FindPod(key)));
      return "resync " + key;
    }
  }
  return "nothing";
}

}  // namespace capext::testing
