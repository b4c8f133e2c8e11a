// Placement search: which node gets a pod, as kube-scheduler picks it — the filter (placement.h:
// quota once, node fit per node) over the nodes in name order from a rotating start, stopping once
// `limit` feasible nodes are found (numFeasibleNodesToFind), and the best of those by score
// (node_score.h), chosen by BestNode (best_node.h). The simulator places every pod this way.
//
// Two implementations behind one contract, tested equal (tests/core/placement_search_test.cpp):
//  - FindPlacement: the plain one, any ClusterState;
//  - DensePlacement: over the state's DenseNodes mirror, with what it can memoise across calls
//    (static-check masks per set of pod constraints, scores per request shape and node version).
// Thread-safety: FindPlacement is pure; a DensePlacement is used by one thread at a time, and the
// state must not change during a call.
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "core/dense_nodes.h"
#include "core/placement.h"

namespace capext {

struct PlacementQuery {
  int start = 0;  // the node index (name order) the scan begins at
  std::size_t limit = std::numeric_limits<std::size_t>::max();  // feasible nodes to find
  NodeScoring scoring = NodeScoring::kLeastAllocated;
};

struct PlacementResult {
  Status quota;               // not ok: no node was examined
  int best = -1;              // the chosen node's index (name order); -1 when none fits
  int examined = 0;           // nodes examined (how far the rotation moves)
  std::vector<int> feasible;  // the feasible nodes found, in scan order
};

PlacementResult FindPlacement(const ClusterState& state, const NormalizedPod& pod,
                              const PlacementQuery& query);

class DensePlacement {
 public:
  // REQUIRES: state.dense_nodes() != nullptr, for the whole life of this object.
  explicit DensePlacement(const ClusterState& state);

  // What the search derives from a pod once: its request in the mirror's dimensions, its
  // static-check class and its score shape. Valid while the mirror's generation is unchanged
  // and for pods with the same requests and constraints.
  struct Profile {
    DenseRequest request;
    int static_class = 0;
    int shape = -1;
    uint64_t generation = 0;
  };
  Profile ProfileOf(const NormalizedPod& pod, NodeScoring scoring);

  // FindPlacement's result. `profile` must be ProfileOf(pod, query.scoring) (or of an identical
  // pod) of the current generation.
  PlacementResult Find(const NormalizedPod& pod, const Profile& profile,
                       const PlacementQuery& query);
  PlacementResult Find(const NormalizedPod& pod, const PlacementQuery& query) {
    return Find(pod, ProfileOf(pod, query.scoring), query);
  }
  // Find without the quota check, for a caller that made it already (result.quota is ok).
  PlacementResult ScanNodes(const NormalizedPod& pod, const Profile& profile,
                            const PlacementQuery& query) {
    PlacementResult out;
    ScanNodes(pod, profile, query, &out);
    return out;
  }
  // The same into *out, whose feasible vector keeps its capacity: a caller deciding pod after
  // pod reuses one result instead of growing a fresh vector to hundreds of nodes each time (the
  // simulator's allocation and page faults there were an eighth of its time).
  void ScanNodes(const NormalizedPod& pod, const Profile& profile, const PlacementQuery& query,
                 PlacementResult* out);

  // Node n's verdict for the pod, quota aside (PodFilter's node check).
  bool FitsNode(const NormalizedPod& pod, const Profile& profile, int n) const;
  // Static checks only (taints, unschedulable, selectors, affinity).
  bool StaticOk(const Profile& profile, int n) const {
    const auto& mask = masks_[profile.static_class];
    return mask.empty() || mask[n] != 0;
  }
  // ScoreNode on node n, memoised per shape and node version.
  int Score(NodeScoring scoring, const Profile& profile, int n);

  const DenseNodes& nodes() const { return dense_; }

 private:
  void Reset();

  const ClusterState& state_;
  const DenseNodes& dense_;
  uint64_t generation_ = 0;
  std::map<std::string, int> class_by_signature_;
  std::vector<std::vector<uint8_t>> masks_;  // empty = every node passes
  static constexpr int kMaxShapes = 256;
  struct ScoreMemo {
    uint32_t version = 0;  // the node's version when computed; 0 = never
    int32_t score = 0;
  };
  std::map<std::tuple<const NodeScorer*, int64_t, int64_t>, int> shape_by_key_;
  std::vector<std::vector<ScoreMemo>> memo_;  // by shape, then node
};

}  // namespace capext
