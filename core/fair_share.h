// Fair sharing of idle capacity by weight (docs/fair-sharing.md): per tree node of the quota tree,
// its weight, its share and its fairShare, the share a unit would give its quota after admission
// (the admission order's key), and the predicate of reclaim between borrowers.
//   - siblings (the children of one parent, its implicit child included; the roots under the
//     virtual root) are compared with each other
//     (docs/fair-sharing.md#2-levels-who-is-compared-with-whom);
//   - pool_r of a level = Σ min_r over its children; 0 takes the pool of the level above
//     (docs/fair-sharing.md#3-share);
//   - share(x) = max over governed r with pool_r > 0 of max(0, used_r - min_r) / pool_r, divided
//     by weight(x); weight 0: infinite once borrowing, ordered among themselves by the unweighted
//     value;
//   - fairShare_r(x) = min(demand_r(x), λ·weight(x)), water-filling the level's borrowed total
//     (docs/fair-sharing.md#4-fairshare); fairValue(x) = the share fairShare(x) would give.
// Shares are doubles: they order and they are shown; every decision that guards a guarantee stays
// in the exact admission and victim rules.
// Thread-safety: FairShareModel is immutable after construction; pure functions otherwise.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/cluster_state.h"
#include "core/fair_share_weight.h"
#include "core/resource_list.h"

namespace capext {

// A share, ordered: every finite share below every infinite one (weight 0 while borrowing);
// infinite ones by their unweighted dominant share.
struct ShareKey {
  bool infinite = false;
  double value = 0;  // the share; for an infinite one, the unweighted dominant share
  bool operator<(const ShareKey& o) const {
    return infinite != o.infinite ? !infinite : value < o.value;
  }
  bool operator<=(const ShareKey& o) const { return !(o < *this); }
  bool operator==(const ShareKey& o) const { return infinite == o.infinite && value == o.value; }
  // "0.118", "inf".
  std::string ToString() const;
};

// What does not change while usage does: the tree's weights, mins and level pools. Built once per
// decision round (the quotas are still while it is used).
class FairShareModel {
 public:
  explicit FairShareModel(const ClusterState& state);

  // The weight in thousandths of a tree node (an implicit child: 1000).
  int64_t weight_milli(int node) const { return weights_[static_cast<std::size_t>(node)]; }
  // The pool of the node's level (its parent's children, or the roots), zeros filled from above.
  const ResourceList& pool(int node) const;
  // The node's share if its subtree used `used`.
  ShareKey ShareOf(int node, const ResourceList& used) const;
  // ShareOf with `add` added to, and `remove` taken from, what the node uses now in `state`.
  ShareKey ShareWith(const ClusterState& state, int node, const ResourceList& add,
                     const ResourceList& remove = {}) const;
  // The dominant resource of ShareOf (empty when the share is 0).
  std::string DominantResource(int node, const ResourceList& used) const;
  // The share `amounts` of borrowed room would give the node (fairValue for fairShare).
  ShareKey ShareOfBorrowed(int node, const ResourceList& borrowed) const;

 private:
  const QuotaTree* tree_;
  QuotaSemantics semantics_;
  std::vector<int64_t> weights_;     // by tree node
  std::vector<ResourceList> pools_;  // by level: [0] the roots', [1 + p] the children of node p
};

// A tree node's name in messages: its quota, or "<parent> (own namespace)" for an implicit child.
std::string NodeName(const QuotaTree& tree, int node);

// Per tree node, everything /quotas, explain and the reclaim predicate show or use.
struct NodeFairness {
  int node = -1;
  int64_t weight_milli = 1000;
  ResourceList borrowed;
  ResourceList pool;
  ResourceList demand;      // what it would borrow with every waiting pod of its subtree admitted
  ResourceList fair_share;  // water-filled, rounded to decision units
  ShareKey share;
  ShareKey fair_value;   // the share fair_share gives
  std::string dominant;  // the dominant resource, "" when share is 0
  double lambda = 0;     // the water level of the node's level for its dominant resource
  bool BelowFairShare() const { return share < fair_value; }
};

// Computes NodeFairness for every tree node (indexed by node) from the state's usage and its
// waiting pods (not on a node, not reserved, not held, not terminal).
std::vector<NodeFairness> ComputeFairness(const ClusterState& state, const FairShareModel& model);

// Water-filling of `total` among claimants with weights (thousandths) and caps (demands): each
// gets min(cap, λ·weight); weight-0 claimants share what positive weights leave, equally.
// Returns the amounts (same order) and sets *lambda to the positive-weight level.
std::vector<double> WaterFill(double total, const std::vector<int64_t>& weights_milli,
                              const std::vector<double>& caps, double* lambda);

// Reclaim between borrowers (docs/fair-sharing.md#6-reclaim-between-borrowers): may the plan take
// `giver_removed` from W' (giver) for a pod adding `taker_add` at Q' (taker)? Q' and W' are the
// children of the taker's and victim's lowest common ancestor. The caller's victim search keeps
// checking the victim rule's condition that every level on the giver's side is borrowing when
// each victim is taken; this predicate checks the rest, on the state before the plan.
struct FairReclaimCase {
  int taker = -1;  // Q'
  int giver = -1;  // W'
  ResourceList taker_add;
  ResourceList giver_removed;
  int64_t victim_started_ms = 0;  // the youngest victim's start
  int64_t now_ms = 0;
  int64_t min_run_time_ms = 300'000;
};

struct FairReclaimVerdict {
  bool allowed = false;
  ShareKey taker_before, taker_after, taker_fair, giver_before, giver_after;
  std::string why;  // the first condition that fails, with its numbers; empty when allowed
  // Allowed: the move with its numbers, "b/b's share after 0.042 <= a/a's share after 0.875 (b/b's
  // share 0.000 below its fair share 0.250)", as messages and Events name it.
  std::string move;
};

FairReclaimVerdict FairReclaimAllowed(const ClusterState& state, const FairShareModel& model,
                                      const NodeFairness& taker_fairness, const FairReclaimCase& c);

}  // namespace capext
