// NodeScorer: ranks the nodes a pod fits for /prioritize and the simulator. Scores are 0..10
// (kube-scheduler does not clamp extender scores: anything outside would dominate every other
// plugin). Looked up by name (`scoring` in the config).
// Thread-safety: implementations are immutable and safe to share.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/cluster_state.h"

namespace capext {

inline constexpr int kMaxNodeScore = 10;

class NodeScorer {
 public:
  virtual ~NodeScorer() = default;
  virtual std::string_view name() const = 0;
  // 0..kMaxNodeScore, deterministic. `node` holds the usage before the pod is placed.
  virtual int Score(const Pod& pod, const NodeInfo& node) const = 0;
};

// least-allocated (spread), most-allocated (bin-pack), none (every node 0).
std::unique_ptr<NodeScorer> MakeNodeScorer(std::string_view name);
std::vector<std::string> NodeScorerNames();

// The best of `feasible` nodes for `pod`: highest score, then first name. REQUIRES: non-empty.
std::string PickNode(const NodeScorer& scorer, const ClusterState& state, const Pod& pod,
                     const std::vector<std::string>& feasible);

}  // namespace capext
