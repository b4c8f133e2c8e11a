// The reclaim controller's plans across nodes (docs/reclaim-plan.md): a pending member of a
// starting gang whose waiting members are several gets one plan for all of them
// (core/reclaim_plan.h's SearchReclaimPlan): the victims are evicted on whatever nodes the plan
// names, each waiting member is nominated on its planned node, and every member's reclaim is in
// flight, so none of them is planned again until the hold ends, or until the plan, cut short
// after some evictions, is made again (reclaim_controller.h).
#include <chrono>

#include <fmt/format.h>

#include "core/reclaim_plan.h"
#include "extender/log.h"
#include "extender/reclaim/plan_copy.h"
#include "extender/reclaim/reclaim_controller.h"

namespace capext {

void ReclaimController::ReleaseGangHolds(const NormalizedPod& pod) {
  cache_->Write([&](ClusterState& state) {
    for (const NormalizedPod* m : PlanMembers(state, pod)) {
      if (state.FindOurNomination(m->store_key()) == nullptr) continue;
      state.ReleaseNomination(m->store_key());
      records_to_clear_.insert(m->store_key());
    }
    return 0;
  });
}

std::optional<PodVerdict> ReclaimController::ReclaimForGang(const NormalizedPod& pod,
                                                            int64_t now_ms, bool resuming,
                                                            bool* started, WakeRule* wake) {
  struct Copied {
    bool gang = false, in_flight = false;
    bool single = false;  // a single borrower's plan (fair sharing), not a gang's
    PlanCopy plan;
  };
  const auto search_start = std::chrono::steady_clock::now();
  const Copied copied = cache_->Read([&](const ClusterState& state) {
    Copied out;
    const std::vector<const NormalizedPod*> members = PlanMembers(state, pod);
    // A single borrower with fair sharing: a plan only when it takes victims (below), and one in
    // flight is the one-node path's to report.
    const bool fair_single = members.size() == 1 && options_.fair_sharing &&
                             WouldBorrow(state, pod) &&
                             state.FindOurNomination(pod.store_key()) == nullptr;
    if (members.size() <= 1 && !fair_single) return out;
    out.gang = true;
    out.single = fair_single;
    for (const NormalizedPod* m : members) {
      if (state.FindOurNomination(m->store_key()) != nullptr) out.in_flight = true;
    }
    // A plan in flight is not planned again, unless it was cut short (its members' rooms are
    // theirs in the search: docs/capacity-semantics.md#8-the-reclaim-controller).
    if (out.in_flight && !resuming) return out;
    out.in_flight = false;
    ReclaimPlanBudget budget;
    budget.max_steps = options_.plan_max_steps;
    budget.should_stop = [&] {
      return std::chrono::steady_clock::now() - search_start >
             std::chrono::milliseconds(options_.plan_time_cap_ms);
    };
    const ReclaimPlan p = SearchReclaimPlan(
        state, pod, victim_order_, budget,
        {options_.fair_sharing, now_ms, options_.fair_share_min_run_time_ms, &fairness_cache_});
    if (fair_single && (!p.found() || p.units.empty())) {
      out.gang = false;  // nothing to take by fairness: the one-node path decides
      return out;
    }
    // A gang's plan is for the gang, whichever member asked
    // (docs/reclaim-plan.md#5-where-a-user-sees-it): its Events and /pending name the group.
    const GroupView* group = fair_single ? nullptr : state.GroupOf(pod);
    out.plan = CopyPlan(p, group != nullptr ? group->key.Display() : "pod " + pod.Key());
    return out;
  });
  if (!copied.gang) return std::nullopt;
  const PlanCopy& plan = copied.plan;
  const double search_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - search_start).count();
  *wake = WakeRule{};
  PodVerdict v;
  if (copied.in_flight) {
    // Every member of a plan is nominated: its own nomination ending wakes it.
    v.code = VerdictCode::kWaitingForReclaim;
    v.reclaim = ReclaimState::kInFlight;
    v.message = fmt::format("{}: waiting for the plan in flight for its gang", pod.Key());
    return v;
  }
  metrics_->Observe("capacity_extender_reclaim_plan_search_seconds", search_seconds);
  if (!plan.found()) {
    if (resuming) ReleaseGangHolds(pod);  // cut short, and no longer completable
    metrics_->Count("capacity_extender_reclaim_plans_total", "outcome",
                    ReclaimPlanOutcomeName(plan.outcome));
    wake->on = kWakeOnQuota | kWakeOnClusterQuota | kWakeOnAnyNode;
    v.code = VerdictCode::kUnschedulable;
    v.message = verdicts::NoReclaimPossible(plan.reason);
    v.plan = plan.view;
    return v;
  }
  if (plan.victims.empty()) {
    wake->on = kWakeOnQuota | kWakeOnClusterQuota | kWakeOnAnyNode;
    MaybeNudge(pod, now_ms, wake);
    v.message = std::string(verdicts::kFits);
    return v;
  }
  std::vector<std::string> victim_keys, victim_namespaces, nodes;
  for (const auto& victim : plan.victims) {
    victim_keys.push_back(victim.Key());
    victim_namespaces.push_back(victim.ns);
  }
  for (const auto& [member, node] : plan.placement)
    nodes.push_back(node);
  const std::string reason = plan.Summary();
  if (options_.mode == ReclaimMode::kDryRun) {
    if (dry_run_logged_.insert(reason).second) {
      Log(LogLevel::kInfo, "reclaim dry-run: would evict", {{"pod", pod.Key()}, {"plan", reason}});
      metrics_->CountDecision("reclaim", "dry-run");
    }
    wake->on = kWakeOnQuota | kWakeOnClusterQuota | kWakeOnAnyNode | kWakeOnPdbs;
    v.code = VerdictCode::kUnschedulable;
    v.message = verdicts::DryRun(reason);
    return v;
  }
  if (!Acts()) {
    v.code = VerdictCode::kUnschedulable;
    v.message = verdicts::NotActing(reason);
    wake->on = kWakeOnQuota | kWakeOnClusterQuota | kWakeOnAnyNode;
    return v;
  }
  // All victims of a plan or none: tokens are only taken when the whole plan fits the budget.
  if (!evictions_.TakeTokens(victim_namespaces, now_ms)) {
    metrics_->CountDecision("reclaim", "rate-limited");
    wake->at_ms = now_ms + 1;
    v.code = VerdictCode::kReclaimRefused;
    v.reclaim = ReclaimState::kRefused;
    v.node = nodes.front();
    v.victims = victim_keys;
    v.message =
        verdicts::RateLimited(pod.Key(), victim_keys, nodes.front(), evictions_.per_second(),
                              evictions_.per_namespace_per_minute());
    return v;
  }
  // Recorded on every member before the first eviction: a replica taking over holds each room.
  std::vector<const NormalizedPod*> recorded;
  auto clear_records = [&] {
    for (const NormalizedPod* m : recorded)
      records_->Clear(*m);
  };
  if (records_ != nullptr) {
    for (const auto& [member, node] : plan.placement) {
      std::optional<std::string> record = records_->Record(member, node);
      if (!record) {
        clear_records();
        for (const auto& ns : victim_namespaces)
          evictions_.GiveBack(ns, now_ms);
        wake->at_ms = now_ms + options_.refusal_backoff_ms;
        v.code = VerdictCode::kReclaimBackoff;
        v.reclaim = ReclaimState::kBackoff;
        v.retry_at_ms = wake->at_ms;
        v.message = verdicts::EvictionsFailed(
            pod.Key(), {{victim_keys.front(), node,
                         "not evicted: the reclaim could not be recorded on the pod"}});
        return v;
      }
      recorded.push_back(&member);
      seen_records_[member.store_key()] = *record;  // ours: never adopted
    }
  }
  Log(LogLevel::kInfo, "reclaim started", {{"pod", pod.Key()}, {"plan", reason}});
  const EvictionRun run =
      evictions_.EvictInOrder(plan.VictimPointers(), plan.preemptor, reason, now_ms);
  std::vector<std::string> evicted, evicted_keys;
  for (std::size_t i = 0; i < run.evicted; ++i) {
    evicted.push_back(plan.victims[i].store_key());
    evicted_keys.push_back(plan.victims[i].Key());
  }
  std::vector<RefusedEviction> refusals;
  if (run.stop && !run.stopped_acting) {
    const NormalizedPod& refused = plan.victims[run.evicted];
    refusals.push_back({refused.Key(), refused.node_name, run.stop->error});
  }
  const bool all_by_pdb = run.stop && run.stop->refused_by_pdb;
  if (evicted.empty()) {
    if (!refusals.empty()) {  // closes the "reclaim started" above: nothing was evicted
      Log(LogLevel::kInfo, "reclaim given up: its first eviction failed",
          {{"pod", pod.Key()}, {"plan", reason}, {"error", refusals.front().error}});
    }
    clear_records();
    RefusalBackoff& b = refused_[pod.store_key()];
    b.until_ms = NextRetryAt(pod.store_key(), run.stop ? run.stop->retry_after_seconds : 0, now_ms);
    wake->at_ms = b.until_ms;
    b.verdict = PodVerdict{};
    b.verdict.code = all_by_pdb && !refusals.empty() ? VerdictCode::kReclaimRefused
                                                     : VerdictCode::kReclaimBackoff;
    b.verdict.reclaim = ReclaimState::kBackoff;
    b.verdict.retry_at_ms = b.until_ms;
    b.verdict.message = refusals.empty() ? verdicts::NotActing(reason)
                        : all_by_pdb     ? verdicts::RefusedByDisruptionBudget(pod.Key(), refusals)
                                         : verdicts::EvictionsFailed(pod.Key(), refusals);
    return b.verdict;
  }
  // Cut short by a refusal after some evictions: planned again after the backoff, the rooms
  // held meanwhile (docs/capacity-semantics.md#8-the-reclaim-controller).
  int64_t resume_at_ms = 0;
  if (run.stop && !run.stopped_acting) {
    resume_at_ms = NextRetryAt(pod.store_key(), run.stop->retry_after_seconds, now_ms);
    Log(LogLevel::kWarn, "reclaim cut short: planned again after the backoff",
        {{"pod", pod.Key()},
         {"plan", reason},
         {"evicted", std::to_string(evicted.size())},
         {"retry_in_ms", std::to_string(resume_at_ms - now_ms)}});
  } else {
    refused_.erase(pod.store_key());
  }
  if (resuming) metrics_->Count("capacity_extender_reclaims_resumed_total");
  // Hold the room for every member, even after a partial eviction: what was freed is the gang's.
  const int64_t expires = now_ms + options_.nomination_ttl_ms;
  cache_->Write([&](ClusterState& state) {
    for (const auto& [member, node] : plan.placement) {
      if (state.FindPod(member.store_key()) != nullptr)
        state.Nominate(member.store_key(), node, expires);
    }
    return 0;
  });
  CountPlanStarted(metrics_, evicted.size(), plan.cores);
  {
    std::lock_guard lock(mutex_);
    for (const auto& [member, node] : plan.placement) {
      // The victims go with the asking pod's entry: its hold ending unbound wastes them once.
      const bool asking = member.store_key() == pod.store_key();
      InFlightReclaim& r = in_flight_[member.store_key()];
      r = InFlightReclaim{member.Key(),
                          node,
                          asking ? evicted : std::vector<std::string>{},
                          asking ? evicted_keys : std::vector<std::string>{},
                          now_ms,
                          false,
                          false};
      if (asking) {
        r.resume_at_ms = resume_at_ms;
        r.gang = true;
      }
    }
  }
  for (const auto& [member, node] : plan.placement) {
    board_.ReclaimStarted(
        {member.store_key(), member.Key(), node,
         member.store_key() == pod.store_key() ? evicted_keys : std::vector<std::string>{},
         "in-flight", now_ms, 0});
  }
  *started = true;
  *wake = WakeRule{};
  v.code = VerdictCode::kWaitingForReclaim;
  v.reclaim = ReclaimState::kInFlight;
  v.node = plan.placement.front().second;
  v.victims = evicted_keys;
  v.reclaim_started_ms = now_ms;
  v.plan = plan.view;
  v.plan->hold_expires_ms = expires;
  v.message = fmt::format("{} (plan for {}: {})",
                          verdicts::WaitingForReclaim(pod.Key(), evicted_keys, v.node),
                          copied.single ? "fair share" : "its gang", plan.where);
  return v;
}

}  // namespace capext
