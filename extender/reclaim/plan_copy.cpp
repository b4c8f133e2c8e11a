#include "extender/reclaim/plan_copy.h"

#include <fmt/format.h>

#include "core/victim_unit.h"

namespace capext {

std::string PlanCopy::Summary() const {
  return fmt::format("plan for {}: {}; victims: {}{}{} ({} steps)", preemptor, where, units,
                     fair_moves.empty() ? "" : "; ", fair_moves, steps);
}

std::vector<const Pod*> PlanCopy::VictimPointers() const {
  std::vector<const Pod*> out;
  out.reserve(victims.size());
  for (const NormalizedPod& v : victims)
    out.push_back(&v);
  return out;
}

PlanCopy CopyPlan(const ReclaimPlan& plan, std::string preemptor) {
  PlanCopy out;
  out.outcome = plan.outcome;
  out.steps = plan.steps;
  out.reason = plan.why.message();
  out.preemptor = std::move(preemptor);
  out.fair_moves = plan.fair_moves;
  out.view.outcome = ReclaimPlanOutcomeName(plan.outcome);
  out.view.preemptor = out.preemptor;
  out.view.steps = plan.steps;
  if (!plan.found()) return out;
  for (std::size_t i = 0; i < plan.members.size(); ++i) {
    out.placement.emplace_back(*plan.members[i], plan.nodes[i]);
    out.view.members.emplace_back(plan.members[i]->Key(), plan.nodes[i]);
    out.where += fmt::format("{}{} -> {}", out.where.empty() ? "" : ", ", plan.members[i]->Key(),
                             plan.nodes[i]);
  }
  for (const PlannedUnit& u : plan.units) {
    std::vector<std::string> pods;
    for (const NormalizedPod* v : u.victims) {
      out.victims.push_back(*v);
      pods.push_back(v->Key());
    }
    out.cores += u.kind == VictimUnitKind::kCore ? 1 : 0;
    out.view.units.push_back(
        fmt::format("{} {}", VictimUnitKindName(u.kind), fmt::join(pods, "+")));
  }
  out.units = fmt::format("{}", fmt::join(out.view.units, ", "));
  return out;
}

void CountPlanStarted(Metrics* metrics, std::size_t evicted, int cores) {
  metrics->Count("capacity_extender_reclaims_started_total");
  metrics->Count("capacity_extender_reclaim_plans_total", "outcome", "found");
  metrics->Count("capacity_extender_reclaim_plan_victims_total", "", "",
                 static_cast<double>(evicted));
  metrics->Count("capacity_extender_reclaim_units_broken_total", "", "",
                 static_cast<double>(cores));
}

}  // namespace capext
