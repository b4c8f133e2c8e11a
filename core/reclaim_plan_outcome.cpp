// ReclaimPlan's reading side (reclaim_plan.h): the outcome's name and the victims in eviction
// order.
#include "core/reclaim_plan.h"

namespace capext {

const char* ReclaimPlanOutcomeName(ReclaimPlanOutcome outcome) {
  switch (outcome) {
    case ReclaimPlanOutcome::kFound:
      return "found";
    case ReclaimPlanOutcome::kNoVictims:
      return "no-victims";
    case ReclaimPlanOutcome::kNoPlacement:
      return "no-placement";
    case ReclaimPlanOutcome::kBudgetExhausted:
      return "budget-exhausted";
  }
  return "unknown";
}

std::vector<const NormalizedPod*> ReclaimPlan::Victims() const {
  std::vector<const NormalizedPod*> out;
  for (const PlannedUnit& unit : units)
    out.insert(out.end(), unit.victims.begin(), unit.victims.end());
  return out;
}

}  // namespace capext
