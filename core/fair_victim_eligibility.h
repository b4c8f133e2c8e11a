// Reclaim between borrowers as a victim eligibility of the reclaim plan search
// (docs/fair-sharing.md#6-reclaim-between-borrowers; core/reclaim_plan.h). The victim rule
// (victim_rule.h) refuses every victim of another quota at a level where the preemptor's side Q'
// would borrow (its condition 1). With fair sharing on, such a namespace may still give victims
// when, at the lowest common ancestor A of the preemptor's and the victim's leaves, with Q' and
// W' A's children on each side:
//   2. Q' is below its fair share (share < fairValue, core/fair_share.h), decided once;
//   3. every node from the victim's leaf up to W' is borrowing when the victim is taken (the
//      search's re-check, as the victim rule's condition 2);
//   4. after taking the victim (and the unit's pods before it, and the plan's earlier victims),
//      W''s share drops and Q''s share after admitting the pod is at most W''s share;
//   5. the victim started at least min_run_time_ms before now_ms.
// Condition 4 is asked per victim while the search removes units (removals only lower W''s
// share, so once it holds for the removed set it holds for any subset the put-back leaves), and
// the final plan is checked again with FairReclaimAllowed per giver (Check).
// Thread-safety: immutable after construction; valid while the state is not modified.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/cluster_state.h"
#include "core/fair_share.h"
#include "core/fairness_snapshot.h"
#include "core/resource_list.h"

namespace capext {

// Config fairSharing and fairShareMinRunTime, with the decision's clock.
struct FairReclaimOptions {
  bool enabled = false;
  int64_t now_ms = 0;
  int64_t min_run_time_ms = 300'000;
  // Where the fairness of every quota is taken from: the caller's cache, shared by the searches
  // of one pass over one state (core/fairness_snapshot.h); null: computed for this search alone.
  // Either way the numbers are those of the state as it is.
  FairnessCache* cache = nullptr;
};

// Condition 1 for some level of the pod's path: admitting its request would take a node of its
// quota path above that node's min (false for a pod without a quota).
bool WouldBorrow(const ClusterState& state, const NormalizedPod& pod);

// The earliest time after `now_ms` at which a pod on a node of a quota namespace reaches the
// minimum run time (condition 5), INT64_MAX when none will: until then a search that found no plan
// finds none again on the same state. A caller that plans only when the state changed (gate
// mode's admission loop, the simulator) plans again at that time too.
int64_t NextMinRunTimeCrossing(const ClusterState& state, int64_t now_ms, int64_t min_run_time_ms);

class FairVictimEligibility {
 public:
  struct Scope {
    bool any = false;  // the namespace may give victims by fairness
    int taker = -1;    // Q'
    int giver = -1;    // W'
    int leaf = -1;     // the victim's leaf
    int distance = 0;  // the level of A on the preemptor's path, as VictimRule::Scope's
  };

  // `request` is what the pod's quota admits for the plan (its members' requests).
  // REQUIRES: `pod` outlives the object.
  FairVictimEligibility(const ClusterState& state, const NormalizedPod& pod,
                        const ResourceList& request, const FairReclaimOptions& options);

  // The fairness scope of a namespace the victim rule refuses (any = false when fairness lets
  // none of its pods go: no quota, the preemptor's own namespace, Q' within its min, Q' not
  // below its fair share).
  Scope ScopeOf(std::string_view ns) const;

  // Conditions 4 and 5 for `victim` of a fair scope: `giver_used` is W''s usage on the what-if
  // before the victim is taken (the plan's earlier removals applied).
  bool MayTake(const Scope& scope, const NormalizedPod& victim,
               const ResourceList& giver_used) const;

  // Why fairness lets the pod take nothing at a level where its side would borrow: the first such
  // level (from the leaf up) whose Q' is not below its fair share, "b/b's share 0.250 is not
  // below its fair share 0.250" (condition 2, with its numbers); empty when every such level is
  // below (or none borrows, or fairness is off).
  std::string NotBelowFairShare() const;

  // The final plan's victims from one giver: FairReclaimAllowed with their summed request and
  // the youngest one's start.
  FairReclaimVerdict Check(const Scope& scope,
                           const std::vector<const NormalizedPod*>& victims) const;

 private:
  const ClusterState& state_;
  const NormalizedPod& pod_;
  ResourceList request_;
  FairReclaimOptions options_;
  std::vector<int> path_;  // the pod's leaf ... its root
  // Every quota's fairness on the state, taken (from options.cache when given) only when a level
  // borrows; null otherwise.
  std::shared_ptr<const FairnessSnapshot> fair_;
  std::vector<char> eligible_taker_;  // per path_ entry: Q' would borrow and is below its share
  std::vector<char> borrows_;         // per path_ entry: Q' would borrow (condition 1)
};

}  // namespace capext
