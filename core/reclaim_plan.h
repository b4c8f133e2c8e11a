// A plan for a placement (docs/reclaim-plan.md): which victim units, on any nodes, must go so that
// the pods that wait together (a starting gang's waiting members, or one pod) have a place and
// pass their quota. One search for the reclaim controller's gang plans, the admission loop,
// explain and the simulator (/preempt and single-pod plans still use FindPreemption: see
// docs/reclaim-plan.md#2-the-search, "Where it stands"):
//   1. the units of every pod on a node (victim_unit.h), sorted by victim selection's one order
//      (quota-tree distance, then VictimUnitBefore);
//   2. every unit the victim rule lets go (victim_rule.h, each pod in turn, the side's re-check
//      on the what-if) is removed, in that order;
//   3. the plan holds when the pod's quota admits the placement (with the nominated terms) and
//      first fit (PlaceTogether's rule, group_placement.h; plan_placement.h on the what-if)
//      places every waiting member; else no plan;
//   2b. with fair sharing on (`fair`), a namespace the victim rule refuses because the pod's side
//      would borrow may still give victims by fairness (core/fair_victim_eligibility.h), each
//      checked as it is removed; the final plan is checked per giver with FairReclaimAllowed;
//   4. put-back: the removed units, PDB-violating ones first, most important first, each kept
//      back when the plan still holds; repeated over the victims until none can be dropped, so
//      the plan is minimal.
// Bounded by a budget of steps (one per node visited, per unit tried, per member placed) and a
// caller's stop callback (the wall-clock cap: core reads no clock); when either runs out the
// answer is "no plan, approximate".
// Thread-safety: pure; works on a what-if of changes over `state` (plan_what_if.h), which the
// caller keeps still for the duration of the call. The plan's pointers point into `state` (or to
// `pod`).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/cluster_state.h"
#include "core/fair_victim_eligibility.h"
#include "core/status.h"
#include "core/victim_selection.h"
#include "core/victim_unit.h"

namespace capext {

struct ReclaimPlanBudget {
  int64_t max_steps = 250'000;
  // Asked between steps; true stops the search (approximate). Empty: never.
  std::function<bool()> should_stop;
};

struct PlannedUnit {
  VictimUnitKind kind = VictimUnitKind::kSingle;
  GroupKey group;                             // empty for a single pod
  std::vector<const NormalizedPod*> victims;  // its pods on nodes, in eviction order
  int32_t pdb_violations = 0;
};

enum class ReclaimPlanOutcome {
  kFound,            // units may be empty: the pods fit as things are
  kNoVictims,        // no unit the rules let go, and the pods do not fit as things are
  kNoPlacement,      // with every eligible unit removed, the quota or the placement still fails
  kBudgetExhausted,  // the budget or the stop callback ended the search: approximate
};

struct ReclaimPlan {
  ReclaimPlanOutcome outcome = ReclaimPlanOutcome::kNoVictims;
  Status why;                                 // ok when found
  std::vector<const NormalizedPod*> members;  // the waiting pods, in placement order
  std::vector<std::string> nodes;             // found: each member's node
  std::vector<PlannedUnit> units;             // found: the victims per unit, in eviction order
  int32_t pdb_violations = 0;
  // Found with victims taken by fairness: "reclaim by fair share: <each giver's move with its
  // numbers>" (FairReclaimVerdict::move); empty otherwise.
  std::string fair_moves;
  int32_t placed = 0;  // members placed with every eligible unit removed (or all, when found)
  int64_t steps = 0;   // work spent
  bool found() const { return outcome == ReclaimPlanOutcome::kFound; }
  bool approximate() const { return outcome == ReclaimPlanOutcome::kBudgetExhausted; }
  // Every victim, in eviction order.
  std::vector<const NormalizedPod*> Victims() const;
};

// The pods that wait together with `pod` (docs/reclaim-plan.md#1-what-a-plan-is-for): for a
// pending member of a starting gang with need > 0, the gang's admitted members without a node,
// then its need members (GroupNeedMembers: `pod` first); otherwise `pod` alone. Empty when the
// gang has fewer pending members than its need (it waits for them, not for room).
std::vector<const NormalizedPod*> PlanMembers(const ClusterState& state, const NormalizedPod& pod);

// REQUIRES: `pod` outlives the plan.
ReclaimPlan SearchReclaimPlan(const ClusterState& state, const NormalizedPod& pod,
                              const VictimOrder& victim_order, const ReclaimPlanBudget& budget = {},
                              const FairReclaimOptions& fair = {});

const char* ReclaimPlanOutcomeName(ReclaimPlanOutcome outcome);

}  // namespace capext
