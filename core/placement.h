// Placement: "where does this pod fit?" — the one filter decision every path asks (/filter,
// the /bind check, explain, the reclaim controller's "fits now", the simulator):
//   1. the admission check (docs/capacity-semantics.md#3-admission-may-this-pod-run-in-its-quota),
//      once per pod; when it fails, every node fails with its reason (and its code: a request
//      above max is unresolvable everywhere). For a pending member of a starting group, the
//      group's need instead (docs/workloads.md#4-filter-mode; core/group_quota.h): group_hold()
//      then lists the members the caller holds;
//   2. node fit against our state per node (usage, reservations, nominations of priority >=
//      the pod's), which holds what kube-scheduler does not know.
// A node the state does not know passes: kube-scheduler already vetted it against its own
// cache, and we hold nothing against it.
// Thread-safety: pure; the caller keeps `state` (and the pod) still while a PodFilter lives.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/node_fit.h"
#include "core/quota_admission.h"

namespace capext {

class PodFilter {
 public:
  // Keeps references to both: they must outlive the filter (a temporary pod cannot).
  PodFilter(const ClusterState& state, const NormalizedPod& pod);
  PodFilter(const ClusterState& state, NormalizedPod&& pod) = delete;

  // The quota verdict, computed once.
  const Status& quota() const { return quota_; }
  // When the group rule decided and passed: the members to hold (docs/workloads.md, "Filter
  // mode"), oldest first; empty otherwise.
  const std::vector<std::string>& group_hold() const { return group_hold_; }
  // The verdict for one node (see the file comment).
  Status CheckNode(std::string_view node) const;
  // CheckNode(record.name).ok(), without building reasons: a few comparisons for most nodes.
  bool Passes(const NodeRecord& record) const {
    return quota_.ok() && (record.node == nullptr || screen_.Fits(record));
  }
  const NormalizedPod& pod() const { return pod_; }
  const ClusterState& state() const { return state_; }

 private:
  const ClusterState& state_;
  const NormalizedPod& pod_;
  std::vector<std::string> group_hold_;  // before quota_: its initialiser fills it
  Status quota_;
  NodeFitScreen screen_;
};

// The bind check (docs/capacity-semantics.md#6-accounting-used-reservations-nominations): exactly
// /filter's verdict for that one node.
inline Status CheckBind(const ClusterState& state, const NormalizedPod& pod,
                        std::string_view node) {
  return PodFilter(state, pod).CheckNode(node);
}

struct Feasibility {
  Status quota;                       // when !quota.ok(), no node was examined
  std::vector<std::string> feasible;  // node names, in name order
  std::vector<std::pair<std::string, Status>> failed;
};

// Every node of the state, in name order.
Feasibility FindFeasibleNodes(const ClusterState& state, const NormalizedPod& pod);

// "0/3 nodes are available: 2 Insufficient cpu, 1 node(s) had untolerated taint {k: v}." or the
// quota reason when the quota rejected the pod.
std::string SummarizeUnschedulable(const Feasibility& feasibility);

}  // namespace capext
