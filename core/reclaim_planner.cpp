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

ReclaimPlanForPod PlanReclaim(const ClusterState& state, const Pod& pod,
                              const MoreImportantFn& more_important,
                              const ReclaimOptions& options) {
  ReclaimPlanForPod plan;
  const std::string self = pod.uid.empty() ? pod.Key() : pod.uid;
  if (state.FindOurNomination(self) != nullptr) {
    plan.decision = ReclaimDecision::kInFlight;
    plan.reason = std::string(reasons::kReclaimInFlight);
    return plan;
  }
  if (!options.include_pods_without_quota && state.quotas().QuotaFor(pod.ns) == nullptr) {
    plan.decision = ReclaimDecision::kNotEligible;
    plan.reason = "namespace has no ElasticQuota: kube-scheduler's own preemption serves it";
    return plan;
  }
  Feasibility feasibility = FindFeasibleNodes(state, pod);
  if (!feasibility.feasible.empty()) {
    plan.decision = ReclaimDecision::kFitsNow;
    return plan;
  }
  if (feasibility.quota.code == FitCode::kUnschedulableAndUnresolvable) {
    plan.decision = ReclaimDecision::kNoCandidate;
    plan.reason = feasibility.quota.reason;
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
      plan.reason = "every candidate node was excluded";
      return plan;
    }
  }
  PreemptionPlan preemption = FindPreemption(state, pod, more_important, nodes);
  if (!preemption.found) {
    const bool eligible = preemption.reason != reasons::kPreemptionPolicyNever &&
                          preemption.reason != reasons::kTerminatingVictimOnNominatedNode;
    plan.decision = eligible ? ReclaimDecision::kNoCandidate : ReclaimDecision::kNotEligible;
    plan.reason = preemption.reason;
    return plan;
  }
  plan.decision = ReclaimDecision::kEvict;
  plan.node = preemption.chosen.node;
  plan.victims = preemption.chosen.victims;
  plan.pdb_violations = preemption.chosen.pdb_violations;
  std::string names;
  for (const Pod* v : plan.victims) {
    if (!names.empty()) names += ", ";
    names += fmt::format("{} (priority {})", v->Key(), v->priority);
  }
  plan.reason = fmt::format(
      "pod {} does not fit ({}); evicting {} on node {} ({} of {} candidate nodes)", pod.Key(),
      SummarizeUnschedulable(feasibility), names, plan.node, 1, preemption.candidates.size());
  return plan;
}

}  // namespace capext
