// SimEngine's reclaim half: the reclaim controller of capacity-semantics 4 (and kube-scheduler's
// own lower-priority preemption, which is the same 1.2 algorithm for pods without a quota),
// played on the simulator's state. The decision is the core's FindPreemption (1.2 per node,
// 1.3 to choose); the engine only narrows the nodes it is asked about to those where 1.2 could
// find a candidate at all, which never changes the answer (see CouldFitWithoutVictims), and,
// under kube-scheduler sampling, to DefaultPreemption's number of candidates.
#include <algorithm>

#include "bench/sim_engine.h"
#include "core/preemption.h"
#include "core/quota_semantics.h"

namespace capext {

// True when node n holds pods of a victim tenant and the pod would fit there (by resources,
// nominations ignored) if every pod of the victim tenants on it were gone. A node failing this
// is never a 1.2 candidate: 1.2 removes at most those pods, then requires node fit.
bool SimEngine::CouldFitWithoutVictims(int n, const DenseRequest& r) const {
  int64_t pods = 0;
  thread_local std::vector<int64_t> freed;
  freed.assign(nodes_->dims().size(), 0);
  for (const NodeTenantUsage& u : node_tenants_[n]) {
    if (u.pods == 0 ||
        std::find(victim_tenants_.begin(), victim_tenants_.end(), u.tenant) == victim_tenants_.end()) {
      continue;
    }
    pods += u.pods;
    for (std::size_t d = 0; d < freed.size(); ++d) freed[d] += u.used[d];
  }
  if (pods == 0) return false;
  if (nodes_->PodSlots(n) + pods < 1) return false;
  for (const auto& [d, amount] : r.dims) {
    if (nodes_->Free(n, d) + freed[d] < amount) return false;
  }
  return true;
}

bool SimEngine::TryReclaim(int b, uint32_t id) {
  PendingQueue::Bucket& qb = queue_.bucket(b);
  // Nothing changed since this bucket's last failed attempt: the answer would be the same.
  if (qb.reclaim_failed_epoch == epoch_) return false;
  auto fail = [&] {
    qb.reclaim_failed_epoch = epoch_;
    return false;
  };
  FillScratch(b, id);
  if (nominations_.count(scratch_.uid) != 0) return fail();  // a reclaim is in flight
  ++out_->reclaim_attempts;
  const BucketInfo& info = buckets_[b];
  const QuotaBook& book = state_.quotas();
  const PreemptorContext ctx = MakePreemptorContext(state_, scratch_);
  std::string reason;
  if (!EligibleToPreempt(state_, ctx, &reason)) return fail();

  // Which tenants' pods 1.2 may take (a superset: priorities are checked by 1.2 itself).
  auto has_bound_below = [&](const TenantState& t) {
    return !t.bound_by_priority.empty() && t.bound_by_priority.begin()->first < scratch_.priority;
  };
  victim_tenants_.clear();
  for (std::size_t t = 0; t < tenants_.size(); ++t) {
    const TenantState& ts = tenants_[t];
    bool take = false;
    if (ctx.quota != nullptr) {
      if (ctx.more_than_min) {
        take = static_cast<int>(t) == info.tenant && has_bound_below(ts);
      } else {
        take = static_cast<int>(t) != info.tenant && ts.quota != nullptr && ts.bound > 0 &&
               IsBorrowing(state_.semantics(), *ts.quota, book.Used(ts.name));
      }
    } else {
      take = ts.quota == nullptr && has_bound_below(ts);
    }
    if (take) victim_tenants_.push_back(static_cast<int>(t));
  }
  if (victim_tenants_.empty()) return fail();

  const int total = nodes_->size();
  candidate_names_.clear();
  int processed = total;
  for (int i = 0; i < total; ++i) {
    int n = preempt_offset_ + i;
    if (n >= total) n -= total;
    if (!nodes_->StaticOk(info.static_class, n) || !nodes_->FitsAllocatable(info.request, n)) continue;
    if (!CouldFitWithoutVictims(n, info.request)) continue;
    candidate_names_.push_back(nodes_->name(n));
    if (candidate_names_.size() == num_candidates_) {
      processed = i + 1;
      break;
    }
  }
  if (total > 0) preempt_offset_ = (preempt_offset_ + processed) % total;
  if (candidate_names_.empty()) return fail();

  PreemptionPlan plan = FindPreemption(state_, scratch_, more_important_, candidate_names_);
  if (!plan.found) return fail();

  // Execute: evict, then hold the node for the preemptor.
  const std::string node = plan.chosen.node;
  std::vector<std::string> victims;
  for (const Pod* v : plan.chosen.victims) victims.push_back(v->uid.empty() ? v->Key() : v->uid);
  const std::string uid = scratch_.uid;
  for (const auto& v : victims) Evict(v, info.tenant);
  FillScratch(b, id);
  if (state_.FindPod(uid) == nullptr) state_.UpsertPod(scratch_);
  const int64_t expires = now_ + options_.nomination_ttl_ms;
  state_.Nominate(uid, node, expires);
  const int n = nodes_->IndexOf(node);
  nominations_[uid] = OurNomination{n, expires};
  nodes_->AddNomination(n, +1);
  expiries_.insert(expires);
  ++out_->reclaims;
  ++epoch_;
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
