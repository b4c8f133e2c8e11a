#include "core/node_score.h"

#include "core/best_node.h"

namespace capext {

int ScoreNode(NodeScoring scoring, const Pod& pod, const NodeInfo& node) {
  if (!scoring->ReadsUtilisation()) return scoring->FromUtilisation(0);
  int64_t total = 0;
  int counted = 0;
  for (ResourceName r : {kCpuName, kMemoryName}) {
    const int64_t allocatable = node.node.allocatable.Get(r);
    if (allocatable <= 0) continue;
    total += UtilisationPermille(node.usage->requested.Get(r), pod.requests.Get(r), allocatable);
    ++counted;
  }
  return scoring->FromUtilisation(counted == 0 ? 0 : total / counted);
}

std::string PickNode(NodeScoring scoring, const ClusterState& state, const Pod& pod,
                     const std::vector<std::string>& feasible) {
  BestNode<std::string> best;
  for (const auto& name : feasible) {
    auto info = state.FindNode(name);
    best.Offer(info ? ScoreNode(scoring, pod, *info) : 0, name);
  }
  return best.id();
}

}  // namespace capext
