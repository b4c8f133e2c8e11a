// SimEngine's script steps (capacity-sim scenario, simulation.h's ScriptStep): the script's
// pending pods as engine pods, and each step's creations and deletions applied to the cluster and
// the queue with the same bookkeeping as arrivals, completions and evictions.
#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "bench/sim/sim_engine.h"

namespace capext {

Status SimEngine::SetupScript() {
  std::set<std::string> keys;
  std::vector<ScriptPod> pending;
  for (const ScriptStep& step : input_.script) {
    for (const Pod& pod : step.create) {
      std::string key = pod.uid.empty() ? pod.Key() : pod.uid;
      if (!keys.insert(key).second || state_.FindPod(key) != nullptr) {
        return Status::Invalid(
            fmt::format("script: pod {} is created twice (or exists in the cluster)", key));
      }
      if (pod.IsBound() || pod.IsTerminal()) continue;
      pending.push_back(ScriptPod{pod, std::move(key), step.t_ms});
    }
  }
  // Ids in store key order: the queue's last tie-break, as kube-scheduler's activeQ by name.
  std::sort(pending.begin(), pending.end(),
            [](const ScriptPod& a, const ScriptPod& b) { return a.key < b.key; });
  script_pods_ = std::move(pending);
  const std::size_t first = input_.workload.pods.size();
  pods_.resize(first + script_pods_.size());
  for (std::size_t i = 0; i < script_pods_.size(); ++i) {
    const auto id = static_cast<uint32_t>(first + i);
    const Pod& pod = script_pods_[i].pod;
    pod_by_uid_.emplace(script_pods_[i].key, id);
    pods_[id].bucket = BucketForScriptPod(pod, TenantIndex(pod.ns));
    pods_[id].queued_ms = pod.creation_ms;
  }
  return {};
}

int SimEngine::BucketForScriptPod(const Pod& pod, int tenant) {
  BucketInfo info;
  info.tenant = tenant;
  info.prototype.emplace(state_.Normalize(pod));
  const int32_t priority = info.prototype->priority;
  return AddBucket(std::move(info), priority);
}

void SimEngine::ApplyStep(const ScriptStep& step) {
  for (const Pod& pod : step.create)
    CreateScriptPod(pod);
  for (const std::string& key : step.remove)
    RemovePod(key);
}

void SimEngine::CreateScriptPod(const Pod& pod) {
  const std::string key = pod.uid.empty() ? pod.Key() : pod.uid;
  if (auto it = pod_by_uid_.find(key); it != pod_by_uid_.end() && IsScriptPod(it->second)) {
    // Pending: it waits in the cluster (as the API server keeps it) and in the queue.
    state_.UpsertPod(buckets_[pods_[it->second].bucket].prototype.value());
    Submit(it->second, false);
    return;
  }
  // Bound or finished: joins the cluster as it is. A running one is a new potential victim.
  state_.UpsertPod(pod);
  const NormalizedPod* stored = state_.FindPod(key);
  if (stored == nullptr || !stored->IsBound() || stored->IsTerminal()) return;
  const DenseRequest& r =
      background_request_of_.insert_or_assign(key, nodes_->MakeRequest(stored->requests))
          .first->second;
  metrics_->Background(TenantIndex(stored->ns), r);
  ++epoch_;
}

void SimEngine::RemovePod(const std::string& key) {
  const auto slash = key.find('/');
  if (slash == std::string::npos) return;
  const NormalizedPod* pod = state_.FindPodByName(key.substr(0, slash), key.substr(slash + 1));
  if (pod == nullptr) return;
  const std::string uid = pod->store_key();
  if (auto it = pod_by_uid_.find(uid); it != pod_by_uid_.end()) {
    const uint32_t id = it->second;
    SimPod& p = pods_[id];
    if (p.phase == Phase::kRunning) {
      StopPod(id, Stop::kDeleted);
      p.phase = Phase::kDone;
      return;
    }
    if (p.phase == Phase::kPending) {
      const BucketInfo& info = buckets_[p.bucket];
      queue_.Remove(p.bucket, p.queued_ms, id);
      metrics_->Withdrawn(info.tenant, info.request());
      p.phase = Phase::kDone;
    }
    // Its nomination, ours or kube-scheduler's (from the spec), holds room no more.
    int released = -1;
    if (auto n = nominations_.find(uid); n != nominations_.end()) {
      released = n->second.node;
      expiries_.erase(expiries_.find(n->second.expires_ms));
      nominations_.erase(n);
    } else if (!pod->nominated_node_name.empty()) {
      released = nodes_->IndexOf(pod->nominated_node_name);
    }
    state_.DeletePod(uid);
    if (released >= 0) {
      ++epoch_;
      NominationReleased(released);
    }
    return;
  }
  // A pod of the cluster snapshot, or one the script created bound or finished.
  if (!pod->IsBound() || pod->IsTerminal()) {
    state_.DeletePod(uid);
    return;
  }
  const int tenant = TenantIndex(pod->ns);
  const int n = nodes_->IndexOf(pod->node_name);
  if (options_.observer) options_.observer("delete", uid, pod->node_name, now_);
  const DenseRequest r = background_request_of_.at(uid);
  background_request_of_.erase(uid);
  state_.DeletePod(uid);
  metrics_->Stopped(tenant, r, false);
  ++epoch_;
  if (n >= 0) NodeFreed(n);
  UsageDropped(tenant);
}

}  // namespace capext
