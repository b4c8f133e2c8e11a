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
#include "bench/sim/sim_engine.h"
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
  std::set<std::string> seen;
  std::vector<std::pair<std::string, std::string>> asking;  // group, store key of the asking pod
  for (const auto& [key, wait] : round.waiting) {
    if (wait.reason != AdmissionWaitReason::kQuotaExceeded &&
        wait.reason != AdmissionWaitReason::kNoPlacement)
      continue;
    const NormalizedPod* pod = state_.FindPod(key);
    if (pod == nullptr || pod->group.empty()) continue;
    const GroupView* group = state_.GroupOf(*pod);
    if (group == nullptr || !group->starting() || group->need() == 0) continue;
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
  for (const auto& [id, key] : asking) {
    const NormalizedPod* pod = state_.FindPod(key);
    auto known = pod_by_uid_.find(key);
    if (pod == nullptr || known == pod_by_uid_.end()) continue;
    const ReclaimPlan plan = SearchReclaimPlan(state_, *pod, *victim_order_);
    if (!plan.found() || plan.units.empty()) continue;
    // Copied before the state changes (the plan points into it).
    std::vector<std::pair<std::string, std::string>> placement;
    for (std::size_t i = 0; i < plan.members.size(); ++i)
      placement.emplace_back(plan.members[i]->store_key(), plan.nodes[i]);
    std::vector<std::string> victims;
    for (const NormalizedPod* v : plan.Victims())
      victims.push_back(v->store_key());
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
    GangPlanInFlight& in_flight = gang_plans_[id];
    for (const auto& [member, node] : placement)
      in_flight.members.push_back(member);
    in_flight.victims = static_cast<int64_t>(victims.size());
    ++out_->reclaims;
    ++out_->gang_plans;
    out_->gang_plan_victims += in_flight.victims;
    ++epoch_;
    admission_due_ = true;  // the room is free: the next round admits the unit
  }
}

}  // namespace capext
