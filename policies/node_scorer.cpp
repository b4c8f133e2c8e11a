#include "policies/node_scorer.h"

#include <array>

namespace capext {
namespace {

// kube-scheduler's resource scoring looks at cpu and memory, weight 1 each.
constexpr std::array<std::string_view, 2> kScoredResources = {kResourceCPU, kResourceMemory};

// Average over scored resources of (allocated after placing the pod) / allocatable, in 0..1
// scaled to 0..kMaxNodeScore*1000 to keep integer arithmetic.
int64_t UtilisationPermille(const Pod& pod, const NodeInfo& node) {
  int64_t total = 0;
  int counted = 0;
  for (auto r : kScoredResources) {
    const int64_t allocatable = node.node.allocatable.Get(r);
    if (allocatable <= 0) continue;
    int64_t used = SaturatingAdd(node.usage->requested.Get(r), pod.requests.Get(r));
    if (used > allocatable) used = allocatable;
    total += static_cast<int64_t>((static_cast<__int128>(used) * 1000) / allocatable);
    ++counted;
  }
  return counted == 0 ? 0 : total / counted;
}

class LeastAllocated final : public NodeScorer {
 public:
  std::string_view name() const override { return "least-allocated"; }
  int Score(const Pod& pod, const NodeInfo& node) const override {
    return static_cast<int>((1000 - UtilisationPermille(pod, node)) * kMaxNodeScore / 1000);
  }
};

class MostAllocated final : public NodeScorer {
 public:
  std::string_view name() const override { return "most-allocated"; }
  int Score(const Pod& pod, const NodeInfo& node) const override {
    return static_cast<int>(UtilisationPermille(pod, node) * kMaxNodeScore / 1000);
  }
};

class NoScore final : public NodeScorer {
 public:
  std::string_view name() const override { return "none"; }
  int Score(const Pod&, const NodeInfo&) const override { return 0; }
};

}  // namespace

std::unique_ptr<NodeScorer> MakeNodeScorer(std::string_view name) {
  if (name == "least-allocated") return std::make_unique<LeastAllocated>();
  if (name == "most-allocated") return std::make_unique<MostAllocated>();
  if (name == "none") return std::make_unique<NoScore>();
  return nullptr;
}

std::vector<std::string> NodeScorerNames() {
  return {"least-allocated", "most-allocated", "none"};
}

std::string PickNode(const NodeScorer& scorer, const ClusterState& state, const Pod& pod,
                     const std::vector<std::string>& feasible) {
  std::string best;
  int best_score = -1;
  for (const auto& name : feasible) {
    auto info = state.FindNode(name);
    if (!info) continue;
    const int score = scorer.Score(pod, *info);
    if (score > best_score || (score == best_score && name < best)) {
      best = name;
      best_score = score;
    }
  }
  return best.empty() ? feasible.front() : best;
}

}  // namespace capext
