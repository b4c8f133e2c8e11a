// kube-scheduler's filterPodsWithPDBViolation, used by the reprieve of victim selection
// (docs/capacity-semantics.md#4-victims-on-one-node); declared in victim_selection.h.
#include <algorithm>

#include "core/victim_selection.h"

namespace capext {

void SplitByPdbViolation(const std::vector<PodDisruptionBudget>& pdbs,
                         const std::vector<const NormalizedPod*>& pods,
                         std::vector<const NormalizedPod*>* violating,
                         std::vector<const NormalizedPod*>* non_violating) {
  if (pdbs.empty()) {
    non_violating->insert(non_violating->end(), pods.begin(), pods.end());
    return;
  }
  std::vector<int32_t> allowed;
  allowed.reserve(pdbs.size());
  for (const auto& pdb : pdbs)
    allowed.push_back(pdb.disruptions_allowed);
  for (const NormalizedPod* pod : pods) {
    bool violated = false;
    if (!pod->labels.empty()) {
      for (std::size_t i = 0; i < pdbs.size(); ++i) {
        const auto& pdb = pdbs[i];
        if (!pdb.Selects(*pod)) continue;
        if (std::find(pdb.disrupted_pods.begin(), pdb.disrupted_pods.end(), pod->name) !=
            pdb.disrupted_pods.end()) {
          continue;
        }
        if (--allowed[i] < 0) violated = true;
      }
    }
    (violated ? violating : non_violating)->push_back(pod);
  }
}

}  // namespace capext
