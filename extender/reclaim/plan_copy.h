// PlanCopy: a reclaim plan (core/reclaim_plan.h) copied out of the cache's lock, as the two
// loops that act on plans use it (the reclaim controller's plans, reclaim_controller_plan.cpp;
// gate mode's admission loop, admission_reclaim.cpp): the members and victims as values (the
// plan's pointers are only valid under the lock), the texts the log, the messages and the
// victims' Events say, and the view /pending shows (docs/reclaim-plan.md#5-where-a-user-sees-it).
// CountPlanStarted is what both count when a plan's evictions started.
// Thread-safety: pure functions, except CountPlanStarted (Metrics is thread-safe).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/reclaim_plan.h"
#include "extender/metrics.h"
#include "extender/reclaim/pod_verdict.h"

namespace capext {

struct PlanCopy {
  ReclaimPlanOutcome outcome = ReclaimPlanOutcome::kNoVictims;
  std::string reason;                                            // the search's why, not found
  std::string preemptor;                                         // "gang ns/group" or "pod ns/name"
  std::vector<std::pair<NormalizedPod, std::string>> placement;  // member, planned node
  std::vector<NormalizedPod> victims;                            // eviction order
  std::string where;                                             // "ns/w-0 -> n1, ns/w-1 -> n2"
  std::string units;       // "single ns/b4, core ns/x-0+ns/x-1"
  int cores = 0;           // whole gangs' cores among the units
  std::string fair_moves;  // "reclaim by fair share: ..." when fairness let victims go, else ""

  int64_t steps = 0;
  PlanView view;

  bool found() const { return outcome == ReclaimPlanOutcome::kFound; }
  // "plan for gang ns/train: ns/w-0 -> n1, ...; victims: single ns/b4, ... (120 steps)", with
  // "; reclaim by fair share: <the move with its numbers>" before the steps when fairness let
  // victims go: the plan as the log, the messages and the victims' Events say it.
  std::string Summary() const;
  // The victims, in eviction order, as EvictInOrder takes them.
  std::vector<const Pod*> VictimPointers() const;
};

// Copies `plan` (found or not), asked for `preemptor`. REQUIRES: the state `plan` points into is
// still locked.
PlanCopy CopyPlan(const ReclaimPlan& plan, std::string preemptor);

// A plan whose evictions started: capacity_extender_reclaims_started_total,
// ..._reclaim_plans_total{outcome="found"}, ..._reclaim_plan_victims_total (+evicted) and
// ..._reclaim_units_broken_total (+ the plan's cores).
void CountPlanStarted(Metrics* metrics, std::size_t evicted, int cores);

}  // namespace capext
