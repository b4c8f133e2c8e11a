// Node scoring for /prioritize, the simulator's choice of node and PickNode: how full a node
// would be with the pod on it, on cpu and memory (kube-scheduler's resource scoring, weight 1
// each), turned into 0..kMaxNodeScore by the scorer the profile runs (core/node_scorer.h, the
// extension point; docs/extender-protocol.md#prioritize):
//   utilisation = average over cpu and memory with allocatable > 0 of
//                 floor(min(requested + request, allocatable) * 1000 / allocatable)
// Integer arithmetic throughout, so every path (plain, dense) scores alike.
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <vector>

#include "core/cluster_state.h"
#include "core/node_scorer.h"

namespace capext {

// The score of placing `pod` on `node` (its usage before the pod).
int ScoreNode(NodeScoring scoring, const Pod& pod, const NodeInfo& node);

// floor(min(requested + add, allocatable) * 1000 / allocatable). REQUIRES: allocatable > 0.
inline int64_t UtilisationPermille(int64_t requested, int64_t add, int64_t allocatable) {
  int64_t used = SaturatingAdd(requested, add);
  if (used > allocatable) used = allocatable;
  return static_cast<int64_t>((static_cast<__int128>(used) * 1000) / allocatable);
}

// The best of `feasible` nodes for `pod` as BestNode picks (core/best_node.h: the highest score,
// then the first name). Nodes the state does not know score 0. REQUIRES: !feasible.empty().
std::string PickNode(NodeScoring scoring, const ClusterState& state, const Pod& pod,
                     const std::vector<std::string>& feasible);

}  // namespace capext
