// Preemption across nodes: eligibility (the reference's PodEligibleToPreemptOthers), the
// candidate choice of capacity-semantics 1.3, and the search over every node that both the
// reclaim controller and the simulator use (section 4 step 2).
// Thread-safety: pure; the caller keeps `state` still for the duration of a call.
#pragma once

#include <string>
#include <vector>

#include "core/victim_selection.h"

namespace capext {

// False (with the reason) when the pod may not preempt: preemptionPolicy Never, or its nominated
// node still holds a terminating pod it would have chosen as a victim.
bool EligibleToPreempt(const ClusterState& state, const PreemptorContext& preemptor,
                       std::string* reason);

// 1.3: fewest PDB violations; lowest priority of the most important victim; smallest sum of
// (priority + 2^31); fewest victims; latest earliest-start among the highest-priority victims;
// first node name. Returns the index into `candidates`. REQUIRES: !candidates.empty().
std::size_t ChooseCandidate(const std::vector<NodeVictims>& candidates);

struct PreemptionPlan {
  bool found = false;
  NodeVictims chosen;                   // valid when found
  std::vector<NodeVictims> candidates;  // every candidate node, in node-name order
  std::string reason;                   // why nothing was found
};

// Runs 1.2 on `nodes` (every node of the state when empty) and chooses with 1.3. Nodes the pod
// can never fit (static checks, or a request above the node's allocatable) are skipped cheaply.
PreemptionPlan FindPreemption(const ClusterState& state, const Pod& preemptor,
                              const MoreImportantFn& more_important,
                              const std::vector<std::string>& nodes = {});

}  // namespace capext
