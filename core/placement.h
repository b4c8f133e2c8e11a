// Placement feasibility: the quota check of 1.1 once per pod, then node fit per node, and the
// kube-scheduler style summary of why a pod fits nowhere.
// Thread-safety: pure; the caller keeps `state` still for the duration of a call.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "core/node_fit.h"
#include "core/quota_admission.h"

namespace capext {

struct Feasibility {
  AdmissionResult quota;              // when !quota.ok(), no node was examined
  std::vector<std::string> feasible;  // node names, in the order examined
  std::vector<std::pair<std::string, NodeFitResult>> failed;
};

// `nodes` empty = every node of the state, in name order. Unknown names fail with
// reasons::kNodeNotFound.
Feasibility FindFeasibleNodes(const ClusterState& state, const Pod& pod,
                              const std::vector<std::string>& nodes = {});

// "0/3 nodes are available: 2 Insufficient cpu, 1 node(s) had untolerated taint {k: v}." or the
// quota reason when the quota rejected the pod.
std::string SummarizeUnschedulable(const Feasibility& feasibility);

}  // namespace capext
