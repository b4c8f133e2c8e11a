// Informer: keeps one resource of the API server mirrored into an InformerSink, on its own
// thread. LIST (paged), hand the complete list over as a Replace, then WATCH from the list's
// resourceVersion with bookmarks; resume watches from the last resourceVersion seen (events and
// BOOKMARKs) when they end or break; relist on 410 Gone (HTTP or an ERROR event); back off
// exponentially with jitter on errors; relist periodically to repair any drift.
//
// Thread-safety: Start/Stop from one controlling thread; HasSynced/Stats from any thread.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <random>
#include <stop_token>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "extender/kube/informer_sink.h"
#include "extender/kube/rest_client.h"

namespace capext::kube {

struct InformerOptions {
  std::string resource;  // the name given to the sink, e.g. "pods"
  std::string path;      // the collection, e.g. "/api/v1/pods" (cluster-wide)
  int page_size = 500;   // LIST limit per page
  // Each watch asks for a timeoutSeconds drawn uniformly from [min, max], so that many clients
  // do not reconnect in step.
  std::chrono::seconds watch_timeout_min{240};
  std::chrono::seconds watch_timeout_max{360};
  // Client-side inactivity limit = the watch's timeoutSeconds + this slack.
  std::chrono::milliseconds watch_inactivity_slack{30000};
  std::chrono::milliseconds backoff_initial{500};  // first wait after an error
  std::chrono::milliseconds backoff_max{30000};    // cap; each wait is jittered in [50%, 100%]
  std::chrono::milliseconds resync_period{std::chrono::minutes(30)};  // 0: never
  uint64_t seed = 0;  // randomness for timeouts and jitter; 0: from std::random_device
};

struct InformerStats {
  bool synced = false;           // a first complete list reached the sink
  uint64_t lists = 0;            // complete lists handed to the sink (first, relists, resyncs)
  uint64_t relists_expired = 0;  // relists caused by 410 Gone
  uint64_t resyncs = 0;          // periodic relists
  uint64_t watches = 0;          // watch requests made
  uint64_t events = 0;           // ADDED/MODIFIED/DELETED applied
  uint64_t bookmarks = 0;
  uint64_t errors = 0;           // failed lists/watches (each followed by a backoff)
  std::string resource_version;  // last resourceVersion seen
};

class Informer {
 public:
  // `client` and `sink` must outlive the informer.
  Informer(RestClient* client, InformerOptions options, InformerSink* sink);
  ~Informer();  // Stop()s
  Informer(const Informer&) = delete;
  Informer& operator=(const Informer&) = delete;

  // Starts the informer's thread. REQUIRES: not started before.
  void Start();
  // Ends the thread and waits for it. Prompt: an in-flight list or watch is aborted. The sink
  // is never called after Stop() returns. Idempotent.
  void Stop();

  bool HasSynced() const { return synced_.load(std::memory_order_acquire); }
  InformerStats Stats() const;
  const std::string& resource() const { return options_.resource; }

 private:
  struct WatchVerdict {  // what the lines of one watch told us
    bool expired = false;
    std::string error;
  };

  void Run(std::stop_token stop);
  // Lists every page. On success fills items and the list's resourceVersion.
  bool ListAll(std::stop_token stop, std::vector<std::string>* items, std::string* rv,
               std::string* error);
  bool HandleWatchLine(std::string_view line, WatchVerdict* verdict);
  std::chrono::seconds NextWatchTimeout();
  // Waits the next backoff step unless stopped; returns false when stopped.
  bool Backoff(std::stop_token stop);
  void ResetBackoff() { backoff_step_ = 0; }
  void CountError();

  RestClient* client_;
  InformerOptions options_;
  InformerSink* sink_;
  std::mt19937_64 random_;
  int backoff_step_ = 0;
  std::string resource_version_;  // only the informer thread writes it

  std::atomic<bool> synced_{false};
  mutable std::mutex stats_mutex_;
  InformerStats stats_;

  std::mutex lifecycle_mutex_;
  std::jthread thread_;
};

}  // namespace capext::kube
