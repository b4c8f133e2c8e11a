// Builders for the core model, shared by the unit tests (header-only).
//   Pod p = MakePod("eq1", "job-a").Cpu(2000).Priority(10).BoundTo("n1");
//   Node n = MakeNode("n1", /*cpu_milli=*/8000);
//   ElasticQuota q = MakeQuota("eq1", ResourceList{{"cpu", 6000}}, ResourceList{{"cpu", 10000}});
// Amounts are decision units (cpu in milli-units, everything else whole units).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/cluster_state.h"
#include "core/elastic_quota.h"
#include "core/node.h"
#include "core/pod.h"
#include "core/pod_normalizer.h"
#include "core/priority_class.h"
#include "core/resource_list.h"

namespace capext::testing {

inline constexpr int64_t kGi = int64_t{1} << 30;

class PodBuilder {
 public:
  PodBuilder(std::string ns, std::string name) {
    pod_.ns = std::move(ns);
    pod_.name = std::move(name);
    pod_.uid = "uid-" + pod_.ns + "-" + pod_.name;
  }

  PodBuilder& Uid(std::string uid) {
    pod_.uid = std::move(uid);
    return *this;
  }
  PodBuilder& Cpu(int64_t milli) { return Request("cpu", milli); }
  PodBuilder& Memory(int64_t bytes) { return Request("memory", bytes); }
  PodBuilder& Request(const std::string& resource, int64_t amount) {
    pod_.requests.Set(resource, amount);
    return *this;
  }
  PodBuilder& Requests(ResourceList requests) {
    pod_.requests = std::move(requests);
    return *this;
  }
  // spec.priority (what admission wrote); ClusterState resolves pod.priority from it.
  PodBuilder& Priority(int32_t priority) {
    pod_.spec_priority = priority;
    pod_.priority = priority;
    return *this;
  }
  PodBuilder& PriorityClassName(std::string name) {
    pod_.priority_class_name = std::move(name);
    return *this;
  }
  PodBuilder& PreemptionNever() {
    pod_.spec_preemption_policy = PreemptionPolicy::kNever;
    pod_.preemption_policy = PreemptionPolicy::kNever;
    return *this;
  }
  PodBuilder& BoundTo(std::string node) {
    pod_.node_name = std::move(node);
    pod_.phase = PodPhase::kRunning;
    return *this;
  }
  PodBuilder& NominatedTo(std::string node) {
    pod_.nominated_node_name = std::move(node);
    return *this;
  }
  PodBuilder& Phase(PodPhase phase) {
    pod_.phase = phase;
    return *this;
  }
  PodBuilder& Terminating() {
    pod_.terminating = true;
    return *this;
  }
  PodBuilder& Created(int64_t ms) {
    pod_.creation_ms = ms;
    return *this;
  }
  PodBuilder& Started(int64_t ms) {
    pod_.start_ms = ms;
    return *this;
  }
  PodBuilder& Label(std::string key, std::string value) {
    pod_.labels[std::move(key)] = std::move(value);
    return *this;
  }
  PodBuilder& NodeSelector(std::string key, std::string value) {
    pod_.node_selector[std::move(key)] = std::move(value);
    return *this;
  }
  PodBuilder& Tolerate(Toleration toleration) {
    pod_.tolerations.push_back(std::move(toleration));
    return *this;
  }
  PodBuilder& AffinityTerm(NodeSelectorTerm term) {
    pod_.required_affinity.push_back(std::move(term));
    return *this;
  }
  PodBuilder& AcceleratorModel(std::string model) {
    pod_.accelerator_model = std::move(model);
    return *this;
  }

  // spec.resourceClaims: a claim named directly (docs/devices.md#2-which-claims-a-pod-charges).
  PodBuilder& Claim(std::string entry, std::string claim) {
    pod_.resource_claims.push_back(PodClaimRef{std::move(entry), std::move(claim), "", false});
    return *this;
  }
  // A claim from a template; `generated`: the claim's name in status.resourceClaimStatuses
  // (empty: not created yet).
  PodBuilder& ClaimFromTemplate(std::string entry, std::string tmpl, std::string generated = "") {
    pod_.resource_claims.push_back(
        PodClaimRef{std::move(entry), std::move(generated), std::move(tmpl), false});
    return *this;
  }

  Pod Build() const { return pod_; }
  operator Pod() const { return pod_; }  // NOLINT(google-explicit-constructor): builder sugar

 private:
  Pod pod_;
};

inline PodBuilder MakePod(std::string ns, std::string name) {
  return PodBuilder(std::move(ns), std::move(name));
}

inline Node MakeNode(std::string name, int64_t cpu_milli, int64_t memory = 64 * kGi,
                     std::optional<int64_t> max_pods = 110) {
  Node node;
  node.name = std::move(name);
  node.allocatable.Set("cpu", cpu_milli);
  node.allocatable.Set("memory", memory);
  if (max_pods) node.allocatable.Set("pods", *max_pods);
  node.labels["kubernetes.io/hostname"] = node.name;
  return node;
}

// A quota named after its namespace (as in the seed scenarios).
inline ElasticQuota MakeQuota(std::string ns, std::optional<ResourceList> min,
                              std::optional<ResourceList> max) {
  ElasticQuota quota;
  quota.ns = ns;
  quota.name = std::move(ns);
  quota.api_group = "scheduling.x-k8s.io";
  quota.min = std::move(min);
  quota.max = std::move(max);
  return quota;
}

inline ResourceList CpuList(int64_t milli) {
  return ResourceList{{"cpu", milli}};
}

inline PriorityClass MakePriorityClass(
    std::string name, int32_t value, bool global_default = false,
    PreemptionPolicy policy = PreemptionPolicy::kPreemptLowerPriority) {
  PriorityClass pc;
  pc.name = std::move(name);
  pc.value = value;
  pc.global_default = global_default;
  pc.preemption_policy = policy;
  return pc;
}

inline PodDisruptionBudget MakePdb(std::string ns, std::string name, Labels match_labels,
                                   int32_t disruptions_allowed) {
  PodDisruptionBudget pdb;
  pdb.ns = std::move(ns);
  pdb.name = std::move(name);
  LabelSelector selector;
  selector.match_labels = std::move(match_labels);
  pdb.selector = std::move(selector);
  pdb.disruptions_allowed = disruptions_allowed;
  return pdb;
}

inline NodeSelectorRequirement Requirement(std::string key, std::string op,
                                           std::vector<std::string> values = {}) {
  return NodeSelectorRequirement{std::move(key), std::move(op), std::move(values)};
}

inline NodeSelectorTerm ExpressionsTerm(std::vector<NodeSelectorRequirement> expressions) {
  NodeSelectorTerm term;
  term.match_expressions = std::move(expressions);
  return term;
}

// The key under which ClusterState files a pod.
inline std::string UidOf(const Pod& pod) {
  return StoreKeyOf(pod);
}

// Names of `pods`, in order ("ns/name").
template <typename PodT>
std::vector<std::string> KeysOf(const std::vector<const PodT*>& pods) {
  std::vector<std::string> out;
  for (const PodT* pod : pods)
    out.push_back(pod->Key());
  return out;
}

// `pod` normalised on its own (no PriorityClasses: spec.priority or 0), for tests that need
// NormalizedPod objects outside a ClusterState.
inline NormalizedPod Normalized(Pod pod,
                                QuotaSemantics semantics = QuotaSemantics::kCapacityExtender) {
  return PodNormalizer(semantics).Normalize(std::move(pod));
}

}  // namespace capext::testing
