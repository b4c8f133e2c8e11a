#include "extender/reclaim/event_recorder.h"

#include <algorithm>
#include <tuple>

#include <fmt/format.h>

namespace capext {
namespace {

constexpr std::size_t kNoteLimit = 1024;     // the API server's limit on note, in bytes
constexpr std::size_t kNameLimit = 253;      // a DNS subdomain
constexpr std::size_t kNameSuffixSize = 17;  // "." + 16 hex digits

bool IsAlphanumeric(char c) {
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

}  // namespace

EventRecorder::EventRecorder(EventRecorderOptions options)
    : options_(std::move(options)), global_(options_.events_per_second, options_.burst) {}

std::string EventRecorder::EventName(std::string_view pod_name, uint64_t nanos) {
  std::string prefix(pod_name.substr(0, kNameLimit - kNameSuffixSize));
  // A cut may leave a '-' or '.' at the end; a subdomain label must end alphanumeric.
  while (!prefix.empty() && !IsAlphanumeric(prefix.back()))
    prefix.pop_back();
  if (prefix.empty()) prefix = "pod";
  return fmt::format("{}.{:x}", prefix, nanos);
}

std::string EventRecorder::LimitNote(std::string_view note) {
  if (note.size() <= kNoteLimit) return std::string(note);
  std::size_t end = kNoteLimit - 3;
  // Step back over UTF-8 continuation bytes so no character is cut in half.
  while (end > 0 && (static_cast<unsigned char>(note[end]) & 0xC0) == 0x80)
    --end;
  return std::string(note.substr(0, end)) + "...";
}

void EventRecorder::Observe(const EventSubject& pod, std::string_view reason,
                            std::string_view action, std::string_view note, int64_t now_ms) {
  const std::string limited = LimitNote(note);
  std::lock_guard lock(mutex_);
  PodEvents& p = pods_[pod.uid];
  p.subject = pod;
  if (p.has_current && p.series.back().reason == reason && p.series.back().note == limited) {
    return;  // the same verdict: its series grows at its refresh
  }
  auto same = std::find_if(p.series.begin(), p.series.end(), [&](const Series& s) {
    return s.reason == reason && s.note == limited;
  });
  if (same != p.series.end()) {
    // A verdict the pod had before: continue its Event (moved last = current).
    std::rotate(same, same + 1, p.series.end());
  } else {
    Series s;
    s.id = ++next_series_id_;
    s.reason = std::string(reason);
    s.action = std::string(action);
    s.note = limited;
    s.event_time_ms = now_ms;
    p.series.push_back(std::move(s));
    if (p.series.size() > std::max<std::size_t>(1, options_.series_per_pod)) {
      p.series.erase(p.series.begin());
    }
  }
  p.has_current = true;
  Requeue(pod.uid, p);
}

void EventRecorder::Quiet(const std::string& uid) {
  std::lock_guard lock(mutex_);
  if (auto it = pods_.find(uid); it != pods_.end()) it->second.has_current = false;
  queue_.Remove(uid);
}

void EventRecorder::Forget(const std::string& uid) {
  std::lock_guard lock(mutex_);
  pods_.erase(uid);
  queue_.Remove(uid);
}

void EventRecorder::Retain(const std::function<bool(const std::string&)>& keep) {
  std::lock_guard lock(mutex_);
  std::erase_if(pods_, [&](const auto& entry) {
    if (keep(entry.first)) return false;
    queue_.Remove(entry.first);
    return true;
  });
}

void EventRecorder::Requeue(const std::string& uid, const PodEvents& pod) {
  if (!pod.has_current) {
    queue_.Remove(uid);
    return;
  }
  const Series& s = pod.series.back();
  if (s.next_attempt_ms != 0) {
    queue_.Put(uid, pod.subject.ns, EventWriteQueue::Place::kRetry, s.next_attempt_ms);
  } else if (!s.created) {
    queue_.Put(uid, pod.subject.ns, EventWriteQueue::Place::kCreate, s.event_time_ms);
  } else {
    queue_.Put(uid, pod.subject.ns, EventWriteQueue::Place::kRefresh, s.last_write_ms);
  }
}

TokenBucket& EventRecorder::NamespaceBucket(const std::string& ns) {
  auto it = namespaces_.find(ns);
  if (it == namespaces_.end()) {
    it = namespaces_
             .emplace(ns, TokenBucket(options_.namespace_events_per_minute / 60.0,
                                      options_.namespace_burst))
             .first;
  }
  return it->second;
}

EventObject EventRecorder::ToCreate(const PodEvents& pod, const Series& s, int32_t count,
                                    int64_t now_ms) {
  EventObject e;
  e.ns = pod.subject.ns;
  // Unique per attempt: the clock in nanoseconds plus a sequence for writes in the same ms.
  const uint64_t nanos = static_cast<uint64_t>(now_ms) * 1'000'000 + (++name_sequence_ % 1'000'000);
  e.name = EventName(pod.subject.name, nanos);
  e.pod_name = pod.subject.name;
  e.pod_uid = pod.subject.uid;
  e.type = "Warning";
  e.reason = s.reason;
  e.action = s.action;
  e.note = s.note;
  e.reporting_controller = options_.reporting_controller;
  e.reporting_instance = options_.reporting_instance;
  e.event_time_us = s.event_time_ms * 1000;
  if (count >= 2) {
    e.series_count = count;
    e.series_last_observed_us = now_ms * 1000;
  }
  return e;
}

EventFlushStats EventRecorder::Flush(int64_t now_ms, EventSink& sink) {
  EventFlushStats stats;
  std::vector<Write> writes;
  {
    std::lock_guard lock(mutex_);
    // Failed writes whose delay is over are due again, where they belong.
    for (const auto& uid : queue_.TakeRetriesDue(now_ms)) {
      auto it = pods_.find(uid);
      if (it == pods_.end() || !it->second.has_current) continue;
      it->second.series.back().next_attempt_ms = 0;
      Requeue(uid, it->second);
    }
    // Due work: new verdicts first (oldest first), then refreshes (least recently written first).
    const int64_t refresh_cutoff = now_ms - options_.refresh_interval_ms;
    const std::size_t due = queue_.DueCount(refresh_cutoff);
    using Visit = EventWriteQueue::Visit;
    queue_.Walk(refresh_cutoff, [&](const std::string& uid, const std::string& ns) {
      const PodEvents& p = pods_.at(uid);
      const Series& s = p.series.back();
      TokenBucket& ns_bucket = NamespaceBucket(ns);
      if (!ns_bucket.TryTake(now_ms)) return Visit::kNamespaceExhausted;
      if (!global_.TryTake(now_ms)) {
        ns_bucket.GiveBack();
        return Visit::kStop;
      }
      Write w;
      w.uid = uid;
      w.series_id = s.id;
      w.create = !s.created;
      if (w.create) {
        // A re-creation (the Event expired) keeps the series: count as the next refresh would.
        w.event = ToCreate(p, s, s.count >= 1 ? s.count + 1 : 0, now_ms);
      } else {
        w.event.ns = p.subject.ns;
        w.event.name = s.event_name;
        w.event.pod_name = p.subject.name;
        w.event.reason = s.reason;
        w.event.series_count = s.count + 1;
        w.event.series_last_observed_us = now_ms * 1000;
      }
      writes.push_back(std::move(w));
      return Visit::kWritten;
    });
    stats.deferred = static_cast<int>(due - writes.size());
    // Idle namespaces (full buckets) need no state.
    std::erase_if(namespaces_, [&](auto& entry) { return entry.second.Full(now_ms); });
  }
  for (Write& w : writes) {
    w.result = w.create ? sink.Create(w.event)
                        : sink.PatchSeries(w.event.ns, w.event.name, w.event.series_count,
                                           w.event.series_last_observed_us);
  }
  std::lock_guard lock(mutex_);
  for (const Write& w : writes)
    Apply(w, now_ms, &stats);
  return stats;
}

void EventRecorder::Apply(const Write& w, int64_t now_ms, EventFlushStats* stats) {
  if (w.result.code == EventWriteCode::kOk) {
    ++(w.create ? stats->created : stats->patched);
  } else {
    ++stats->failed;
    stats->errors.push_back(
        fmt::format("{}/{} {}: {}", w.event.ns, w.event.pod_name, w.event.reason, w.result.error));
  }
  // The pod may have been forgotten, or the series dropped, while the write was under way.
  auto pod = pods_.find(w.uid);
  if (pod == pods_.end()) return;
  auto s = std::find_if(pod->second.series.begin(), pod->second.series.end(),
                        [&](const Series& x) { return x.id == w.series_id; });
  if (s == pod->second.series.end()) return;
  switch (w.result.code) {
    case EventWriteCode::kOk:
      s->created = true;
      s->event_name = w.event.name;
      s->count = w.create ? std::max(1, w.event.series_count) : w.event.series_count;
      s->last_write_ms = now_ms;
      s->next_attempt_ms = 0;
      break;
    case EventWriteCode::kNotFound:
      // Expired (event TTL) or deleted: the next Flush creates it again, series included.
      s->created = false;
      s->next_attempt_ms = 0;
      break;
    case EventWriteCode::kFailed:
      s->next_attempt_ms = now_ms + std::min(options_.retry_delay_ms,
                                             std::max<int64_t>(1, options_.refresh_interval_ms));
      break;
  }
  Requeue(w.uid, pod->second);
}

std::optional<EventRecorder::SeriesView> EventRecorder::Current(const std::string& uid) const {
  std::lock_guard lock(mutex_);
  auto it = pods_.find(uid);
  if (it == pods_.end() || !it->second.has_current) return std::nullopt;
  const Series& s = it->second.series.back();
  return SeriesView{s.reason, s.note, s.event_name, s.count};
}

std::size_t EventRecorder::tracked_pods() const {
  std::lock_guard lock(mutex_);
  return pods_.size();
}

}  // namespace capext
