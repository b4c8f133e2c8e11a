// SimEngine's gate-mode reclaim for gated gangs, as serve's admission loop does it
// (docs/reclaim-plan.md#gate-mode-the-admission-loop-plans-for-a-gated-gang,
// extender/admission/admission_reclaim.cpp): after each admission round, every starting gang
// whose unit waits on the quota or the nodes, not in flight, is planned by the one search
// (SearchReclaimPlan), asked by its oldest member under our gate alone. A plan with victims
// nominates every member on its planned node (nominationTTL), then evicts the victims (at once:
// the simulator has no grace period and no eviction rate limit); the gates stay on until a later
// round admits the unit. A plan is in flight while a member is nominated; when every nomination
// has ended with no member admitted, its victims are wasted evictions
// (SimulationResult::wasted_evictions).
// With the fair policy (gated fair sharing), as serve with fairSharing: every plan is searched with
// reclaim between borrowers, and the units the sum of all mins blocks (the round's fairness
// barrier, units within min) are planned too, single pods included
// (docs/fair-sharing.md#gate-mode-the-admission-loop-reclaims-for-the-barrier); the victims a
// plan takes by fairness (from another namespace, for a unit that would borrow) count as fair
// evictions.
#include <algorithm>

#include "bench/sim/sim_engine.h"
#include "core/fair_victim_eligibility.h"
#include "core/reclaim_plan.h"

namespace capext {

void SimEngine::GateReclaimPass(const AdmissionRound& round) {
  // Follow the plans in flight: held while a member is nominated; then served (a member admitted,
  // bound or gone) or expired.
  for (auto it = gang_plans_.begin(); it != gang_plans_.end();) {
    bool held = false, admitted = false;
    for (const std::string& key : it->second.members) {
      const NormalizedPod* pod = state_.FindPod(key);
      held = held || nominations_.count(key) != 0;
      admitted = admitted || pod == nullptr || !pod->quota_gated || pod->IsBound() ||
                 state_.FindHold(key) != nullptr;
    }
    if (held) {
      ++it;
      continue;
    }
    if (!admitted) out_->wasted_evictions += it->second.victims;
    it = gang_plans_.erase(it);
  }
  const bool fair = profile_.fair_sharing && profile_.fair_reclaim;
  std::set<std::string> seen;
  std::vector<std::pair<std::string, std::string>> asking;  // unit id, store key of the asking pod
  for (const auto& [key, wait] : round.waiting) {
    if (wait.reason != AdmissionWaitReason::kQuotaExceeded &&
        wait.reason != AdmissionWaitReason::kNoPlacement)
      continue;
    const NormalizedPod* pod = state_.FindPod(key);
    if (pod == nullptr) continue;
    const GroupView* group = pod->group.empty() ? nullptr : state_.GroupOf(*pod);
    if (group == nullptr || !group->starting() || group->need() == 0) {
      // A single pod (or a surplus member): with fair sharing, when the sum of all mins blocks it.
      const std::string id = "pod " + pod->Key();
      if (fair && wait.shared_capacity && gang_plans_.count(id) == 0 &&
          nominations_.count(key) == 0)
        asking.emplace_back(id, key);
      continue;
    }
    const std::string id = group->key.Display();
    if (!seen.insert(id).second || gang_plans_.count(id) != 0) continue;
    const NormalizedPod* first = nullptr;
    bool nominated = false;
    for (const GroupMember& m : group->members) {
      nominated = nominated || nominations_.count(m.pod->store_key()) != 0;
      if (first == nullptr && m.state == MemberState::kGated && !m.pod->other_gates) first = m.pod;
    }
    if (first != nullptr && !nominated) asking.emplace_back(id, first->store_key());
  }
  bool fair_without_plan = false;
  for (const auto& [id, key] : asking) {
    const NormalizedPod* pod = state_.FindPod(key);
    auto known = pod_by_uid_.find(key);
    if (pod == nullptr || known == pod_by_uid_.end()) continue;
    const bool would_borrow = WouldBorrow(state_, *pod);
    const ReclaimPlan plan = SearchReclaimPlan(
        state_, *pod, *victim_order_, {},
        FairReclaimOptions{fair, now_, options_.fair_share_min_run_time_ms, &fairness_cache_});
    if (!plan.found()) fair_without_plan = fair_without_plan || fair;
    if (!plan.found() || plan.units.empty()) continue;
    // Copied before the state changes (the plan points into it).
    std::vector<std::pair<std::string, std::string>> placement;
    for (std::size_t i = 0; i < plan.members.size(); ++i)
      placement.emplace_back(plan.members[i]->store_key(), plan.nodes[i]);
    std::vector<std::string> victims;
    int64_t by_fairness = 0;
    for (const NormalizedPod* v : plan.Victims()) {
      victims.push_back(v->store_key());
      by_fairness += !plan.fair_moves.empty() && would_borrow && v->ns != pod->ns ? 1 : 0;
    }
    // Held before the first eviction, as serve does.
    const int64_t expires = now_ + options_.nomination_ttl_ms;
    for (const auto& [member, node] : placement) {
      state_.Nominate(member, node, expires);
      nominations_[member] = OurNomination{nodes_->IndexOf(node), expires};
      expiries_.insert(expires);
    }
    const int tenant = buckets_[pods_[known->second].bucket].tenant;
    for (const std::string& v : victims)
      Evict(v, tenant);
    out_->fair_evictions += by_fairness;
    GangPlanInFlight& in_flight = gang_plans_[id];
    for (const auto& [member, node] : placement)
      in_flight.members.push_back(member);
    in_flight.victims = static_cast<int64_t>(victims.size());
    ++out_->reclaims;
    if (id.rfind("pod ", 0) != 0) {  // a gang's plan, not one pod's
      ++out_->gang_plans;
      out_->gang_plan_victims += in_flight.victims;
    }
    ++epoch_;
    admission_due_ = true;  // the room is free: the next round admits the unit
  }
  // A unit without a plan is planned again at the next round, which runs when the cluster changes
  // or, with fairness, when a pod reaches the minimum run time and may become a victim.
  if (fair_without_plan)
    fair_wake_ms_ = std::min(
        fair_wake_ms_, NextMinRunTimeCrossing(state_, now_, options_.fair_share_min_run_time_ms));
}

}  // namespace capext
