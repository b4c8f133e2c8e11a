// SimEngine's scheduling half: one attempt for the first pod of the first active bucket (quota
// check, node scan, score, bind), and the bookkeeping of pods starting and stopping.
#include <algorithm>

#include "bench/sim/sim_engine.h"
#include "core/node_fit.h"
#include "core/quota_admission.h"

namespace capext {

void SimEngine::Schedule() {
  int b = 0;
  while (queue_.Top(&b))
    TryFirst(b);
}

void SimEngine::FillScratch(int b, uint32_t id) {
  if (scratch_bucket_ != b) {
    scratch_ = buckets_[b].prototype;
    scratch_bucket_ = b;
  }
  scratch_.uid = input_.workload.pods[id].name;
  scratch_.name = scratch_.uid;
  scratch_.creation_ms = pods_[id].queued_ms;
}

void SimEngine::TryFirst(int b) {
  const uint32_t id = queue_.First(b);
  FillScratch(b, id);
  ++out_->decisions;
  const BucketInfo& info = buckets_[b];
  bool quota_blocked = false;
  if (tenants_[info.tenant].quota != nullptr) quota_blocked = !CheckQuota(state_, scratch_).ok();
  if (!quota_blocked) {
    const int n = FindNode(b);
    if (n >= 0) {
      Bind(b, id, n);
      return;
    }
  }
  ++out_->failed_attempts;
  // The reclaim controller (and kube-scheduler's preemption) for a pod that fits nowhere. On
  // success the bucket stays active: its pod is retried at once on the emptied node.
  if (reclaim_ && TryReclaim(b, id)) return;
  if (quota_blocked) {
    ParkForQuota(b);
  } else {
    queue_.ParkForNodes(b);
  }
}

bool SimEngine::FitsNow(int b, int n) {
  const BucketInfo& info = buckets_[b];
  if (!nodes_->StaticOk(info.static_class, n)) return false;
  if (nodes_->NominationCount(n) == 0) return nodes_->Fits(info.request, n);
  // Nominations on the node: the core's exact check (they hold room against pods of lower or
  // equal priority).
  const NodeUsage& usage = state_.UsageOf(nodes_->name(n));
  ResourceList requested = usage.requested;
  int32_t count = usage.pod_count;
  AddNominationsAgainst(state_, scratch_, nodes_->name(n), &requested, &count);
  return CheckNodeResources(scratch_, nodes_->node(n), requested, count).ok();
}

int SimEngine::BestOf(int b, const std::vector<int>& feasible) {
  // kube-scheduler's selectHost with a name tie-break: the highest score, the first node by
  // name among equals.
  const BucketInfo& info = buckets_[b];
  int best = -1;
  int best_score = -1;
  for (int n : feasible) {
    const int s = nodes_->CachedScore(scoring_, info.request, info.shape, n);
    if (s > best_score || (s == best_score && n < best)) {
      best = n;
      best_score = s;
    }
  }
  return best;
}

int SimEngine::FindNode(int b) {
  PendingQueue::Bucket& qb = queue_.bucket(b);
  feasible_.clear();
  if (qb.wake_list_valid) {
    // Every node this pod could fit on is in the list (pending_queue.h).
    for (int n : qb.wake_nodes) {
      if (FitsNow(b, n)) feasible_.push_back(n);
    }
    if (feasible_.size() < num_to_find_ || options_.sampling == NodeSampling::kAll) {
      // A full scan would have examined every node and found exactly these: same answer, and
      // the start index would have moved by a whole turn.
      queue_.SetWakeList(b, true, feasible_);
      return BestOf(b, feasible_);
    }
    feasible_.clear();  // enough for a sample: the rotating scan decides which ones
  }
  const int total = nodes_->size();
  const BucketInfo& info = buckets_[b];
  const std::size_t limit =
      options_.sampling == NodeSampling::kKubeScheduler ? num_to_find_ : SIZE_MAX;
  int best = -1;
  const int processed = nodes_->ScanBest(
      info.request, info.static_class, info.shape, scoring_, start_index_, limit, &feasible_,
      [&](int n) { return FitsNow(b, n); }, &best);
  if (total > 0) start_index_ = (start_index_ + processed) % total;
  const bool complete = processed == total;
  if (complete || qb.wake_list_valid)
    queue_.SetWakeList(b, complete, complete ? feasible_ : std::vector<int>());
  return best;
}

void SimEngine::TrackBound(int tenant, int32_t priority, int n, const DenseRequest& r, int sign,
                           int64_t start_ms) {
  TenantState& t = tenants_[tenant];
  // Entries stay at zero (no erase and re-insert as pods come and go); readers skip them.
  t.bound_by_priority[priority] += sign;
  t.bound += sign;
  auto& list = node_tenants_[n];
  auto it = std::find_if(list.begin(), list.end(), [&](const NodeTenantUsage& u) {
    return u.tenant == tenant && u.priority == priority;
  });
  if (it == list.end()) {
    list.emplace_back(tenant, priority, nodes_->dims().size());
    it = list.end() - 1;
  }
  it->pods += sign;
  int64_t* used = it->used();
  for (const auto& [d, amount] : r.dims)
    used[d] += sign * amount;
  if (!tenant_totals_.empty()) {
    int64_t* totals = &tenant_totals_[(static_cast<std::size_t>(n) * tenants_.size() +
                                       static_cast<std::size_t>(tenant)) *
                                      tenant_totals_width_];
    totals[0] += sign;
    for (const auto& [d, amount] : r.dims)
      totals[1 + d] += sign * amount;
  }
  const std::pair<int64_t, const DenseRequest*> member{start_ms, &r};
  if (sign > 0) {
    it->members.push_back(member);
  } else if (auto m = std::find(it->members.begin(), it->members.end(), member);
             m != it->members.end()) {
    *m = it->members.back();
    it->members.pop_back();
  }
  // Entries stay when they drop to zero: a tenant that ran on a node usually comes back.
}

void SimEngine::Bind(int b, uint32_t id, int n) {
  SimPod& p = pods_[id];
  const BucketInfo& info = buckets_[b];
  Pod bound = scratch_;
  bound.node_name = nodes_->name(n);
  bound.phase = PodPhase::kRunning;
  bound.start_ms = now_;
  state_.UpsertPod(std::move(bound));  // also ends our nomination for it, if any
  nodes_->PodChanged(state_, n, info.request, +1);
  int released = -1;
  if (auto it = nominations_.find(scratch_.uid); it != nominations_.end()) {
    released = it->second.node;
    nodes_->AddNomination(released, -1);
    expiries_.erase(expiries_.find(it->second.expires_ms));
    nominations_.erase(it);
  }
  p.start_ms = now_ != 0 ? now_ : scratch_.creation_ms;  // EffectiveStartMs of the bound pod
  TrackBound(info.tenant, scratch_.priority, n, info.request, +1, p.start_ms);
  const int64_t arrival = input_.workload.pods[id].arrival_ms;
  metrics_->Started(info.tenant, info.request, now_ - arrival, !p.started);
  if (options_.observer) options_.observer("bind", scratch_.uid, nodes_->name(n), now_);
  p.started = true;
  p.phase = Phase::kRunning;
  p.node = n;
  completions_.push({now_ + input_.workload.pods[id].duration_ms, id, p.generation});
  queue_.PopFirst(b);
  ++out_->binds;
  ++epoch_;
  if (released >= 0) NominationReleased(released);
}

void SimEngine::StopPod(uint32_t id, bool completed) {
  SimPod& p = pods_[id];
  const BucketInfo& info = buckets_[p.bucket];
  state_.DeletePod(input_.workload.pods[id].name);
  const int n = p.node;
  if (options_.observer) {
    options_.observer(completed ? "complete" : "evict", input_.workload.pods[id].name,
                      nodes_->name(n), now_);
  }
  nodes_->PodChanged(state_, n, info.request, -1);
  TrackBound(info.tenant, info.prototype.priority, n, info.request, -1, p.start_ms);
  metrics_->Stopped(info.tenant, info.request, completed);
  p.node = -1;
  ++p.generation;
  ++epoch_;
  NodeFreed(n);
  UsageDropped(info.tenant);
}

void SimEngine::Evict(const std::string& uid, int preemptor_tenant) {
  ++out_->evictions;
  auto it = pod_by_uid_.find(uid);
  if (it != pod_by_uid_.end() && pods_[it->second].phase == Phase::kRunning) {
    const uint32_t id = it->second;
    SimPod& p = pods_[id];
    const int tenant = buckets_[p.bucket].tenant;
    StopPod(id, false);
    metrics_->Evicted(tenant, preemptor_tenant, !p.evicted);
    p.evicted = true;
    if (options_.resubmit_evicted) {
      p.queued_ms = now_;
      Submit(id, true);
    } else {
      p.phase = Phase::kDone;
    }
    return;
  }
  // A pod of the cluster snapshot.
  const Pod* pod = state_.FindPod(uid);
  if (pod == nullptr) return;
  const int tenant = TenantIndex(pod->ns);
  const int n = nodes_->IndexOf(pod->node_name);
  const DenseRequest& r = *background_request_of_.at(uid);
  const int32_t priority = pod->priority;
  const int64_t start = EffectiveStartMs(*pod);
  if (options_.observer) options_.observer("evict", uid, pod->node_name, now_);
  state_.DeletePod(uid);
  metrics_->Stopped(tenant, r, false);
  metrics_->Evicted(tenant, preemptor_tenant, true);
  ++epoch_;
  if (n >= 0) {
    nodes_->Resync(state_, n);
    TrackBound(tenant, priority, n, r, -1, start);
    NodeFreed(n);
  }
  UsageDropped(tenant);
}

void SimEngine::NodeFreed(int n) {
  queue_.OnNodeFreed(n, [this, n](int b) {
    const BucketInfo& info = buckets_[b];
    return nodes_->StaticOk(info.static_class, n) && nodes_->Fits(info.request, n);
  });
}

void SimEngine::UsageDropped(int tenant) {
  if (tenants_[tenant].quota == nullptr || !queue_.HasQuotaParked()) return;
  const QuotaBook& book = state_.quotas();
  const ResourceList used = book.Used(tenants_[tenant].name);
  queue_.OnUsageDropped(
      tenant, [&](const std::string& r) { return used.Get(r); },
      [&](const std::string& r) { return book.totals().used.Get(r); });
}

void SimEngine::NominationReleased(int n) {
  queue_.WakeAllQuotaParked();
  NodeFreed(n);
}

void SimEngine::ParkForQuota(int b) {
  // Which dimension blocked, and below which usage it could pass (pending_queue.h).
  const ElasticQuota& q = *tenants_[buckets_[b].tenant].quota;
  const QuotaBook& book = state_.quotas();
  const NominatedSums sums = ComputeNominatedSums(state_, scratch_);
  auto over_max = ExceedsMax(state_.semantics(), q, book.Used(q.ns), sums.in_eq);
  if (!over_max.empty()) {
    queue_.ParkForQuota(b, true, over_max[0].resource,
                        SaturatingSub(over_max[0].limit, over_max[0].add));
    return;
  }
  auto over_min = ExceedsAggregateMin(state_.semantics(), q, book.totals(), sums.all);
  if (!over_min.empty()) {
    queue_.ParkForQuota(b, false, over_min[0].resource,
                        SaturatingSub(over_min[0].limit, over_min[0].add));
    return;
  }
  // Not reached (the check just failed); wait for any drop of the cluster-wide usage.
  queue_.ParkForQuota(b, false, std::string(kResourceCPU), INT64_MAX);
}

}  // namespace capext
