// The differential check of the decision engine (issue 11): one cluster and one pod to ask about,
// answered by every path that decides about a pod, which must all agree —
//  - /filter in both nodeCacheCapable modes (NodeNames; full Node objects), per node: passed,
//    FailedNodes or FailedAndUnresolvableNodes, and the reason, against core's PodFilter (and
//    PodFilter's screen against the unscreened CheckQuota + CheckNodeFit);
//  - /prioritize against ScoreNode;
//  - /bind after /filter on a fresh copy of the cluster for each node: it succeeds exactly where
//    /filter passed the node, and refuses with /filter's reason elsewhere;
//  - /preempt for proposed nodes (both request shapes) against FindPreemption on those nodes;
//  - PlanReclaim: kFitsNow iff /filter passes some node of the cluster, kEvict's node and victims
//    equal to FindPreemption's choice over every node; SearchCandidates over the DenseNodes mirror
//    (pruned and exhaustive, every node in the pool, a rotating start) chooses the same;
//  - the simulator's placement: DensePlacement::Find / ScanNodes with every node and with a
//    rotating start and a limit, against FindPlacement, and (every node) against filter +
//    prioritize: a node /filter passes with the best /prioritize score, the first name on a tie;
//  - the quota tree's rules (docs/quota-hierarchy.md) against a naive recount over the quotas and
//    pods (QuotaTreeRecount): the tree, each node's subtree usage and the sums over the roots;
//    the admission verdict (max at the pod's quota and every ancestor, the blocking quota and its
//    relation named, the cluster-wide rule over the roots); preemption eligibility; and the LCA
//    rule for every victim FindPreemption proposes on any node;
//  - "reserved = bound" (docs/capacity-semantics.md#6-accounting-used-reservations-nominations): on
//  a state with /bind reservations, the quota and
//    node verdicts, FindPreemption, PlanReclaim, the candidate search and the placement equal
//    those on the same state with every reserved pod bound to its node, started at its
//    reservation time (reserved_paths.cpp).
// Everything the check varies (scoring, victim order, starts, limits, proposed nodes, mirror
// dimensions) is derived from `seed`, so a case keeps failing the same way while it is shrunk.
// Thread-safety: a call uses only its own objects.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "tests/support/cluster_case.h"
#include "tests/support/json_tree.h"

namespace capext::testing {

// How often each interesting situation came up (the generator must produce enough of each).
struct PathTally {
  std::map<std::string, int64_t> counts;
  void Add(const std::string& what) { ++counts[what]; }
};

struct Disagreement {
  std::string path;    // which comparison ("filter/NodeNames", "bind", "preempt", ...)
  std::string detail;  // what each side said
};

// Runs every path for `question` on `c`. Returns the disagreements (empty when all agree).
std::vector<Disagreement> CompareDecisionPaths(const ClusterCase& c, const JsonTree& question,
                                               uint64_t seed, PathTally* tally = nullptr);

}  // namespace capext::testing
