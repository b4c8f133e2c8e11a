// SimEngine's admission of pod groups (docs/workloads.md), beside /filter:
//  - gang admission (SimulationOptions::admission = kGang): gate mode. An arriving pod is gated
//    when it is a script pod of a namespace an ElasticQuota governs, without a node (the webhook
//    of a scenario's `admission: gate`), or a workload pod of a group (minMember >= 2) of such a
//    namespace (run and compare: single workload pods go straight to the queue, as pods that
//    slipped past the gate would, and /filter enforces every rule for them). A gated pod is in
//    the state (a member of its group, not pending, not counted) but not in kube-scheduler's
//    queue. Whenever the cluster has changed and some pod is gated, core's admission queue
//    (PlanAdmissions) runs: each admitted unit's pods lose the gate and hold their quota (the
//    admitted-at annotation's derived hold) and join the queue; a starting group past its
//    timeout has the holds of its admitted members released and its members with a controller
//    evicted (script pods; simulated workload pods have none); a gang that lost its core has the
//    admission of its admitted members without a controller revoked (RevokeAdmission: the
//    annotation's removal lands at once), so they pass /filter only with their gang;
//  - filter mode's group rule (CheckGroupQuota) is applied by TryFirst for pods whose group the
//    state knows (a member as the state files it); the first member to pass holds the rest of its
//    group's need (HoldGroupNeed);
//  - controllers (SimulationOptions::recreate_evicted): an evicted script pod with a controller
//    is replaced by <name>-r1, -r2, ... (its spec, a new uid, created now), gated again in gang
//    admission.
#include <fmt/format.h>

#include "bench/sim/sim_engine.h"
#include "core/admission_queue.h"
#include "core/reasons.h"

namespace capext {

bool SimEngine::GateOnArrival(uint32_t id) {
  // Fair sharing orders admission through the gate: every quota pod is gated.
  const bool fair = profile_.fair_sharing;
  if (options_.admission != SimAdmission::kGang && !fair) return false;
  const BucketInfo& info = buckets_[pods_[id].bucket];
  if (tenants_[info.tenant].quota == nullptr) return false;
  if (IsScriptPod(id)) {
    if (!script_pod(id).pod.node_name.empty()) return false;
  } else if (!fair && (id >= group_of_.size() || group_of_[id] < 0)) {
    return false;
  }
  state_.UpsertPod(GroupMemberPod(id, /*gated=*/true, 0));
  pods_[id].group_member = true;
  ++gated_;
  admission_due_ = true;
  return true;
}

Pod SimEngine::GroupMemberPod(uint32_t id, bool gated, int64_t admitted_ms) const {
  Pod pod = *buckets_[pods_[id].bucket].prototype;  // namespace, priority, requests, spec
  if (!IsScriptPod(id)) {
    const WorkloadPod& wp = input_.workload.pods[id];
    pod.uid = wp.name;
    pod.name = wp.name;
    pod.creation_ms = pods_[id].queued_ms;
    if (id < group_of_.size() && group_of_[id] >= 0) {
      pod.group = GroupRef{kCoschedulingApiGroup, wp.group, "", ""};
      pod.min_member_annotation = group_min_[static_cast<std::size_t>(group_of_[id])];
    }
  }
  pod.quota_gated = gated;
  pod.admitted_ms = admitted_ms;
  return pod;
}

void SimEngine::AdmissionPass() {
  RecreateEvicted();
  // A gang that lost its core has members to evict or revoke even when nothing is gated.
  if ((!admission_due_ && admission_epoch_ == epoch_) || (gated_ == 0 && !HasLostCore())) return;
  admission_due_ = false;
  AdmissionOptions options;
  options.default_group_timeout_ms = options_.group_timeout_ms;
  options.fair_sharing = profile_.fair_sharing;
  const AdmissionRound round = PlanAdmissions(state_, options, now_);
  ++out_->admission_rounds;
  if (options_.observer) {
    for (const auto& [key, wait] : round.waiting)
      options_.observer("gated", key, wait.message, now_);
  }
  for (const AdmissionUnit& unit : round.admit) {
    for (const std::string& key : unit.pods) {
      auto it = pod_by_uid_.find(key);
      if (it == pod_by_uid_.end()) continue;
      const uint32_t id = it->second;
      SimPod& p = pods_[id];
      if (p.phase != Phase::kPending || !p.gated) continue;
      state_.UpsertPod(GroupMemberPod(id, /*gated=*/false, now_));
      p.gated = false;
      --gated_;
      queue_.Add(p.bucket, p.queued_ms, id);
      ++out_->admitted_by_queue;
    }
  }
  for (const GroupTimeout& t : round.timed_out) {
    for (const std::string& key : t.release_holds)
      state_.ReleaseHold(key);
    // A gang that lost its core: its admitted members without a controller lose their
    // admission, and the patch lands at once (docs/workloads.md#2-holds-quota-without-a-node).
    for (const std::string& key : t.revoke)
      RevokeAdmission(key, t);
    for (const std::string& key : t.evict) {
      auto it = pod_by_uid_.find(key);
      if (it == pod_by_uid_.end()) continue;
      SimPod& p = pods_[it->second];
      if (p.phase == Phase::kRunning) {
        Evict(key, buckets_[p.bucket].tenant);
      } else if (p.phase == Phase::kPending && !p.gated) {
        // Admitted, not bound: leaves the queue and the cluster; its controller re-creates it.
        const BucketInfo& info = buckets_[p.bucket];
        queue_.Remove(p.bucket, p.queued_ms, it->second);
        metrics_->Withdrawn(info.tenant, info.request());
        state_.DeletePod(key);
        p.phase = Phase::kDone;
        p.group_member = false;
        ++out_->evictions;
        if (options_.observer) options_.observer("evict", key, "", now_);
        if (options_.recreate_evicted) recreate_.push_back(it->second);
      }
    }
  }
  ++epoch_;
  admission_epoch_ = epoch_;
  // After the round is recorded: a plan's evictions change the cluster, so the next round runs at
  // this instant (AdmitAndSchedule) and admits the unit into the room the plan freed.
  if (reclaim_) GateReclaimPass(round);
}

bool SimEngine::HasLostCore() const {
  bool lost_core = false;
  if (state_.HasGroups()) {
    state_.ForEachGroup([&](const GroupView& g) { lost_core = lost_core || !g.orphaned.empty(); });
  }
  return lost_core;
}

void SimEngine::RevokeAdmission(const std::string& key, const GroupTimeout& t) {
  auto it = pod_by_uid_.find(key);
  if (it == pod_by_uid_.end()) return;
  const uint32_t id = it->second;
  const SimPod& p = pods_[id];
  if (p.phase != Phase::kPending || p.gated || !p.group_member) return;
  state_.RevokeAdmission(key, now_ + options_.group_timeout_ms);
  // The watch shows the annotation gone: the record ends, the pod is a pending member.
  state_.UpsertPod(GroupMemberPod(id, /*gated=*/false, /*admitted_ms=*/0));
  ++out_->admissions_revoked;
  if (options_.observer) {
    options_.observer("revoke", key,
                      reasons::AdmissionRevoked(t.group.Display(), t.active, t.min_member), now_);
  }
}

void SimEngine::HoldGroupNeed(uint32_t id, const std::vector<std::string>& members) {
  const GroupView* view = state_.GroupOf(*scratch_);
  const int64_t timeout = view != nullptr && view->schedule_timeout_ms > 0
                              ? view->schedule_timeout_ms
                              : options_.group_timeout_ms;
  for (const std::string& key : members) {
    if (key != UidOf(id)) state_.Hold(key, now_, now_ + timeout);
  }
}

void SimEngine::RecreateEvicted() {
  std::vector<uint32_t> ids;
  ids.swap(recreate_);
  for (uint32_t id : ids) {
    if (!IsScriptPod(id) || !script_pod(id).pod.has_controller) continue;
    Pod pod = script_pod(id).pod;
    auto base = base_name_.find(script_pod(id).key);
    const std::string name = base == base_name_.end() ? pod.name : base->second;
    pod.name = fmt::format("{}-r{}", name, ++replacements_[pod.ns + "/" + name]);
    pod.uid = pod.Key();
    pod.creation_ms = now_;
    pod.node_name.clear();
    pod.phase = PodPhase::kPending;
    pod.quota_gated = false;
    pod.admitted_ms = 0;
    if (pod_by_uid_.count(pod.uid) != 0) continue;
    base_name_[pod.uid] = name;
    const auto new_id = static_cast<uint32_t>(pods_.size());
    script_pods_.push_back(ScriptPod{pod, pod.uid, now_});
    pods_.emplace_back();
    pod_by_uid_.emplace(pod.uid, new_id);
    pods_[new_id].bucket = BucketForScriptPod(pod, TenantIndex(pod.ns));
    pods_[new_id].queued_ms = now_;
    if (group_of_.size() < pods_.size()) group_of_.resize(pods_.size(), -1);
    if (options_.observer) options_.observer("create", pod.uid, "", now_);
    CreateScriptPod(pod);
  }
}

}  // namespace capext
