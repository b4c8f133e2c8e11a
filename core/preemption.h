// Preemption across nodes: eligibility (the reference's PodEligibleToPreemptOthers), and the
// search over nodes that /preempt, the reclaim controller and the simulator share (victim selection
// on each node, docs/capacity-semantics.md#4-victims-on-one-node, then the candidate order,
// docs/capacity-semantics.md#5-choosing-among-candidate-nodes).
// Thread-safety: pure; the caller keeps `state` still for the duration of a call.
#pragma once

#include <string>
#include <vector>

#include "core/candidate_order.h"
#include "core/victim_selection.h"

namespace capext {

// Ok when the pod may preempt; otherwise Unresolvable with the reason: preemptionPolicy Never,
// or its nominated node still holds a terminating pod it would have chosen as a victim.
Status EligibleToPreempt(const ClusterState& state, const PreemptorContext& preemptor);

// Whether a node can possibly be a candidate for `pod`: it passes the static checks and its
// allocatable covers the request (victims cannot fix either).
bool CouldPreemptOn(const NormalizedPod& pod, const Node& node);

struct PreemptionPlan {
  enum class Outcome { kFound, kNotEligible, kNoCandidate };
  Outcome outcome = Outcome::kNoCandidate;
  Status why;                           // why nothing was found (ok when found)
  NodeVictims chosen;                   // valid when found
  std::vector<NodeVictims> candidates;  // every candidate examined, in node-name order
  bool found() const { return outcome == Outcome::kFound; }
};

// Runs victim selection on `nodes` (every node of the state when empty; unknown names are skipped)
// and chooses with 1.3. Nodes where CouldPreemptOn fails are skipped cheaply.
PreemptionPlan FindPreemption(const ClusterState& state, const NormalizedPod& preemptor,
                              const VictimOrder& victim_order,
                              const std::vector<std::string>& nodes = {});

}  // namespace capext
