// The reclaim controller's one call into core's planner (PlanFor) and the verdicts a pod gets
// when nothing is evicted for it, with the changes that wake it again (reclaim_controller.h;
// docs/capacity-semantics.md#8-the-reclaim-controller).
#include "core/placement.h"
#include "extender/reclaim/reclaim_controller.h"

namespace capext {

ReclaimController::Plan ReclaimController::PlanFor(const NormalizedPod& pod,
                                                   const std::vector<std::string>& excluded_nodes,
                                                   bool replan_own_nomination) {
  Plan out;
  ++last_pass_.plan_calls;
  cache_->Read([&](const ClusterState& state) {
    ReclaimOptions plan_options;
    plan_options.excluded_nodes = excluded_nodes;
    plan_options.replan_own_nomination = replan_own_nomination;
    ReclaimPlanForPod plan = PlanReclaim(state, pod, victim_order_, plan_options);
    out.decision = plan.decision;
    out.node = plan.node;
    out.reason = plan.decision == ReclaimDecision::kEvict ? plan.explanation : plan.why.message();
    for (const NormalizedPod* v : plan.victims)
      out.victims.push_back(*v);  // pointers are only valid under the lock
    out.admission = AdmissionChanges(state.semantics());
    out.victim_changes = kVictimRuleChanges | victim_order_.Declared();
    if (plan.decision != ReclaimDecision::kFitsNow) {
      const AdmissionVerdict admission = DecideAdmission(state, pod);
      out.quota = admission.status;
      out.quota_rule = admission.blocking;
    }
    if (plan.decision == ReclaimDecision::kFitsNow) {
      // The node its Fits verdict is watched on: while this one does not change, it still fits.
      const PodFilter filter(state, pod);
      for (const auto& [name, node] : state.nodes()) {
        const NodeRecord* record = state.FindNodeRecord(name);
        if (record != nullptr && filter.Passes(*record)) {
          out.fit_node = name;
          break;
        }
      }
    }
    return 0;
  });
  return out;
}

PodVerdict ReclaimController::NoEviction(const NormalizedPod& pod, const Plan& plan,
                                         bool dry_run) const {
  PodVerdict v;
  if (plan.decision == ReclaimDecision::kFitsNow) {
    v.message = std::string(verdicts::kFits);
    return v;
  }
  if (plan.decision == ReclaimDecision::kInFlight) {
    v.code = VerdictCode::kWaitingForReclaim;
    v.reclaim = ReclaimState::kInFlight;
    std::lock_guard lock(mutex_);
    if (auto it = in_flight_.find(pod.store_key()); it != in_flight_.end()) {
      v.node = it->second.node;
      v.victims = it->second.victim_keys;
      v.reclaim_started_ms = it->second.started_ms;
      v.message = it->second.recorded_elsewhere
                      ? verdicts::WaitingForRecordedReclaim(pod.Key(), v.node)
                      : verdicts::WaitingForReclaim(pod.Key(), v.victims, v.node);
    } else {
      v.message = plan.reason;
    }
    return v;
  }
  if (!plan.quota.ok()) {
    v.code = VerdictCode::kQuotaExceeded;
    v.message = plan.quota.message();  // what /filter answers, numbers included
    return v;
  }
  v.code = VerdictCode::kUnschedulable;
  v.message = dry_run                              ? verdicts::DryRun(plan.reason)
              : options_.mode == ReclaimMode::kOff ? verdicts::NoReclaimPossible("reclaim is off")
                                                   : verdicts::NoReclaimPossible(plan.reason);
  return v;
}

PodVerdict ReclaimController::FollowerVerdict(const NormalizedPod& pod, WakeRule* wake) {
  const Plan plan = PlanFor(pod, {});
  *wake = WakeRuleFor(plan);
  PodVerdict v = NoEviction(pod, plan, false);
  if (plan.decision == ReclaimDecision::kEvict) v.message = verdicts::NotActing(plan.reason);
  return v;
}

WakeRule ReclaimController::WakeRuleFor(const Plan& plan) {
  WakeRule rule;
  switch (plan.decision) {
    case ReclaimDecision::kFitsNow:
      rule.on = plan.admission | (plan.fit_node.empty() ? kChangesOnAnyNode : kChangesOnOneNode);
      rule.node = plan.fit_node;
      break;
    case ReclaimDecision::kInFlight:
      break;  // our nomination of it ending is a change of its own
    case ReclaimDecision::kNotEligible:
    case ReclaimDecision::kNoCandidate:
    case ReclaimDecision::kEvict:
      rule.on = plan.quota.IsUnresolvable() && plan.quota_rule != nullptr
                    ? plan.quota_rule->Declared()
                    : plan.admission | plan.victim_changes | kNodeFitChanges;
      if (plan.decision == ReclaimDecision::kEvict) rule.on |= kCandidateOrderChanges;
      break;
  }
  return rule;
}

}  // namespace capext
