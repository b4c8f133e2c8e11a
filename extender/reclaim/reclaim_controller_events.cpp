// The reclaim controller's outputs besides evictions: each verdict goes to the PendingBoard and,
// as a Warning Event, to the EventRecorder; FlushEvents writes the Events due (its own thread).
#include <set>
#include <string>

#include "extender/log.h"
#include "extender/reclaim/reclaim_controller.h"

namespace capext {
void ReclaimController::RecordEvents(EventRecorder* recorder, EventSink* sink) {
  recorder_ = recorder;
  sink_ = sink;
  evictions_.QueueVictimEvents(recorder->options().reporting_instance);
}

void ReclaimController::Publish(const NormalizedPod& pod, const std::string& quota,
                                PodVerdict verdict, int64_t now_ms) {
  // Under the state's read lock: a pod bound or deleted while it was planned is not published
  // (the events thread, which forgets it once the journal says so, may already have done that).
  cache_->Read([&](const ClusterState& state) {
    const NormalizedPod* now = state.FindPod(pod.store_key());
    if (now == nullptr || !IsPendingQuotaPod(state, *now)) return 0;
    PublishLocked(pod, quota, std::move(verdict), now_ms);
    return 0;
  });
}

void ReclaimController::PublishLocked(const NormalizedPod& pod, const std::string& quota,
                                      PodVerdict verdict, int64_t now_ms) {
  if (recorder_ != nullptr) {
    if (WritesEvent(verdict.code)) {
      recorder_->Observe({pod.ns, pod.name, pod.store_key()}, VerdictName(verdict.code),
                         VerdictAction(verdict.code), verdict.message, now_ms);
    } else {
      recorder_->Quiet(pod.store_key());
    }
  }
  PendingPodRecord record;
  record.uid = pod.store_key();
  record.ns = pod.ns;
  record.name = pod.name;
  record.quota = quota;
  record.priority = pod.priority;
  record.creation_ms = pod.creation_ms;
  record.verdict_ms = now_ms;
  record.verdict = std::move(verdict);
  board_.Set(std::move(record));
}

EventFlushStats ReclaimController::FlushEvents() {
  if (recorder_ == nullptr || sink_ == nullptr) return {};
  // A pod bound or gone since it was last planned gets nothing more written about it (and
  // leaves /pending), however long until it is planned again: the journal's pod entries since the
  // last flush name the candidates. Re-read every pending pod only when the journal cannot say
  // (first flush, overflow) or a quota came or went.
  cache_->Read([&](const ClusterState& state) {
    const ChangeJournal* journal = state.change_journal();
    ChangeJournal::Changes changes;
    if (journal == nullptr || journal != events_journal_seen_) {
      changes.overflowed = true;
    } else {
      changes = journal->Since(events_cursor_);
    }
    events_journal_seen_ = journal;
    events_cursor_ = journal != nullptr ? journal->last_sequence() : 0;
    if (changes.overflowed || !changes.quotas.empty()) {
      const std::set<std::string> pending = PendingQuotaPodUids(state);
      auto is_pending = [&](const std::string& uid) { return pending.contains(uid); };
      recorder_->Retain(is_pending);
      board_.Retain(is_pending);
      return 0;
    }
    for (const auto& uid : changes.pods) {
      const NormalizedPod* pod = state.FindPod(uid);
      if (pod != nullptr && IsPendingQuotaPod(state, *pod)) continue;
      recorder_->Forget(uid);
      board_.Remove(uid);
    }
    return 0;
  });
  // Only the actor writes Events; a follower keeps them due (the new actor writes them).
  if (!Acts()) return {};
  EventFlushStats stats = recorder_->Flush(cache_->NowMs(), *sink_);
  // The victims' Events (victim_event.h), of every reclaim, gate mode's included
  // (reclaim_evictions.h): written once each, not rate-limited (a reclaim's evictions are, by the
  // eviction budget).
  const std::vector<EventObject> victims = evictions_.TakeVictimEvents();
  for (const EventObject& e : victims) {
    const EventWriteResult r = sink_->Create(e);
    if (r.code == EventWriteCode::kOk) {
      ++stats.created;
    } else {
      ++stats.failed;
      stats.errors.push_back(e.ns + "/" + e.pod_name + " " + e.reason + ": " + r.error);
    }
  }
  if (stats.created > 0)
    metrics_->Count("capacity_extender_events_total", "write", "create", stats.created);
  if (stats.patched > 0)
    metrics_->Count("capacity_extender_events_total", "write", "patch", stats.patched);
  if (stats.failed > 0)
    metrics_->Count("capacity_extender_event_write_failures_total", "", "", stats.failed);
  if (stats.deferred > 0)
    metrics_->Count("capacity_extender_events_rate_limited_total", "", "", stats.deferred);
  for (const auto& error : stats.errors)
    Log(LogLevel::kWarn, "event write failed", {{"error", error}});
  return stats;
}

}  // namespace capext
