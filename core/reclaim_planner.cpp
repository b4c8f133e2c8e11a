#include "core/reclaim_planner.h"

#include <algorithm>

#include <fmt/format.h>

#include "core/placement.h"
#include "core/reasons.h"

namespace capext {

const char* ReclaimDecisionName(ReclaimDecision decision) {
  switch (decision) {
    case ReclaimDecision::kFitsNow:
      return "fits-now";
    case ReclaimDecision::kNotEligible:
      return "not-eligible";
    case ReclaimDecision::kInFlight:
      return "in-flight";
    case ReclaimDecision::kNoCandidate:
      return "no-candidate";
    case ReclaimDecision::kEvict:
      return "evict";
  }
  return "unknown";
}

ReclaimPlanForPod PlanReclaim(const ClusterState& state, const NormalizedPod& pod,
                              const VictimOrder& victim_order, const ReclaimOptions& options) {
  ReclaimPlanForPod plan;
  if (!options.replan_own_nomination && state.FindOurNomination(pod.store_key()) != nullptr) {
    plan.decision = ReclaimDecision::kInFlight;
    plan.why = Status::Unschedulable(std::string(reasons::kReclaimInFlight));
    return plan;
  }
  if (!options.include_pods_without_quota && state.QuotaFor(pod.ns) == nullptr) {
    plan.decision = ReclaimDecision::kNotEligible;
    plan.why = Status::Unresolvable(std::string(reasons::kNamespaceWithoutQuota));
    return plan;
  }
  const Feasibility feasibility = FindFeasibleNodes(state, pod);
  if (!feasibility.feasible.empty()) {
    plan.decision = ReclaimDecision::kFitsNow;
    return plan;
  }
  const std::string unschedulable = SummarizeUnschedulable(feasibility);
  if (feasibility.quota.IsUnresolvable()) {
    plan.decision = ReclaimDecision::kNoCandidate;
    plan.why = feasibility.quota;
    return plan;
  }
  std::vector<std::string> nodes;
  if (!options.excluded_nodes.empty()) {
    for (const auto& [name, node] : state.nodes()) {
      if (std::find(options.excluded_nodes.begin(), options.excluded_nodes.end(), name) ==
          options.excluded_nodes.end()) {
        nodes.push_back(name);
      }
    }
    if (nodes.empty()) {
      plan.why = Status::Unschedulable(std::string(reasons::kEveryCandidateExcluded));
      return plan;
    }
  }
  PreemptionPlan preemption = FindPreemption(state, pod, victim_order, nodes);
  if (!preemption.found()) {
    const bool eligible = preemption.outcome != PreemptionPlan::Outcome::kNotEligible;
    plan.decision = eligible ? ReclaimDecision::kNoCandidate : ReclaimDecision::kNotEligible;
    // What the pod waits for: the quota's or the nodes' verdict, unless it may not preempt.
    plan.why = eligible ? Status::WithCode(feasibility.quota.ok() ? StatusCode::kUnschedulable
                                                                  : feasibility.quota.code(),
                                           unschedulable)
                        : preemption.why;
    return plan;
  }
  plan.decision = ReclaimDecision::kEvict;
  plan.node = preemption.chosen.node;
  plan.victims = preemption.chosen.victims;
  plan.pdb_violations = preemption.chosen.pdb_violations;
  plan.candidates = preemption.candidates.size();
  plan.distance = preemption.chosen.distance;
  {
    const NormalizedPod& self = pod;
    const AdmissionPath path = MakeAdmissionPath(state, self);
    plan.level = VictimRule(state, path).DescribeLevel(plan.distance);
  }
  plan.why = Status::WithCode(
      feasibility.quota.ok() ? StatusCode::kUnschedulable : feasibility.quota.code(),
      unschedulable);
  std::string names;
  for (const NormalizedPod* v : plan.victims) {
    if (!names.empty()) names += ", ";
    // A reserved victim is the pod bound there
    // (docs/capacity-semantics.md#6-accounting-used-reservations-nominations); say that its bind is
    // still in flight, since the API server shows it Pending.
    names +=
        fmt::format("{} (priority {}{})", v->Key(), v->priority,
                    state.FindReservation(v->store_key()) != nullptr ? ", bind in flight" : "");
  }
  plan.explanation =
      fmt::format("pod {} does not fit ({}); evicting {} on node {} ({} of {} candidate nodes)",
                  pod.Key(), unschedulable, names, plan.node, 1, preemption.candidates.size());
  return plan;
}

}  // namespace capext
