#include "core/group_placement.h"

#include <limits>

#include "core/node_fit.h"

namespace capext {

std::optional<std::vector<std::string>> PlaceTogether(ClusterState* what_if,
                                                      const std::vector<std::string>& pods,
                                                      int64_t now_ms, int* placed) {
  std::vector<std::string> nodes;
  for (const auto& key : pods) {
    const NormalizedPod* pod = what_if->FindPod(key);
    const NodeFitScreen screen(*what_if, *pod);
    std::string chosen;
    for (const auto& [name, node] : what_if->nodes()) {
      const NodeRecord* record = what_if->FindNodeRecord(name);
      if (record != nullptr && record->node != nullptr && screen.Fits(*record)) {
        chosen = name;
        break;
      }
    }
    if (chosen.empty()) break;
    what_if->Reserve(key, chosen, now_ms, std::numeric_limits<int64_t>::max());
    nodes.push_back(std::move(chosen));
  }
  *placed = static_cast<int>(nodes.size());
  if (nodes.size() == pods.size()) return nodes;
  for (std::size_t i = 0; i < nodes.size(); ++i)
    what_if->ReleaseReservation(pods[i]);
  return std::nullopt;
}

}  // namespace capext
