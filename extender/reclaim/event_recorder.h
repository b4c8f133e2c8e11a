// EventRecorder: turns the reclaim controller's verdicts on pending pods into Kubernetes Events
// (events.k8s.io/v1, type Warning) the way an event series works (client-go tools/events):
//  - one Event object per (pod, reason, note); the same verdict observed again never creates a
//    second object. While the verdict stays current, its series is refreshed every
//    `refresh_interval_ms` (series.count + 1, series.lastObservedTime = now, by PATCH), whether
//    or not the pod was planned again in between: the count keeps growing while the pod waits.
//  - a pod remembers its last few series: a verdict that comes back continues its old Event
//    instead of creating another;
//  - when a pod binds or goes away it is forgotten, and nothing more is written about it;
//  - every write (create or patch) takes a token from a cluster-wide and a per-namespace token
//    bucket; writes without a token wait for the next Flush (new verdicts before refreshes,
//    oldest first). A failed write is tried again after a short delay; an Event deleted by the
//    API server's event TTL is created again, with its series.
// A Flush costs what it writes, not what it tracks: the series waiting for a write are kept in
// write order by namespace (event_write_queue.h).
// Pure logic: the clock is passed in, the API server is behind EventSink.
// Thread-safety: every method may be called from any thread; Flush from one thread at a time.
// The sink is called without the recorder's lock held, so observing never waits for a write.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "extender/reclaim/event_sink.h"
#include "extender/reclaim/event_write_queue.h"
#include "extender/reclaim/token_bucket.h"

namespace capext {

struct EventRecorderOptions {
  std::string reporting_controller = "capacity-extender";  // kubectl's "From" column
  std::string reporting_instance = "capacity-extender";    // "<controller>-<hostname>" in serve
  int64_t refresh_interval_ms = 30'000;
  int64_t retry_delay_ms = 10'000;  // after a failed write (never longer than the refresh)
  double events_per_second = 10;    // cluster-wide token bucket
  double burst = 50;
  double namespace_events_per_minute = 60;  // one token bucket per namespace
  double namespace_burst = 10;
  std::size_t series_per_pod = 4;  // series remembered per pod (the current one included)
};

// The pod an Event is about.
struct EventSubject {
  std::string ns, name, uid;
};

struct EventFlushStats {
  int created = 0;
  int patched = 0;
  int failed = 0;
  int deferred = 0;                 // due, but no token: tried at a later Flush
  std::vector<std::string> errors;  // "<ns>/<pod> <reason>: <error>" per failed write
};

class EventRecorder {
 public:
  explicit EventRecorder(EventRecorderOptions options);
  const EventRecorderOptions& options() const { return options_; }

  // The pod's verdict now is a Warning Event (`reason`, `action`, `note`). A (reason, note) the
  // pod has no series for starts one, created by the next Flush; one it had becomes current
  // again. The note is cut to the API server's 1 KiB limit.
  void Observe(const EventSubject& pod, std::string_view reason, std::string_view action,
               std::string_view note, int64_t now_ms);
  // The pod's verdict needs no Event now: its series stop growing (they are remembered).
  void Quiet(const std::string& uid);
  // The pod bound or is gone: nothing more is written about it.
  void Forget(const std::string& uid);
  // Forgets every pod for which keep(uid) is false.
  void Retain(const std::function<bool(const std::string& uid)>& keep);

  // Writes what is due at `now_ms` through `sink`, within the rate limits.
  EventFlushStats Flush(int64_t now_ms, EventSink& sink);

  // The pod's current series, for views and tests.
  struct SeriesView {
    std::string reason, note;
    std::string event_name;  // empty until created
    int32_t count = 0;       // as last written (1 = created, no series yet)
  };
  std::optional<SeriesView> Current(const std::string& uid) const;
  std::size_t tracked_pods() const;

  // An Event name for `pod_name` at `nanos`: "<pod>.<hex>", a valid DNS subdomain of at most
  // 253 characters.
  static std::string EventName(std::string_view pod_name, uint64_t nanos);
  // `note` cut to at most 1024 bytes on a UTF-8 boundary ("..." marks a cut).
  static std::string LimitNote(std::string_view note);

 private:
  struct Series {
    uint64_t id = 0;
    std::string reason, action, note;
    std::string event_name;  // set once created
    int64_t event_time_ms = 0;
    int32_t count = 0;  // written so far: 0 = not created, 1 = created, >= 2 = series
    int64_t last_write_ms = 0;
    int64_t next_attempt_ms = 0;  // after a failure
    bool created = false;
  };
  struct PodEvents {
    EventSubject subject;
    std::vector<Series> series;  // most recently current last
    bool has_current = false;    // series.back() is the current verdict
  };
  struct Write {
    std::string uid;
    uint64_t series_id = 0;
    bool create = false;
    EventObject event;  // create: the whole object; patch: ns, name, series fields
    EventWriteResult result;
  };

  TokenBucket& NamespaceBucket(const std::string& ns);
  EventObject ToCreate(const PodEvents& pod, const Series& s, int32_t count, int64_t now_ms);
  void Apply(const Write& w, int64_t now_ms, EventFlushStats* stats);
  // Puts the pod where its current series waits in queue_ (or takes it out when it has none).
  void Requeue(const std::string& uid, const PodEvents& pod);

  const EventRecorderOptions options_;
  mutable std::mutex mutex_;
  std::map<std::string, PodEvents> pods_;  // by pod uid
  EventWriteQueue queue_;                  // the pods of pods_ whose current series waits
  TokenBucket global_;
  std::map<std::string, TokenBucket> namespaces_;
  uint64_t next_series_id_ = 0;
  uint64_t name_sequence_ = 0;
};

}  // namespace capext
