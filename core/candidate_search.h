// CandidateSearch: FindPreemption (preemption.h) over a pool of nodes at the cost of running victim
// selection on only a few of them, for callers that search every node of a large cluster for many
// pods (the simulator, the reclaim controller). Over the state's DenseNodes mirror:
//  - the pool: nodes where victim selection can find a candidate at all (a necessary condition,
// VictimBound,
//    from what the pods of the namespaces that may give victims request there), taken from a
//    rotating offset, at most `max_pool` of them (kube-scheduler's DefaultPreemption samples
//    max(100, 10% of nodes); the reclaim controller takes every node);
//  - within the pool, victim selection runs in the order of a lower bound of each node's key in
//    the candidate order
//    (candidate_order.h) and stops as soon as no remaining node can beat the best candidate:
//    the node chosen is the one ChooseCandidate picks over every pool node
//    (tests/core/candidate_search_test.cpp checks it against FindPreemption on the same nodes);
//  - a pool node whose takeable pods inside a quota level's subtree cannot bring that level back
//    under its max is skipped without victim selection (it cannot be a candidate; the pool is
//    filled as before, so the choice is the same).
// Thread-safety: pure; the caller keeps `state` still for the duration of a call.
#pragma once

#include <cstddef>
#include <limits>

#include "core/placement_search.h"
#include "core/preemption.h"

namespace capext {

struct CandidateSearchOptions {
  int start = 0;  // the node index (name order) the pool starts at
  std::size_t max_pool = std::numeric_limits<std::size_t>::max();
  bool exhaustive = false;  // run victim selection on every pool node (no early stop); for checks
};

struct CandidateSearchResult {
  PreemptionPlan plan;       // as FindPreemption over the pool's nodes
  int processed = 0;         // nodes looked at to fill the pool (how far the rotation moves)
  std::size_t pool = 0;      // nodes in the pool
  std::size_t examined = 0;  // nodes victim selection ran on
};

// REQUIRES: state.dense_nodes() != nullptr. `placement` supplies the static-check masks (it must
// be built on the same state).
CandidateSearchResult SearchCandidates(const ClusterState& state, DensePlacement& placement,
                                       const NormalizedPod& preemptor,
                                       const VictimOrder& victim_order,
                                       const CandidateSearchOptions& options);

}  // namespace capext
