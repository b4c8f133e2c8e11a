// The reclaim controller's reclaims in flight: following them to their end (bound, expired,
// pod gone), nudging kube-scheduler once the room is there, and the records on their pods that
// let another replica take them over (reclaim_controller.h;
// docs/architecture.md#two-replicas-one-actor, "Reclaims survive the move").
#include "core/placement.h"
#include "extender/log.h"
#include "extender/reclaim/reclaim_controller.h"

namespace capext {

std::string ReclaimRecordNode(std::string_view record) {
  const std::size_t at = record.find('@');
  if (at == std::string_view::npos) return "";
  return std::string(record.substr(0, at));
}

void ReclaimController::FollowLeadership(const Leadership* leadership) {
  leadership_ = leadership;
  evictions_.FollowLeadership(leadership);
}

void ReclaimController::RecordReclaimsWith(ReclaimRecorder* recorder) {
  records_ = recorder;
}

std::map<std::string, std::string> ReclaimController::InFlight() const {
  std::lock_guard lock(mutex_);
  std::map<std::string, std::string> out;
  for (const auto& [uid, r] : in_flight_)
    out[r.pod_key] = r.node;
  return out;
}

bool ReclaimController::Acts() const {
  return leadership_ == nullptr || leadership_->Leads();
}

void ReclaimController::TrackInFlight(int64_t now_ms, bool acts) {
  std::vector<std::string> done;
  std::lock_guard lock(mutex_);
  // Named references, not a structured binding: the lambdas below use them, and clang before 16
  // cannot capture a structured binding (test.sh's ASan+UBSan build uses clang 14).
  for (auto& entry : in_flight_) {
    const auto& uid = entry.first;
    auto& r = entry.second;
    struct View {
      bool exists, bound, nominated, reserved, victims_gone, fits, recorded;
    };
    View v = cache_->Read([&](const ClusterState& state) {
      const NormalizedPod* pod = state.FindPod(uid);
      bool gone = true;
      for (const auto& victim : r.victim_uids)
        gone = gone && state.FindPod(victim) == nullptr;
      // Nudged only once the pod fits where its room is held (a reclaim followed from its
      // record has no victims to watch; a partly evicted plan may never make room).
      const bool fits = pod != nullptr && !pod->IsBound() && gone && !r.nudged &&
                        CheckBind(state, *pod, r.node).ok();
      return View{pod != nullptr,
                  pod != nullptr && pod->IsBound(),
                  state.FindOurNomination(uid) != nullptr,
                  state.FindReservation(uid) != nullptr,
                  gone,
                  fits,
                  pod != nullptr && !pod->reclaim_record.empty()};
    });
    if (v.bound) {
      metrics_->Count("capacity_extender_reclaims_completed_total");
      metrics_->Observe("capacity_extender_reclaim_pending_to_bound_seconds",
                        static_cast<double>(now_ms - r.started_ms) / 1000.0);
      board_.ReclaimEnded(uid, "bound", now_ms);
      Log(LogLevel::kInfo, "reclaim completed", {{"pod", r.pod_key}, {"node", r.node}});
      done.push_back(uid);
    } else if (v.exists && v.reserved) {
      // Its bind is in flight: the reservation holds the room (it replaced our nomination).
    } else if (v.exists && !v.nominated && now_ms < r.started_ms + options_.nomination_ttl_ms) {
      // Its reservation ended without a binding (refused, or unanswered past reservationTTL):
      // the room is held for it again for the rest of the nomination's time, so that a pod tried
      // meanwhile does not take what was freed for it
      // (docs/capacity-semantics.md#8-the-reclaim-controller).
      cache_->Write([&](ClusterState& state) {
        state.Nominate(uid, r.node, r.started_ms + options_.nomination_ttl_ms);
        return 0;
      });
      Log(LogLevel::kInfo, "reclaim holds the room again: the pod's bind did not land",
          {{"pod", r.pod_key}, {"node", r.node}});
    } else if (!v.exists || !v.nominated) {
      if (v.exists && v.recorded) records_to_clear_.insert(uid);
      metrics_->Count("capacity_extender_reclaims_expired_total");
      // Victims evicted for a hold that ended unbound (docs/reclaim-plan.md).
      if (!r.victim_uids.empty()) {
        metrics_->Count("capacity_extender_reclaim_wasted_evictions_total", "", "",
                        static_cast<double>(r.victim_uids.size()));
      }
      board_.ReclaimEnded(uid, v.exists ? "expired" : "pod-deleted", now_ms);
      Log(LogLevel::kWarn, "reclaim ended without a binding",
          {{"pod", r.pod_key},
           {"node", r.node},
           {"reason", v.exists ? "nomination expired" : "pod deleted"}});
      done.push_back(uid);
    } else if (r.resume_at_ms != 0 && now_ms >= r.resume_at_ms && v.victims_gone &&
               (!v.fits || r.gang) && !r.nudged && acts) {
      // Cut short after some evictions, and what they freed is not enough (for a gang, asked of
      // the plan again: its other members' nodes count too): planned again now, keeping the
      // nominations and records (docs/capacity-semantics.md#8-the-reclaim-controller).
      refused_[uid].resume = true;
      index_.Wake(uid);
      Log(LogLevel::kInfo, "reclaim cut short: planning again for what is still missing",
          {{"pod", r.pod_key}, {"node", r.node}});
      done.push_back(uid);
    } else if (v.victims_gone && v.fits && !r.nudged && nudger_ != nullptr && acts) {
      const NormalizedPod pod =
          cache_->Read([&](const ClusterState& state) { return *state.FindPod(uid); });
      r.nudged = nudger_->Nudge(pod);
      if (r.nudged) metrics_->Count("capacity_extender_requeue_nudges_total");
    }
  }
  for (const auto& uid : done)
    in_flight_.erase(uid);
}

void ReclaimController::NoteRecord(const NormalizedPod& pod) {
  if (pod.reclaim_record.empty()) return;
  auto seen = seen_records_.find(pod.store_key());
  if (seen != seen_records_.end() && seen->second == pod.reclaim_record) return;
  records_to_adopt_[pod.store_key()] = pod.reclaim_record;
}

void ReclaimController::AdoptRecords(int64_t now_ms) {
  if (records_to_adopt_.empty()) return;
  std::map<std::string, std::string> noted;
  noted.swap(records_to_adopt_);
  // Named references, not a structured binding: the lambdas below use them, and clang before 16
  // cannot capture a structured binding (test.sh's ASan+UBSan build uses clang 14).
  for (const auto& entry : noted) {
    const auto& uid = entry.first;
    const auto& record = entry.second;
    if (!index_.Tracks(uid)) continue;  // no longer a pending quota pod
    seen_records_[uid] = record;
    {
      std::lock_guard lock(mutex_);
      if (in_flight_.contains(uid)) continue;  // ours, or already followed
    }
    const std::string node = ReclaimRecordNode(record);
    struct Adoption {
      bool adopted = false;
      std::string key;
    };
    const Adoption a = cache_->Write([&](ClusterState& state) {
      Adoption out;
      const NormalizedPod* pod = state.FindPod(uid);
      if (pod == nullptr || !IsPendingQuotaPod(state, *pod) || pod->reclaim_record != record) {
        return out;
      }
      out.key = pod->Key();
      if (node.empty() || !state.FindNode(node) || state.FindOurNomination(uid) != nullptr) {
        return out;
      }
      // The TTL counts from when this replica saw the record: never shorter than the actor's.
      state.Nominate(uid, node, now_ms + options_.nomination_ttl_ms);
      out.adopted = true;
      return out;
    });
    if (!a.adopted) {
      if (!a.key.empty()) {
        Log(LogLevel::kWarn, "reclaim record ignored: its node is unknown",
            {{"pod", a.key}, {"record", record}});
      }
      continue;
    }
    {
      std::lock_guard lock(mutex_);
      in_flight_[uid] = InFlightReclaim{a.key, node, {}, {}, now_ms, false, true};
    }
    board_.ReclaimStarted({uid, a.key, node, {}, "in-flight", now_ms, 0});
    metrics_->Count("capacity_extender_reclaims_adopted_total");
    Log(LogLevel::kInfo, "reclaim in flight followed from its record on the pod",
        {{"pod", a.key}, {"node", node}, {"record", record}});
  }
}

void ReclaimController::ClearEndedRecords() {
  if (records_ == nullptr) {
    records_to_clear_.clear();
    return;
  }
  for (auto it = records_to_clear_.begin(); it != records_to_clear_.end();) {
    const std::string& uid = *it;
    const std::optional<NormalizedPod> pod =
        cache_->Read([&](const ClusterState& state) -> std::optional<NormalizedPod> {
          const NormalizedPod* p = state.FindPod(uid);
          if (p == nullptr || p->IsBound() || p->IsTerminal() || p->reclaim_record.empty() ||
              state.FindOurNomination(uid) != nullptr) {
            return std::nullopt;  // nothing left to remove, or a reclaim in flight again
          }
          return *p;
        });
    if (!pod) {
      it = records_to_clear_.erase(it);
      continue;
    }
    if (!Acts()) return;
    if (records_->Clear(*pod)) {
      it = records_to_clear_.erase(it);
    } else {
      ++it;  // tried again at the next pass
    }
  }
}

}  // namespace capext
