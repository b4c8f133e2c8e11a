// Pod: what scheduling decisions need to know about a v1 Pod, as decoded from the wire or a file
// (a "raw" pod). NormalizedPod: the same pod once normalised on entry (PodNormalizer), the only
// form any decision accepts: priority and preemption policy resolved from spec.priority or the
// PriorityClass, the request as its quota counts it (pods: 1, GPU-model mapping, the quota
// semantics), and the key it is filed under. A raw wire pod cannot reach a decision: decision
// functions take `const NormalizedPod&`, which only the normaliser makes.
// Thread-safety: value types.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/boxed_string.h"
#include "core/device_claim.h"
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

// The group a pod names (docs/workloads.md#1-groups): the coscheduling label
// `scheduling.x-k8s.io/pod-group` (api_group "scheduling.x-k8s.io", name = the label's value), or
// the upstream Workload API's `spec.workloadRef` (api_group "scheduling.k8s.io", name = the
// Workload's name, pod_group and replica_key from the reference). An empty name: no group.
struct GroupRef {
  std::string api_group;
  std::string name;
  std::string pod_group;    // Workload API only: spec.workloadRef.podGroup
  std::string replica_key;  // Workload API only: spec.workloadRef.podGroupReplicaKey
  bool empty() const { return name.empty(); }
  bool operator==(const GroupRef&) const = default;
};

// A pod's GroupRef as the Pod stores it: a shared pointer to an immutable GroupRef, null when all
// four fields are empty. Why: a Pod is stored for every tracked pod (the aim: under 1 KiB of heap
// per tracked pod), most pods name no group, and a GroupRef in place costs 128 bytes in every one
// of them; this costs 16, plus one allocation per pod that names a group. Copies share the
// GroupRef; it never changes once made (assigning a GroupRef replaces it, never edits it). Read
// as a GroupRef: `*`, `->` and the conversion give an empty GroupRef when null. Equality compares
// the GroupRefs field by field, as GroupRef's does. Thread-safety: a value type.
class SharedGroupRef {
 public:
  SharedGroupRef() = default;
  // Implicit: `pod.group = GroupRef{...}` replaces the pod's group.
  SharedGroupRef(GroupRef ref)  // NOLINT: stands for the GroupRef it holds
      : ref_(IsBlank(ref) ? nullptr : std::make_shared<const GroupRef>(std::move(ref))) {}

  const GroupRef& operator*() const { return ref_ ? *ref_ : NoGroup(); }
  const GroupRef* operator->() const { return &**this; }
  // `pod.group` passes as a `const GroupRef&`.
  operator const GroupRef&() const { return **this; }  // NOLINT: reads as the GroupRef it holds

  // GroupRef::empty(): the pod names no group (an empty name).
  bool empty() const { return ref_ == nullptr || ref_->name.empty(); }

  bool operator==(const SharedGroupRef& other) const {
    return ref_ == other.ref_ || **this == *other;
  }
  bool operator==(const GroupRef& other) const { return **this == other; }

 private:
  static bool IsBlank(const GroupRef& ref) {
    return ref.api_group.empty() && ref.name.empty() && ref.pod_group.empty() &&
           ref.replica_key.empty();
  }
  static const GroupRef& NoGroup() {
    static const GroupRef kNoGroup;
    return kNoGroup;
  }

  std::shared_ptr<const GroupRef> ref_;  // null: every field empty
};

// The names the workload fields are read from (docs/workloads.md).
inline constexpr const char* kPodGroupLabel = "scheduling.x-k8s.io/pod-group";
inline constexpr const char* kCoschedulingApiGroup = "scheduling.x-k8s.io";
inline constexpr const char* kWorkloadApiGroup = "scheduling.k8s.io";
inline constexpr const char* kMinMemberAnnotation = "scheduling.capacity-extender.io/min-member";
inline constexpr const char* kAdmittedAtAnnotation = "scheduling.capacity-extender.io/admitted-at";
inline constexpr const char* kQuotaGate = "scheduling.capacity-extender.io/quota";

// What a write to the pod needs of it besides its name, so that gate mode's gate removal is one
// patch with no read first (docs/workloads-live.md#the-gate-removal). No decision reads it
// (SameForDecisions ignores it); the patch `test`s resource_version, so a stale value only costs a
// read, never a wrong write.
struct PodPatchBasis {
  std::string resource_version;   // metadata.resourceVersion; "" = unknown
  int32_t quota_gate_index = -1;  // position of our gate in spec.schedulingGates; -1 = none
  bool has_annotations = false;   // metadata.annotations is present (an object, maybe empty)
  bool operator==(const PodPatchBasis&) const = default;
};

// The members victim selection reads for every pod of a node come first, together on the first
// cache lines (it walks thousands of pods per /preempt).
struct Pod {
  std::string ns;
  // The effective request as kube-scheduler computes it for node fit (EffectivePodRequest).
  ResourceList requests;
  // Resolved by normalisation from spec.priority / the priority classes; 0 and
  // PreemptLowerPriority in a raw pod.
  int32_t priority = 0;
  PreemptionPolicy preemption_policy = PreemptionPolicy::kPreemptLowerPriority;
  int64_t creation_ms = 0;  // metadata.creationTimestamp, Unix milliseconds; 0 = unknown
  int64_t start_ms = 0;     // status.startTime, Unix milliseconds; 0 = not started
  // When a /bind reservation placed this (pending) pod on a node, Unix milliseconds; 0 = not
  // reserved on a node. Set only by ClusterState, from the reservation (never from the wire).
  int64_t reserved_ms = 0;
  // The value of the configured accelerator-model annotation, if any
  // (docs/capacity-semantics.md#9-gpu-model-quotas-and-object-counts).
  BoxedString accelerator_model;
  std::string uid;
  std::string name;
  std::string node_name;            // spec.nodeName: bound when non-empty
  BoxedString nominated_node_name;  // status.nominatedNodeName
  // The reclaim recorded on this pending pod by the reclaim controller of whichever replica acts
  // (annotation scheduling.capacity-extender.io/reclaim, "<node>@<time>";
  // docs/capacity-semantics.md#8-the-reclaim-controller);
  // "" when none. Dropped once the pod is bound or terminal.
  BoxedString reclaim_record;
  PodPhase phase = PodPhase::kPending;
  bool terminating = false;              // metadata.deletionTimestamp set
  bool unschedulable_condition = false;  // PodScheduled=False, reason Unschedulable

  std::optional<int32_t> spec_priority;  // spec.priority as admitted
  std::optional<PreemptionPolicy> spec_preemption_policy;
  BoxedString priority_class_name;
  BoxedString scheduler_name;

  Labels labels;

  // Workloads (docs/workloads.md). The group the pod belongs to; empty name = none.
  SharedGroupRef group;
  // The annotation scheduling.capacity-extender.io/min-member as a positive integer; 0 when
  // absent or not a positive integer (then it is ignored, as docs/workloads.md says).
  int32_t min_member_annotation = 0;
  // spec.schedulingGates holds our gate (scheduling.capacity-extender.io/quota) / any other.
  bool quota_gated = false;
  bool other_gates = false;
  // The annotation scheduling.capacity-extender.io/admitted-at (RFC 3339) in Unix milliseconds;
  // 0 when absent or unparsable. An ungated, unbound, non-terminal pod carrying it holds quota.
  int64_t admitted_ms = 0;
  // metadata.ownerReferences has an entry with controller: true (a controller re-creates it).
  bool has_controller = false;
  // For the gate removal's patch; not for decisions.
  PodPatchBasis patch_basis;

  // Scheduling constraints: read only while the pod is pending (ClusterState drops them, and
  // scheduler_name, once the pod is bound or terminal).
  Labels node_selector;
  std::vector<Toleration> tolerations;
  // Required node affinity terms (ORed). Empty = no required affinity.
  std::vector<NodeSelectorTerm> required_affinity;
  // spec.resourceClaims joined with status.resourceClaimStatuses
  // (docs/devices.md#2-which-claims-a-pod-charges).
  std::vector<PodClaimRef> resource_claims;

  bool IsBound() const { return !node_name.empty(); }
  bool IsTerminal() const { return phase == PodPhase::kSucceeded || phase == PodPhase::kFailed; }
  // Any scheduling gate: the pod is not pending for scheduling (docs/workloads.md#member-states):
  // never in PendingPods, never a preemptor, never a victim, never in used.
  bool IsGated() const { return quota_gated || other_gates; }
  // "namespace/name" (Kubernetes' namespace key), for messages.
  std::string Key() const { return ns + "/" + name; }
};

// The key a pod is filed under in the cluster state: its uid, else "namespace/name" (pods of
// snapshots and tests may lack a uid; API objects never do).
inline std::string StoreKeyOf(const Pod& pod) {
  return pod.uid.empty() ? pod.Key() : pod.uid;
}

// A Pod after normalisation (see the file comment). Made only by PodNormalizer; read as a Pod.
class NormalizedPod : public Pod {
 public:
  NormalizedPod(const NormalizedPod& other)
      : Pod(other),
        fallback_key_(other.fallback_key_ ? std::make_unique<std::string>(*other.fallback_key_)
                                          : nullptr),
        quota_request_(other.quota_request_),
        devices_(other.devices_) {}
  NormalizedPod& operator=(const NormalizedPod& other) {
    if (this != &other) *this = NormalizedPod(other);
    return *this;
  }
  NormalizedPod(NormalizedPod&&) noexcept = default;
  NormalizedPod& operator=(NormalizedPod&&) noexcept = default;

  // StoreKeyOf(*this), without a copy.
  const std::string& store_key() const { return uid.empty() ? *fallback_key_ : uid; }
  // What the pod adds to its quota's usage (QuotaRequestOf under the state's semantics).
  const ResourceList& quota_request() const { return quota_request_; }
  // How its ResourceClaims were counted into quota_request() (docs/devices.md), or nullptr for a
  // pod that names none. Shared between copies: it never changes once made.
  const DeviceDemand* device_demand() const { return devices_.get(); }
  // Why the pod's devices cannot be counted
  // (docs/devices.md#7-bad-input-the-pod-waits-never-admitted-uncounted); empty when they can.
  const std::string& device_problem() const {
    static const std::string kNone;
    return devices_ ? devices_->problem : kNone;
  }

  // Gives the pod another identity, keeping everything normalisation derived from the rest (a
  // simulator stamps one normalised prototype per pod of a group of identical pods).
  void SetIdentity(std::string new_uid, std::string new_name, int64_t new_creation_ms) {
    uid = std::move(new_uid);
    name = std::move(new_name);
    creation_ms = new_creation_ms;
    fallback_key_ = uid.empty() ? std::make_unique<std::string>(Key()) : nullptr;
  }

 private:
  friend class PodNormalizer;
  explicit NormalizedPod(Pod&& raw) : Pod(std::move(raw)) {}

  // "namespace/name" for a pod without a uid (rare: snapshots and tests), else null; a pointer
  // keeps every other pod 24 bytes smaller.
  std::unique_ptr<std::string> fallback_key_;
  ResourceList quota_request_;
  std::shared_ptr<const DeviceDemand> devices_;
};

// The start time used to order pods of equal priority
// (docs/capacity-semantics.md#4-victims-on-one-node, "Order"): status.startTime; for a pod reserved
// on a node by an in-flight /bind (it has none yet), the reservation time, so that it is the pod
// bound to that node at that moment; else the creation time. The one definition for bound and
// reserved pods alike.
inline int64_t EffectiveStartMs(const Pod& pod) {
  if (pod.start_ms != 0) return pod.start_ms;
  return pod.reserved_ms != 0 ? pod.reserved_ms : pod.creation_ms;
}

// kube-scheduler's MoreImportantPod: higher priority first; on a tie the earlier start wins.
inline bool MoreImportantPod(const Pod& a, const Pod& b) {
  if (a.priority != b.priority) return a.priority > b.priority;
  return EffectiveStartMs(a) < EffectiveStartMs(b);
}

}  // namespace capext
