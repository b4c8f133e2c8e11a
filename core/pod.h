// Pod: what scheduling decisions need to know about a v1 Pod.
// Thread-safety: a value type.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/label_selector.h"
#include "core/resource_list.h"

namespace capext {

enum class PodPhase { kPending, kRunning, kSucceeded, kFailed, kUnknown };

enum class PreemptionPolicy { kPreemptLowerPriority, kNever };

struct Toleration {
  std::string key;
  std::string op;  // "Equal" (also when empty) or "Exists"
  std::string value;
  std::string effect;  // empty = every effect
};

struct NodeSelectorRequirement {
  std::string key;
  std::string op;  // In, NotIn, Exists, DoesNotExist, Gt, Lt
  std::vector<std::string> values;
};

// One nodeSelectorTerm: every expression and every field requirement must hold.
struct NodeSelectorTerm {
  std::vector<NodeSelectorRequirement> match_expressions;
  std::vector<NodeSelectorRequirement> match_fields;  // only metadata.name is defined
};

// The members victim selection reads for every pod of a node come first, together on the first
// cache lines (it walks thousands of pods per /preempt).
struct Pod {
  std::string ns;
  // The effective request as kube-scheduler computes it for node fit (EffectivePodRequest).
  ResourceList requests;
  // Resolved by ClusterState from spec.priority / the priority classes (see ResolvePriority).
  int32_t priority = 0;
  PreemptionPolicy preemption_policy = PreemptionPolicy::kPreemptLowerPriority;
  int64_t creation_ms = 0;  // metadata.creationTimestamp, Unix milliseconds; 0 = unknown
  int64_t start_ms = 0;     // status.startTime, Unix milliseconds; 0 = not started
  // The value of the configured accelerator-model annotation (capacity-semantics 5), if any.
  std::string accelerator_model;
  std::string uid;
  std::string name;
  std::string node_name;            // spec.nodeName: bound when non-empty
  std::string nominated_node_name;  // status.nominatedNodeName
  PodPhase phase = PodPhase::kPending;
  bool terminating = false;              // metadata.deletionTimestamp set
  bool unschedulable_condition = false;  // PodScheduled=False, reason Unschedulable

  std::optional<int32_t> spec_priority;  // spec.priority as admitted
  std::optional<PreemptionPolicy> spec_preemption_policy;
  std::string priority_class_name;
  std::string scheduler_name;

  Labels labels;
  // Scheduling constraints: read only while the pod is pending (ClusterState drops them, and
  // scheduler_name, once the pod is bound or terminal).
  Labels node_selector;
  std::vector<Toleration> tolerations;
  // Required node affinity terms (ORed). Empty = no required affinity.
  std::vector<NodeSelectorTerm> required_affinity;

  bool IsBound() const { return !node_name.empty(); }
  bool IsTerminal() const { return phase == PodPhase::kSucceeded || phase == PodPhase::kFailed; }
  std::string Key() const { return ns + "/" + name; }
};

// The start time used to order pods of equal priority: status.startTime, else creation time.
inline int64_t EffectiveStartMs(const Pod& pod) {
  return pod.start_ms != 0 ? pod.start_ms : pod.creation_ms;
}

// kube-scheduler's MoreImportantPod: higher priority first; on a tie the earlier start wins.
inline bool MoreImportantPod(const Pod& a, const Pod& b) {
  if (a.priority != b.priority) return a.priority > b.priority;
  return EffectiveStartMs(a) < EffectiveStartMs(b);
}

}  // namespace capext
