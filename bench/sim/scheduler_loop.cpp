#include "bench/sim/scheduler_loop.h"

#include "core/placement.h"

namespace capext {

bool SchedulerLoop::TryPod(const NormalizedPod& pending, int64_t now_ms, PassResult* result) {
  const std::string key = pending.Key();
  Feasibility feasibility = FindFeasibleNodes(*state_, pending);
  if (!feasibility.feasible.empty()) {
    Pod bound = pending;
    bound.node_name = PickNode(scoring_, *state_, pending, feasibility.feasible);
    bound.phase = PodPhase::kRunning;
    bound.start_ms = now_ms;
    bound.nominated_node_name.clear();
    pending_reasons_.erase(key);
    if (observer) observer("bind", bound, bound.node_name);
    result->bound.push_back({key, bound.node_name});
    state_->UpsertPod(std::move(bound));
    return true;
  }
  pending_reasons_[key] = SummarizeUnschedulable(feasibility);
  if (observer) observer("reject", pending, pending_reasons_[key]);
  if (!options_.reclaim) return false;

  ReclaimOptions reclaim_options;
  reclaim_options.include_pods_without_quota = true;  // we play kube-scheduler's preemption too
  ReclaimPlanForPod plan = PlanReclaim(*state_, pending, more_important_, reclaim_options);
  if (plan.decision != ReclaimDecision::kEvict) return false;
  const std::string uid = pending.store_key();
  std::vector<std::string> victim_uids;
  for (const NormalizedPod* v : plan.victims)
    victim_uids.push_back(v->store_key());
  for (const auto& victim_uid : victim_uids) {
    const NormalizedPod* victim = state_->FindPod(victim_uid);
    if (victim == nullptr) continue;
    if (observer) observer("evict", *victim, key);
    result->evicted.push_back({*victim, key, plan.node});
    state_->DeletePod(victim_uid);
  }
  state_->Nominate(uid, plan.node, now_ms + options_.nomination_ttl_ms);
  return true;
}

SchedulerLoop::PassResult SchedulerLoop::RunUntilQuiet(int64_t now_ms) {
  PassResult result;
  state_->Expire(now_ms);
  for (int pass = 0; pass < options_.max_passes; ++pass) {
    bool changed = false;
    std::vector<std::string> uids;
    for (const NormalizedPod* pod : state_->PendingPods())
      uids.push_back(pod->store_key());
    for (const auto& uid : uids) {
      const NormalizedPod* pod = state_->FindPod(uid);
      if (pod == nullptr || pod->IsBound()) continue;
      NormalizedPod copy = *pod;  // TryPod changes the state under the reference
      changed = TryPod(copy, now_ms, &result) || changed;
    }
    if (!changed) break;
  }
  return result;
}

}  // namespace capext
