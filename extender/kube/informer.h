// Informer: keeps one resource of the API server mirrored into an InformerSink, driven by
// callbacks on the RestClient's client thread (no thread of its own). LIST (paged), hand the
// complete list over as a Replace, then WATCH from the list's resourceVersion with bookmarks;
// resume watches from the last resourceVersion seen (events and BOOKMARKs) when they end or
// break; relist on 410 Gone (HTTP or an ERROR event) or on a "too large resource version" ERROR
// (a server started fresh under us); relist periodically to repair any drift.
// Each watch asks the server to end it before `watch_idle_timeout`; one that delivers nothing
// for that long is deemed stuck and resumed. Failed
// requests are retried on a RetrySchedule (informer_retry.h): growing waits, Retry-After, and
// GET /readyz probes while the server is away, so the informer is back within a probe interval of
// the server's return. It knows whether its resource is in sync and since when (InformerSync,
// informer_sync.h). The sink is called on the client thread.
//
// Thread-safety: Start/Stop from one controlling thread (never the client thread); HasSynced,
// Sync and Stats from any thread.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "extender/kube/informer_retry.h"
#include "extender/kube/informer_sink.h"
#include "extender/kube/informer_sync.h"
#include "extender/kube/rest_client.h"

namespace capext::kube {

struct InformerOptions {
  std::string resource;  // the name given to the sink, e.g. "pods"
  std::string path;      // the collection, e.g. "/api/v1/pods" (cluster-wide)
  int page_size = 500;   // LIST limit per page
  // A watch that delivers nothing (no event, no bookmark, not its end) for this long is deemed
  // stuck and resumed. So that a healthy watch of a quiet resource (kube-apiserver 1.26 sends it
  // no bookmark at all) is never taken for a stuck one, each watch asks the server to end it
  // sooner: timeoutSeconds drawn uniformly from [2/3, 8/9] of this (60-80 s for 90 s), whole
  // seconds, at least 1, jittered so that many clients do not reconnect in step.
  std::chrono::milliseconds watch_idle_timeout{90000};
  std::chrono::milliseconds backoff_initial{500};  // first wait after an error
  std::chrono::milliseconds backoff_max{30000};    // cap; each wait is jittered in [50%, 100%]
  // While the server is away, GET `probe_path` this often (jittered in [50%, 100%]).
  std::chrono::milliseconds probe_interval{500};
  std::string probe_path = "/readyz";
  InformerSync::Limits sync_limits;  // hand-off and settle times of "in sync"
  std::chrono::milliseconds resync_period{std::chrono::minutes(30)};  // 0: never
  uint64_t seed = 0;  // randomness for timeouts and jitter; 0: from std::random_device
  // Ask for the watch in protobuf (kProtobufMediaType first, then JSON), as kube's own components
  // do; the sink then gets protobuf objects (ObjectEncoding::kProtobuf) whenever the server
  // answers in it. Only for resources whose sink decodes protobuf: pods and nodes
  // (docs/architecture.md#watching-in-protobuf). Lists stay JSON.
  bool protobuf_watch = false;
};

struct InformerStats {
  bool synced = false;           // a first complete list reached the sink
  uint64_t lists = 0;            // complete lists handed to the sink (first, relists, resyncs)
  uint64_t relists_expired = 0;  // relists caused by 410 Gone
  uint64_t resyncs = 0;          // periodic relists
  uint64_t watches = 0;          // watch requests made
  uint64_t events = 0;           // ADDED/MODIFIED/DELETED applied
  uint64_t protobuf_events = 0;  // of those, from a watch the server answered in protobuf
  uint64_t bookmarks = 0;
  uint64_t errors = 0;           // failed lists/watches (each followed by a wait)
  uint64_t idle_restarts = 0;    // watches closed after watch_idle_timeout without a line
  uint64_t probes = 0;           // GETs of probe_path while the server was away
  uint64_t probe_wakes = 0;      // waits cut short by a probe the server served
  std::string resource_version;  // last resourceVersion seen
};

class Informer {
 public:
  // `client` and `sink` must outlive the informer.
  Informer(RestClient* client, InformerOptions options, InformerSink* sink);
  ~Informer();  // Stop()s
  Informer(const Informer&) = delete;
  Informer& operator=(const Informer&) = delete;

  // Starts listing. REQUIRES: not started before.
  void Start();
  // Cancels the list or watch in flight and waits until no callback of this informer is left on
  // the client thread. The sink is never called after Stop() returns. Idempotent.
  void Stop();

  bool HasSynced() const { return synced_.load(std::memory_order_acquire); }
  // Whether the resource follows the API server now (informer_sync.h).
  SyncState Sync(std::chrono::steady_clock::time_point now) const;
  InformerStats Stats() const;
  const std::string& resource() const { return options_.resource; }

 private:
  class Timer;
  using Clock = std::chrono::steady_clock;
  // Everything below runs on the client thread.
  void Next();  // list or watch, whichever is due
  void RequestPage();
  void OnPage(RestResponse response);
  void StartWatch();
  void OnWatchEnd(WatchResult result, Clock::time_point started);
  // One event of the open watch, in the encoding its response has (watch_protobuf_).
  bool HandleWatchEvent(std::string_view event);
  // Logs, counts, marks the resource out of sync, then waits (RetrySchedule) and Next()s.
  void Fail(FailureKind kind, const std::string& message, int retry_after_seconds = -1);
  // Waits until retry_at_, probing the server meanwhile when the schedule says so.
  void WaitToRetry();
  void Probe();
  void After(std::chrono::milliseconds wait, bool probe);
  // True (and the stop acknowledged once nothing is outstanding) when stopping.
  bool Stopping();
  std::chrono::seconds NextWatchTimeout();
  template <typename F>
  void UpdateSync(F&& f);  // f(InformerSync&) under the stats lock

  RestClient* client_;
  InformerOptions options_;
  InformerSink* sink_;
  std::mt19937_64 random_;
  RetrySchedule retry_;

  // Client-thread state.
  Clock::time_point retry_at_;
  std::string resource_version_;
  bool need_list_ = true;
  bool resync_ = false;
  int expired_in_a_row_ = 0;  // expiries with no watch accepted between them (only lists)
  std::chrono::steady_clock::time_point next_resync_ = std::chrono::steady_clock::time_point::max();
  std::vector<std::string> items_;  // pages read so far
  std::string list_rv_;
  std::string continue_token_;
  int list_restarts_ = 0;
  bool watch_expired_ = false;     // the watch's resourceVersion is of no use: relist
  std::string watch_expired_why_;  // how: "expired (410 Gone)", or ahead of the server
  bool watch_confirmed_ = false;   // the open watch delivered a line (InformerSync knows it)
  bool watch_protobuf_ = false;    // the open watch's response is in protobuf
  bool told_json_answer_ = false;  // logged that a protobuf watch was answered in JSON
  std::string watch_error_;
  std::shared_ptr<CallHandle> call_;
  std::unique_ptr<Timer> timer_;
  int outstanding_ = 0;  // callbacks still to come (request, watch, timer)
  bool stopping_ = false;
  std::optional<std::promise<void>> stopped_;

  std::atomic<bool> synced_{false};
  mutable std::mutex stats_mutex_;
  InformerStats stats_;
  InformerSync sync_;  // written on the client thread, read anywhere; under stats_mutex_

  std::mutex lifecycle_mutex_;
  bool started_ = false;
  bool stop_done_ = false;
};

}  // namespace capext::kube
