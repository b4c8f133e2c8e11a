// SimEngine's scheduling half: one attempt for the first pod of the first active bucket (the
// core's quota check and placement search, then bind), and the bookkeeping of pods starting and
// stopping.
#include <algorithm>

#include "bench/sim/sim_engine.h"
#include "core/best_node.h"
#include "core/group_quota.h"
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
  // A script pod's bucket is its own, its prototype the pod itself. One naming ResourceClaims is
  // taken as the cluster files it now: its device charge depends on who holds a shared claim
  // (docs/devices.md#5-a-shared-claim-is-charged-once), which the cluster settles as pods come
  // and go, after the prototype was made.
  if (IsScriptPod(id)) {
    if (!scratch_->resource_claims.empty()) {
      if (const NormalizedPod* filed = state_.FindPod(scratch_->store_key())) {
        scratch_ = *filed;
        scratch_bucket_ = -1;  // not the prototype any more
      }
    }
    return;
  }
  // A group member the state files (gang admission, fair sharing) is decided as filed: its group
  // is part of every decision about it (filter mode's group rule, the preemptor's need,
  // docs/workloads.md#4-filter-mode), and a bucket's prototype does not carry it.
  if (pods_[id].group_member) {
    if (const NormalizedPod* filed = state_.FindPod(input_.workload.pods[id].name)) {
      scratch_ = *filed;
      scratch_bucket_ = -1;  // not the prototype any more
      return;
    }
  }
  const std::string& name = input_.workload.pods[id].name;
  scratch_->SetIdentity(name, name, pods_[id].queued_ms);
}

void SimEngine::TryFirst(int b) {
  const uint32_t id = queue_.First(b);
  FillScratch(b, id);
  ++out_->decisions;
  const BucketInfo& info = buckets_[b];
  bool quota_blocked = false;
  GroupQuotaCheck group;  // filter mode's group rule, for a pod whose group the state knows
  if (tenants_[info.tenant].quota != nullptr) {
    if (state_.HasGroups()) group = CheckGroupQuota(state_, *scratch_);
    quota_blocked = group.applies ? !group.status.ok() : !CheckQuota(state_, *scratch_).ok();
  }
  if (!quota_blocked) {
    const int n = FindNode(b);
    if (n >= 0) {
      if (group.applies) HoldGroupNeed(id, group.hold);
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
  return placement_->FitsNode(*scratch_, buckets_[b].profile, n);
}

bool SimEngine::FitsAsideNominations(int b, int n) const {
  const BucketInfo& info = buckets_[b];
  return placement_->StaticOk(info.profile, n) && nodes_->Fits(info.request(), n);
}

std::vector<int> SimEngine::WakeListOf(int b, const std::vector<int>& candidates) const {
  std::vector<int> out;
  for (int n : candidates) {
    if (FitsAsideNominations(b, n)) out.push_back(n);
  }
  return out;
}

int SimEngine::BestOf(int b, const std::vector<int>& feasible) {
  // kube-scheduler's selectHost with a name tie-break, as the core's placement search chooses.
  const BucketInfo& info = buckets_[b];
  BestNode<int> best;
  for (int n : feasible)
    best.Offer(placement_->Score(scoring_, info.profile, n), n);
  return best.id();
}

int SimEngine::FindNode(int b) {
  PendingQueue::Bucket& qb = queue_.bucket(b);
  std::vector<int> feasible;
  if (qb.wake_list_valid) {
    // Every node this pod could fit on is in the list (pending_queue.h).
    for (int n : qb.wake_nodes) {
      if (FitsNow(b, n)) feasible.push_back(n);
    }
    if (feasible.size() < num_to_find_ || options_.sampling == NodeSampling::kAll) {
      // A full scan would have examined every node and found exactly these: same answer, and
      // the start index would have moved by a whole turn. The list keeps the nodes that only a
      // nomination keeps from this pod: they may take the bucket's next pod (pending_queue.h).
      const int best = BestOf(b, feasible);
      queue_.SetWakeList(b, true, WakeListOf(b, qb.wake_nodes));
      return best;
    }
    // Enough for a sample: the rotating scan decides which ones.
  }
  const int total = nodes_->size();
  PlacementQuery query;
  query.start = start_index_;
  query.limit = options_.sampling == NodeSampling::kKubeScheduler ? num_to_find_ : SIZE_MAX;
  query.scoring = scoring_;
  PlacementResult& result = scan_;
  placement_->ScanNodes(*scratch_, buckets_[b].profile, query, &result);
  if (total > 0) start_index_ = (start_index_ + result.examined) % total;
  const bool complete = result.examined == total;
  if (complete) {
    // Every node was examined: the list is every node the bucket's pods fit aside nominations,
    // a superset of the feasible ones (pending_queue.h).
    std::vector<int> all(static_cast<std::size_t>(total));
    for (int n = 0; n < total; ++n)
      all[static_cast<std::size_t>(n)] = n;
    queue_.SetWakeList(b, true, WakeListOf(b, all));
  } else if (qb.wake_list_valid) {
    queue_.SetWakeList(b, false, {});
  }
  return result.best;
}

void SimEngine::Bind(int b, uint32_t id, int n) {
  SimPod& p = pods_[id];
  const BucketInfo& info = buckets_[b];
  if (p.group_member) {
    // Gang admission: the state knows it as a member of its group; it stays one, bound.
    Pod bound = GroupMemberPod(id, /*gated=*/false, 0);
    bound.node_name = nodes_->name(n);
    bound.phase = PodPhase::kRunning;
    bound.start_ms = now_;
    bound.nominated_node_name.clear();
    state_.UpsertPod(std::move(bound));  // its hold becomes usage
  } else {
    NormalizedPod bound = *scratch_;  // normalised by state_ (its bucket's prototype)
    bound.node_name = nodes_->name(n);
    bound.phase = PodPhase::kRunning;
    bound.start_ms = now_;
    bound.nominated_node_name.clear();
    state_.UpsertPod(std::move(bound));  // also ends any nomination for it
  }
  int released = -1;
  if (auto it = nominations_.find(scratch_->store_key()); it != nominations_.end()) {
    released = it->second.node;
    expiries_.erase(expiries_.find(it->second.expires_ms));
    nominations_.erase(it);
  } else if (!scratch_->nominated_node_name.empty()) {
    released = nodes_->IndexOf(scratch_->nominated_node_name);  // kube-scheduler's, from the spec
  }
  p.start_ms = now_ != 0 ? now_ : scratch_->creation_ms;  // EffectiveStartMs of the bound pod
  metrics_->Started(info.tenant, info.request(), now_ - ArrivalOf(id), !p.started);
  if (options_.observer) options_.observer("bind", UidOf(id), nodes_->name(n), now_);
  p.started = true;
  p.phase = Phase::kRunning;
  p.node = n;
  GroupMemberChanged(id, true, false);
  if (const int64_t duration = DurationOf(id); duration != INT64_MAX)
    completions_.push({now_ + duration, id, p.generation});
  queue_.PopFirst(b);
  ++out_->binds;
  ++epoch_;
  if (released >= 0) NominationReleased(released);
}

void SimEngine::StopPod(uint32_t id, Stop why) {
  SimPod& p = pods_[id];
  const BucketInfo& info = buckets_[p.bucket];
  state_.DeletePod(UidOf(id));
  const int n = p.node;
  if (options_.observer) {
    options_.observer(why == Stop::kCompleted ? "complete"
                      : why == Stop::kEvicted ? "evict"
                                              : "delete",
                      UidOf(id), nodes_->name(n), now_);
  }
  metrics_->Stopped(info.tenant, info.request(), why == Stop::kCompleted);
  GroupMemberChanged(id, false, why == Stop::kEvicted);
  p.node = -1;
  p.group_member = false;  // deleted from the state above
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
    StopPod(id, Stop::kEvicted);
    metrics_->Evicted(tenant, preemptor_tenant, !p.evicted);
    p.evicted = true;
    if (options_.resubmit_evicted) {
      p.queued_ms = now_;
      Submit(id, true);
    } else {
      p.phase = Phase::kDone;
      if (options_.recreate_evicted) recreate_.push_back(id);
    }
    return;
  }
  // A pod of the cluster snapshot.
  const NormalizedPod* pod = state_.FindPod(uid);
  if (pod == nullptr) return;
  const int tenant = TenantIndex(pod->ns);
  const int n = nodes_->IndexOf(pod->node_name);
  const DenseRequest r = background_request_of_.at(uid);
  if (options_.observer) options_.observer("evict", uid, pod->node_name, now_);
  state_.DeletePod(uid);
  metrics_->Stopped(tenant, r, false);
  metrics_->Evicted(tenant, preemptor_tenant, true);
  ++epoch_;
  if (n >= 0) NodeFreed(n);
  UsageDropped(tenant);
}

void SimEngine::GroupMemberChanged(uint32_t id, bool started, bool evicted) {
  const int g = id < group_of_.size() ? group_of_[id] : -1;  // script pods: none
  if (g < 0) return;
  int64_t cpu = 0, gpu = 0;
  const int cpu_dim = nodes_->DimOf(kCpuName);
  for (const auto& [d, amount] : buckets_[pods_[id].bucket].request().dims) {
    if (d == cpu_dim) cpu = amount;
    if (d == gpu_dim_) gpu = amount;
  }
  if (started) {
    group_metrics_->MemberStarted(g, cpu, gpu);
  } else {
    group_metrics_->MemberStopped(g, cpu, gpu, evicted);
  }
}

void SimEngine::NodeFreed(int n) {
  queue_.OnNodeFreed(n, [this, n](int b) { return FitsAsideNominations(b, n); });
}

void SimEngine::UsageDropped(int tenant) {
  if (tenants_[tenant].quota == nullptr || !queue_.HasQuotaParked()) return;
  const ResourceList& used = state_.Used(tenants_[tenant].name);
  queue_.OnUsageDropped(
      tenant, [&](const std::string& r) { return used.Get(r); },
      [&](const std::string& r) { return state_.totals().used.Get(r); });
}

void SimEngine::NominationReleased(int n) {
  queue_.WakeAllQuotaParked();
  NodeFreed(n);
}

void SimEngine::ParkForQuota(int b) {
  // Which check blocked, and below which usage it could pass (pending_queue.h).
  const AdmissionPath path = MakeAdmissionPath(state_, *scratch_);
  const QuotaSemantics semantics = state_.semantics();
  for (std::size_t i = 0; i < path.levels.size(); ++i) {
    const auto& level = path.levels[i];
    auto over =
        ExceedsMax(semantics, *level.quota, state_.ledger().NodeUsed(level.node), path.InEq(level));
    if (over.empty()) continue;
    if (level.node == path.leaf) {
      // The tenant's own max: it waits on the tenant's usage.
      queue_.ParkForQuota(b, true, std::string(over[0].resource.str()),
                          SaturatingSub(over[0].limit, over[0].add));
    } else {
      // A parent's max (or a parent's own namespace): any drop of any quota's usage may help.
      queue_.ParkForQuota(b, false, std::string(over[0].resource.str()), INT64_MAX);
    }
    return;
  }
  auto over_min = ExceedsAggregateMin(semantics, *path.root, state_.totals(), path.sums.all);
  if (!over_min.empty()) {
    queue_.ParkForQuota(b, false, std::string(over_min[0].resource.str()),
                        SaturatingSub(over_min[0].limit, over_min[0].add));
    return;
  }
  // Not reached (the check just failed); wait for any drop of the cluster-wide usage.
  queue_.ParkForQuota(b, false, std::string(kResourceCPU), INT64_MAX);
}

}  // namespace capext
