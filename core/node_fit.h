// NodeFit: does a pod fit a node, as kube-scheduler's in-tree filters decide it?
//  - static checks (never helped by preemption, so unresolvable): spec.unschedulable, taints with
//    effect NoSchedule/NoExecute not tolerated, nodeSelector, required node affinity;
//  - resources: for every resource the pod requests (amount > 0), allocatable minus what is
//    already requested on the node (every non-terminal pod, quota-managed or not, reservations,
//    and nominations held for other pods of priority >= the pod's) must cover it; the pod count
//    must stay within allocatable "pods" (absent = unlimited). A request larger than the whole
//    allocatable is unresolvable.
// Each failure carries kube-scheduler's wording (see reasons.h).
// Thread-safety: pure functions.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "core/cluster_state.h"
#include "core/declared_changes.h"
#include "core/status.h"

namespace capext {

// What node fit reads (docs/architecture.md#declared-changes-and-wake-rules): a node's spec and
// what holds room on it (kChangesOnOneNode when the verdict is about one node).
inline constexpr DeclaredChanges kNodeFitChanges = kChangesOnAnyNode;

bool ToleratesTaint(const Toleration& toleration, const Taint& taint);

// The result of a node check: ok, or Unschedulable / UnschedulableAndUnresolvable (when any
// failed check is unresolvable) with every failed check's reason joined by ", ".
// Taints, unschedulable, nodeSelector and required node affinity.
Status CheckNodeStatic(const Pod& pod, const Node& node);

// Resources and pod count against `requested` / `pod_count` already on the node.
Status CheckNodeResources(const Pod& pod, const Node& node, const ResourceList& requested,
                          int32_t pod_count);

// The nominations on `node` that hold room against `pod` (other pods, priority >= pod's).
void AddNominationsAgainst(const ClusterState& state, const NormalizedPod& pod,
                           std::string_view node, ResourceList* requested, int32_t* pod_count);

// Both, against the state's usage and nominations.
Status CheckNodeFit(const ClusterState& state, const NormalizedPod& pod, const NodeInfo& node);

// CheckNodeFit for one pod on many nodes, at the cost of a few comparisons per node: a node is
// decided from its NodeFitSummary when neither the pod (nodeSelector, required affinity,
// resources other than cpu/memory/ephemeral-storage) nor the node (taints, unschedulable,
// nominations) needs more, and by CheckNodeFit itself otherwise. Same results as CheckNodeFit.
// Thread-safety: as CheckNodeFit; valid while the state and the pod are not modified.
class NodeFitScreen {
 public:
  // Keeps references to both: they must outlive the screen (a temporary pod cannot).
  NodeFitScreen(const ClusterState& state, const NormalizedPod& pod);
  NodeFitScreen(const ClusterState& state, NormalizedPod&& pod) = delete;

  // True when CheckNodeFit(state, pod, record) passes. REQUIRES: record.node != nullptr.
  bool Fits(const NodeRecord& record) const {
    const NodeFitSummary& fit = record.fit;
    if (full_check_ || fit.static_checks || fit.nominations != 0) return Check(record).ok();
    // A resource the pod does not request (0 here) fits even where the node is overcommitted on
    // it (free < 0): node fit checks requested resources only.
    return fit.free_pods >= 1 && cpu_ <= std::max<int64_t>(fit.free_cpu, 0) &&
           memory_ <= std::max<int64_t>(fit.free_memory, 0) &&
           ephemeral_storage_ <= std::max<int64_t>(fit.free_ephemeral_storage, 0);
  }
  // CheckNodeFit(state, pod, record), with every reason. REQUIRES: record.node != nullptr.
  Status Check(const NodeRecord& record) const;

 private:
  const ClusterState& state_;
  const NormalizedPod& pod_;
  bool full_check_ = false;  // the pod needs more than the summary can answer
  int64_t cpu_ = 0;          // the pod's requests (0 when not requested or <= 0)
  int64_t memory_ = 0;
  int64_t ephemeral_storage_ = 0;
};

}  // namespace capext
