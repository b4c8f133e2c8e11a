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

#include <string>
#include <vector>

#include "core/cluster_state.h"
#include "core/quota_admission.h"

namespace capext {

struct NodeFitResult {
  FitCode code = FitCode::kPass;
  std::vector<std::string> reasons;  // one per failed check
  bool ok() const { return code == FitCode::kPass; }
  std::string Reason() const;  // reasons joined with ", "
};

bool ToleratesTaint(const Toleration& toleration, const Taint& taint);

// Taints, unschedulable, nodeSelector and required node affinity.
NodeFitResult CheckNodeStatic(const Pod& pod, const Node& node);

// Resources and pod count against `requested` / `pod_count` already on the node.
NodeFitResult CheckNodeResources(const Pod& pod, const Node& node, const ResourceList& requested,
                                 int32_t pod_count);

// The nominations on `node` that hold room against `pod` (other pods, priority >= pod's).
void AddNominationsAgainst(const ClusterState& state, const Pod& pod, const std::string& node,
                           ResourceList* requested, int32_t* pod_count);

// Both, against the state's usage and nominations.
NodeFitResult CheckNodeFit(const ClusterState& state, const Pod& pod, const NodeInfo& node);

}  // namespace capext
