// SimEngine's reclaim half: the reclaim controller
// (docs/capacity-semantics.md#8-the-reclaim-controller; and kube-scheduler's own lower-priority
// preemption, the same victim selection for pods without a quota), played on the simulator's state.
// The search is the core's (SearchCandidates: victim selection per node, the candidate order to
// choose, over a pool taken from a rotating offset: under kube-scheduler sampling at most
// DefaultPreemption's number of nodes, otherwise all); the engine executes the plan. With the
// fair policies a pod whose quota would borrow is first planned as serve's controller does with
// fairSharing: the reclaim plan search with reclaim between borrowers
// (docs/fair-sharing.md#how-the-reclaim-search-uses-it); its victims count as fair evictions.
// The simulator keeps ungated pending pods out of the ClusterState, so a quota's demand there
// counts its running pods and the pod being planned, not the rest of its queue: the fair values
// are lower than serve's, and condition 4 (taker's share after <= giver's after) does the rest.
#include "bench/sim/sim_engine.h"

#include "core/fair_victim_eligibility.h"
#include "core/reclaim_plan.h"

namespace capext {

bool SimEngine::TryFairReclaim(int b) {
  if (!profile_.fair_reclaim || !WouldBorrow(state_, *scratch_)) return false;
  const std::string uid = scratch_->store_key();
  const bool added = state_.FindPod(uid) == nullptr;
  if (added) state_.UpsertPod(*scratch_);  // waiting: part of its quota's demand
  const NormalizedPod& pod = *state_.FindPod(uid);
  const ReclaimPlan plan =
      SearchReclaimPlan(state_, pod, *victim_order_, {},
                        FairReclaimOptions{true, now_, options_.fair_share_min_run_time_ms});
  if (!plan.found() || plan.units.empty() || plan.nodes.empty()) {
    if (added) state_.DeletePod(uid);
    return false;
  }
  std::vector<std::string> victims;
  for (const NormalizedPod* v : plan.Victims())
    victims.push_back(v->store_key());
  const std::string node = plan.nodes.front();
  const int tenant = buckets_[b].tenant;
  for (const auto& v : victims) {
    Evict(v, tenant);
    ++out_->fair_evictions;
  }
  const int64_t expires = now_ + options_.nomination_ttl_ms;
  state_.Nominate(uid, node, expires);
  nominations_[uid] = OurNomination{nodes_->IndexOf(node), expires};
  expiries_.insert(expires);
  ++out_->reclaims;
  ++epoch_;
  return true;
}

bool SimEngine::TryReclaim(int b, uint32_t id) {
  PendingQueue::Bucket& qb = queue_.bucket(b);
  // Nothing changed since this bucket's last failed attempt (the answer would be the same), or
  // it failed less than a reclaim interval ago (the controller's period: failed attempts are
  // retried by the periodic pass, not on every scheduling failure).
  if (qb.reclaim_failed_epoch == epoch_ || now_ < qb.reclaim_retry_after_ms) return false;
  auto fail = [&] {
    qb.reclaim_failed_epoch = epoch_;
    // A controller that is never behind (reclaim_at_once) retries as soon as the cluster changed.
    qb.reclaim_retry_after_ms =
        options_.reclaim_at_once ? now_ : SaturatingAdd(now_, options_.reclaim_interval_ms);
    return false;
  };
  FillScratch(b, id);
  if (nominations_.count(scratch_->store_key()) != 0) return fail();  // a reclaim is in flight
  ++out_->reclaim_attempts;
  const BucketInfo& info = buckets_[b];
  if (TryFairReclaim(b)) {
    qb.reclaim_retry_after_ms = INT64_MIN;
    return true;
  }
  CandidateSearchOptions search;
  search.start = preempt_offset_;
  search.max_pool = num_candidates_;
  search.exhaustive = options_.exhaustive_reclaim;
  const CandidateSearchResult found =
      SearchCandidates(state_, *placement_, *scratch_, *victim_order_, search);
  const int total = nodes_->size();
  if (total > 0) preempt_offset_ = (preempt_offset_ + found.processed) % total;
  out_->reclaim_nodes_examined += static_cast<int64_t>(found.examined);
  out_->reclaim_candidates += static_cast<int64_t>(found.plan.candidates.size());
  if (!found.plan.found()) return fail();

  // Execute: evict, then hold the node for the preemptor.
  const std::string node = found.plan.chosen.node;
  std::vector<std::string> victims;
  for (const NormalizedPod* v : found.plan.chosen.victims)
    victims.push_back(v->store_key());
  const std::string uid = scratch_->store_key();
  for (const auto& v : victims)
    Evict(v, info.tenant);
  FillScratch(b, id);
  if (state_.FindPod(uid) == nullptr) state_.UpsertPod(*scratch_);
  const int64_t expires = now_ + options_.nomination_ttl_ms;
  state_.Nominate(uid, node, expires);
  nominations_[uid] = OurNomination{nodes_->IndexOf(node), expires};
  expiries_.insert(expires);
  ++out_->reclaims;
  ++epoch_;
  qb.reclaim_retry_after_ms = INT64_MIN;
  return true;
}

void SimEngine::ReclaimPass() {
  for (int b : queue_.ParkedInOrder()) {
    const PendingQueue::Park park = queue_.bucket(b).park;
    if (park == PendingQueue::Park::kActive || park == PendingQueue::Park::kIdle) continue;
    if (TryReclaim(b, queue_.First(b))) queue_.Wake(b);
  }
}

}  // namespace capext
