// SimEngine's reclaim half: the reclaim controller of capacity-semantics 4 (and kube-scheduler's
// own lower-priority preemption, which is the same 1.2 algorithm for pods without a quota),
// played on the simulator's state. The decisions are the core's: MakePreemptorContext,
// EligibleToPreempt, SelectVictimsOnNode (1.2) per node and 1.3's order, as FindPreemption strings
// them together. The engine chooses which nodes to ask about:
//  - the pool: nodes where 1.2 can find a candidate at all (VictimBound, a necessary condition),
//    from a rotating offset; under kube-scheduler sampling at most DefaultPreemption's number
//    (max(100, 10% of nodes)) of them, otherwise all;
//  - within the pool, 1.2 runs in the order of a lower bound of each node's 1.3 key and stops
//    when no remaining node can beat the best candidate (candidate_order.h): the same choice as
//    running 1.2 on every pool node, at a fraction of the cost.
#include <algorithm>

#include "bench/sim/candidate_order.h"
#include "bench/sim/sim_engine.h"
#include "core/preemption.h"
#include "core/quota_admission.h"
#include "core/quota_semantics.h"

namespace capext {

bool SimEngine::IsVictimEntry(const NodeTenantUsage& u) const {
  if (u.pods == 0 || is_victim_tenant_[u.tenant] == 0) return false;
  return !victims_below_priority_only_ || u.priority < scratch_.priority;
}

// What the victims must free, beyond node fit, for the quota check 1.2 runs after removing them
// (with the request alone): the amounts by which the request now exceeds the aggregated min or,
// for a preemptor above its min, its own max. Returns false when no removal can ever help (the
// max is exceeded but victims come from other namespaces).
bool SimEngine::ComputeReclaimNeed(const PreemptorContext& ctx, ReclaimNeed* need) const {
  need->quota.assign(nodes_->dims().size(), 0);
  need->quota_pods = 0;
  if (ctx.quota == nullptr) return true;
  const QuotaBook& book = state_.quotas();
  auto add = [&](const std::vector<Excess>& excesses) {
    for (const Excess& e : excesses) {
      const int64_t amount = SaturatingSub(SaturatingAdd(e.used, e.add), e.limit);
      if (e.resource == kResourcePods) {
        need->quota_pods = std::max(need->quota_pods, amount);
      } else if (const int d = nodes_->DimOf(e.resource); d >= 0) {
        need->quota[d] = std::max(need->quota[d], amount);
      }
      // Other resources: not tracked per node; 1.2 decides.
    }
  };
  auto over_max =
      ExceedsMax(state_.semantics(), *ctx.quota, book.Used(ctx.pod->ns), ctx.quota_request);
  if (!over_max.empty() && !ctx.more_than_min) return false;
  add(over_max);
  add(ExceedsAggregateMin(state_.semantics(), *ctx.quota, book.totals(), ctx.quota_request));
  return true;
}

// A bound on 1.3's key for whatever 1.2 finds on node n. The victims are among the pods 1.2 may
// take there and must free what node fit (nominations ignored: they only add) and the quota
// check need. Hence, with P the smallest priority such that those pods of priority <= P free
// enough: the most important victim has priority >= P. If it is exactly P, every victim has
// priority <= P, so there are at least as many victims as the largest such pods would need; a
// single victim must cover the whole need alone, so its start is at most the latest start of
// such pods of priority P (with no such pod, at least two victims); several victims of priority
// P have their earliest start at most the latest start among priority P. False when no P works:
// 1.2 removes at most those pods, so the node has no candidate.
bool SimEngine::VictimBound(int n, const DenseRequest& r, const ReclaimNeed& need, bool refine,
                            CandidateKey* bound) const {
  thread_local std::vector<const NodeTenantUsage*> entries;
  thread_local std::vector<int64_t> freed, largest, needed;
  const std::size_t dims = nodes_->dims().size();
  // What the victims must free, per dimension and in pods.
  needed.assign(need.quota.begin(), need.quota.end());
  for (const auto& [d, amount] : r.dims)
    needed[d] = std::max(needed[d], amount - nodes_->Free(n, d));
  const int64_t needed_pods = std::max<int64_t>(need.quota_pods, 1 - nodes_->PodSlots(n));
  freed.assign(dims, 0);
  int64_t pods = 0;
  // First, whether every pod of the victim tenants together would do, whatever its priority (a
  // superset of the candidates, from one compact row per tenant).
  if (!tenant_totals_.empty()) {
    const int64_t* row =
        &tenant_totals_[static_cast<std::size_t>(n) * tenants_.size() * tenant_totals_width_];
    for (int t : victim_tenants_) {
      const int64_t* totals = row + static_cast<std::size_t>(t) * tenant_totals_width_;
      pods += totals[0];
      for (std::size_t d = 0; d < dims; ++d)
        freed[d] += totals[1 + d];
    }
    if (pods < needed_pods) return false;
    for (std::size_t d = 0; d < dims; ++d) {
      if (freed[d] < needed[d]) return false;
    }
    freed.assign(dims, 0);
    pods = 0;
  }
  // Then, whether all the candidates together would do (most nodes fail here).
  entries.clear();
  for (const NodeTenantUsage& u : node_tenants_[n]) {
    if (!IsVictimEntry(u)) continue;
    entries.push_back(&u);
    pods += u.pods;
    for (std::size_t d = 0; d < dims; ++d)
      freed[d] += u.used()[d];
  }
  if (entries.empty() || pods < needed_pods) return false;
  for (std::size_t d = 0; d < dims; ++d) {
    if (freed[d] < needed[d]) return false;
  }
  std::sort(entries.begin(), entries.end(), [](const NodeTenantUsage* a, const NodeTenantUsage* b) {
    return a->priority < b->priority;
  });
  freed.assign(dims, 0);
  largest.assign(dims, 0);
  pods = 0;
  auto enough = [&] {
    if (pods < needed_pods) return false;
    for (std::size_t d = 0; d < dims; ++d) {
      if (freed[d] < needed[d]) return false;
    }
    return true;
  };
  auto covers = [&](const DenseRequest& pod) {
    if (needed_pods > 1) return false;
    for (std::size_t d = 0; d < dims; ++d) {
      if (needed[d] <= 0) continue;
      int64_t amount = 0;
      for (const auto& [pd, a] : pod.dims) {
        if (static_cast<std::size_t>(pd) == d) amount = a;
      }
      if (amount < needed[d]) return false;
    }
    return true;
  };
  const int32_t lowest = entries.front()->priority;
  std::size_t i = 0;
  while (i < entries.size()) {
    const int32_t priority = entries[i]->priority;
    const std::size_t level_begin = i;
    for (; i < entries.size() && entries[i]->priority == priority; ++i) {
      const NodeTenantUsage& u = *entries[i];
      pods += u.pods;
      for (std::size_t d = 0; d < dims; ++d)
        freed[d] += u.used()[d];
      if (!refine) continue;
      for (const auto& member : u.members) {
        for (const auto& [d, amount] : member.second->dims)
          largest[d] = std::max(largest[d], amount);
      }
    }
    if (!enough()) continue;
    if (!refine) {
      // The cheap bound: priority only (one victim, the best possible start).
      *bound = LowerBoundKey(nodes_->name(n), priority, INT64_MAX, 1, lowest);
      return true;
    }
    int64_t count = std::max<int64_t>(1, needed_pods);
    for (std::size_t d = 0; d < dims; ++d) {
      if (needed[d] > 0 && largest[d] > 0)
        count = std::max(count, (needed[d] + largest[d] - 1) / largest[d]);
    }
    int64_t latest = INT64_MIN, latest_single = INT64_MIN;
    for (std::size_t k = level_begin; k < i; ++k) {
      for (const auto& [start, request] : entries[k]->members) {
        latest = std::max(latest, start);
        if (count == 1 && covers(*request)) latest_single = std::max(latest_single, start);
      }
    }
    if (count == 1) {
      if (latest_single != INT64_MIN) {
        latest = latest_single;
      } else {
        count = 2;
      }
    }
    *bound =
        LowerBoundKey(nodes_->name(n), priority, latest, static_cast<std::size_t>(count), lowest);
    return true;
  }
  return false;
}

bool SimEngine::TryReclaim(int b, uint32_t id) {
  PendingQueue::Bucket& qb = queue_.bucket(b);
  // Nothing changed since this bucket's last failed attempt (the answer would be the same), or
  // it failed less than a reclaim interval ago (the controller's period: failed attempts are
  // retried by the periodic pass, not on every scheduling failure).
  if (qb.reclaim_failed_epoch == epoch_ || now_ < qb.reclaim_retry_after_ms) return false;
  auto fail = [&] {
    qb.reclaim_failed_epoch = epoch_;
    qb.reclaim_retry_after_ms = SaturatingAdd(now_, options_.reclaim_interval_ms);
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

  // Whose pods 1.2 may take (victim tenants; priorities per node entry).
  victim_tenants_.clear();
  is_victim_tenant_.assign(tenants_.size(), 0);
  victims_below_priority_only_ = ctx.quota == nullptr || ctx.more_than_min;
  for (std::size_t t = 0; t < tenants_.size(); ++t) {
    const TenantState& ts = tenants_[t];
    if (ts.bound == 0) continue;
    bool take = false;
    if (ctx.quota != nullptr) {
      take = ctx.more_than_min ? static_cast<int>(t) == info.tenant
                               : static_cast<int>(t) != info.tenant && ts.quota != nullptr &&
                                     IsBorrowing(state_.semantics(), *ts.quota, book.Used(ts.name));
    } else {
      take = ts.quota == nullptr;
    }
    if (take && victims_below_priority_only_) {
      // The lowest priority with pods bound (bound_by_priority keeps entries at zero).
      bool below = false;
      for (const auto& [priority, count] : ts.bound_by_priority) {
        if (count == 0) continue;
        below = priority < scratch_.priority;
        break;
      }
      if (!below) take = false;
    }
    if (take) {
      victim_tenants_.push_back(static_cast<int>(t));
      is_victim_tenant_[t] = 1;
    }
  }
  if (victim_tenants_.empty()) return fail();
  ReclaimNeed need;
  if (!ComputeReclaimNeed(ctx, &need)) return fail();

  // The pool: nodes where 1.2 may find a candidate, from a rotating offset (kube-scheduler
  // sampling: DefaultPreemption's number of them; otherwise every one).
  const int total = nodes_->size();
  struct PoolNode {
    CandidateKey bound;
    int node;
  };
  std::vector<PoolNode> pool;
  int processed = total;
  for (int i = 0; i < total; ++i) {
    int n = preempt_offset_ + i;
    if (n >= total) n -= total;
    if (!nodes_->StaticOk(info.static_class, n) || !nodes_->FitsAllocatable(info.request, n))
      continue;
    CandidateKey bound;
    if (!VictimBound(n, info.request, need, /*refine=*/false, &bound)) continue;
    pool.push_back({std::move(bound), n});
    if (pool.size() >= num_candidates_) {
      processed = i + 1;
      break;
    }
  }
  if (total > 0) preempt_offset_ = (preempt_offset_ + processed) % total;
  if (pool.empty()) return fail();

  // 1.2 on the pool's nodes, most promising first, until no remaining node can beat the best
  // candidate (its bound is not before the best key): the choice 1.3 makes over the whole pool.
  // Nodes are grouped by the priority part of their bound; a group's bounds are refined (victim
  // count, start) only when the group is reached.
  std::sort(pool.begin(), pool.end(),
            [](const PoolNode& a, const PoolNode& b) { return Before(a.bound, b.bound); });
  std::vector<NodeVictims> candidates;
  std::size_t best = 0;
  CandidateKey best_key;
  auto beaten = [&](const CandidateKey& bound) {
    return !candidates.empty() && !options_.exhaustive_reclaim && !Before(bound, best_key);
  };
  for (std::size_t group = 0; group < pool.size();) {
    if (beaten(pool[group].bound)) break;
    std::size_t end = group;
    while (end < pool.size() &&
           pool[end].bound.highest_priority == pool[group].bound.highest_priority)
      ++end;
    for (std::size_t k = group; k < end; ++k)
      VictimBound(pool[k].node, info.request, need, /*refine=*/true, &pool[k].bound);
    std::sort(pool.begin() + static_cast<std::ptrdiff_t>(group),
              pool.begin() + static_cast<std::ptrdiff_t>(end),
              [](const PoolNode& a, const PoolNode& b) { return Before(a.bound, b.bound); });
    for (std::size_t k = group; k < end; ++k) {
      const PoolNode& entry = pool[k];
      if (beaten(entry.bound)) break;
      ++out_->reclaim_nodes_examined;
      NodeVictims v = SelectVictimsOnNode(
          state_, ctx,
          NodeInfo{nodes_->node(entry.node), &state_.UsageOf(nodes_->name(entry.node))},
          more_important_);
      if (!v.candidate) continue;
      CandidateKey key = KeyOf(v);
      candidates.push_back(std::move(v));
      if (candidates.size() == 1 || Before(key, best_key)) {
        best = candidates.size() - 1;
        best_key = std::move(key);
      }
    }
    group = end;
  }
  out_->reclaim_candidates += static_cast<int64_t>(candidates.size());
  if (candidates.empty()) return fail();
  // The core's own choice over what was examined (the same node: checked by the tests).
  if (options_.exhaustive_reclaim) best = ChooseCandidate(candidates);
  const NodeVictims& chosen = candidates[best];

  // Execute: evict, then hold the node for the preemptor.
  const std::string node = chosen.node;
  std::vector<std::string> victims;
  for (const Pod* v : chosen.victims)
    victims.push_back(v->uid.empty() ? v->Key() : v->uid);
  const std::string uid = scratch_.uid;
  for (const auto& v : victims)
    Evict(v, info.tenant);
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
