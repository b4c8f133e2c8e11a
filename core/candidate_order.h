// The candidate order (docs/capacity-semantics.md#5-choosing-among-candidate-nodes:
// kube-scheduler's pickOneNodeForPreemption, with a name tie-break) as a comparable key — the one
// definition ChooseCandidate and every candidate search use — and a lower bound of that key
// computed without running victim selection, so that a search can run it on the most promising
// nodes first and stop as soon as no remaining node can beat the best candidate found
// (tests/core/candidate_order_test.cpp checks that this chooses the node ChooseCandidate chooses
// over every node).
//
// Key, best first: the nearest farthest victim in the quota tree (docs/quota-hierarchy.md; equal
// for every node without parents); fewest PDB violations; lowest priority of the most important
// victim; smallest sum of (priority + 2^31); fewest victims; LATEST earliest start among the
// victims of that highest priority; first node name.
// Thread-safety: value types and pure functions.
#pragma once

#include <climits>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "core/declared_changes.h"
#include "core/victim_selection.h"

namespace capext {

// What the choice among candidates reads besides victim selection
// (docs/architecture.md#declared-changes-and-wake-rules): the PodDisruptionBudgets their victims
// would violate.
inline constexpr DeclaredChanges kCandidateOrderChanges = kChangesToPdbs;

struct CandidateKey {
  int32_t distance = 0;  // the farthest victim's distance in the quota tree (nearest wins)
  int32_t pdb_violations = 0;
  int32_t highest_priority = std::numeric_limits<int32_t>::min();
  int64_t priority_sum = 0;
  std::size_t victims = 0;
  int64_t earliest_start_of_highest = std::numeric_limits<int64_t>::max();
  std::string node;
};

// The key of a candidate. REQUIRES: c.candidate.
CandidateKey KeyOf(const NodeVictims& c);

// True when `a` comes before `b` in the candidate order (a would be chosen over b).
bool Before(const CandidateKey& a, const CandidateKey& b);

// The candidate order over `candidates`: the index of the one chosen. REQUIRES:
// !candidates.empty().
std::size_t ChooseCandidate(const std::vector<NodeVictims>& candidates);

// A key no candidate on `node` can beat, given what is known of its victims: the farthest is at
// distance at least `min_distance`; the most important has priority at least
// `min_highest_priority`; should it be exactly that, there are at least `min_victims` victims,
// none of priority below `lowest_priority`, and those of that highest priority started no later
// than `latest_start`. PDB violations are taken as none.
CandidateKey LowerBoundKey(const std::string& node, int32_t min_highest_priority,
                           int64_t latest_start, std::size_t min_victims = 1,
                           int32_t lowest_priority = INT32_MIN, int32_t min_distance = 0);

}  // namespace capext
