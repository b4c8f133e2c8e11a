// ReclaimController: our own preemption (capacity-semantics 4). Every interval it looks at the
// pending pods of quota namespaces in priority order, and for each one that fits nowhere plans
// with PlanReclaim (1.2 on every node, 1.3 to choose), evicts the victims (Eviction API in live
// mode: a refusal, e.g. 429 from a PDB, makes it try the next candidate node), records a
// nomination that holds the room against every other pod until the pod binds or the TTL
// expires, and nudges kube-scheduler once the victims are gone. It also nudges pods that
// kube-scheduler marked unschedulable but that fit now (a quota raised, usage dropped:
// kubernetes#127290), never a pod that still cannot fit.
// Safety: a global evictions-per-second budget and a per-namespace per-minute budget; never a
// second reclaim for a pod in flight; a dry-run mode that only logs the plan.
// Thread-safety: RunOnce is called from one thread (the controller's own, or a test).
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "core/victim_selection.h"
#include "extender/metrics.h"
#include "extender/scheduler_cache.h"

namespace capext {

struct EvictOutcome {
  bool ok = false;
  bool refused_by_pdb = false;  // 429: try another candidate, or later
  std::string error;
  int retry_after_seconds = 0;  // the API server's Retry-After for a refusal, when it gave one
};

// Removes one victim. Embedded: deletes it from the cache. Live: POSTs pods/{name}/eviction.
class Evictor {
 public:
  virtual ~Evictor() = default;
  virtual EvictOutcome Evict(const Pod& victim, const std::string& reason) = 0;
};

// Makes kube-scheduler retry a pending pod (live: a no-op annotation update).
class RequeueNudger {
 public:
  virtual ~RequeueNudger() = default;
  virtual bool Nudge(const Pod& pod) = 0;
};

enum class ReclaimMode { kOff, kDryRun, kOn };

struct ReclaimControllerOptions {
  ReclaimMode mode = ReclaimMode::kOn;
  int64_t interval_ms = 1000;
  int64_t nomination_ttl_ms = 120'000;
  double max_evictions_per_second = 5;
  int max_evictions_per_namespace_per_minute = 30;
  bool requeue_nudge = true;
  int64_t requeue_nudge_interval_ms = 5000;
  // Live mode: only pods kube-scheduler marked PodScheduled=False/Unschedulable, or that our
  // filter has seen, are considered (a new pod is kube-scheduler's to try first).
  bool require_unschedulable_condition = false;
  int max_candidate_attempts = 3;  // nodes tried per pod when evictions are refused
  // After every candidate of a pod was refused (a PDB), the pod waits this long before the next
  // attempt, doubling per consecutive refusal up to the max; a longer Retry-After from the API
  // server wins. Refused evictions take nothing from the eviction rate limits.
  int64_t refusal_backoff_ms = 5'000;
  int64_t max_refusal_backoff_ms = 300'000;
};

class ReclaimController {
 public:
  ReclaimController(SchedulerCache* cache, Metrics* metrics, MoreImportantFn more_important,
                    Evictor* evictor, RequeueNudger* nudger, ReclaimControllerOptions options);
  ~ReclaimController();

  // One pass. Returns the number of reclaims started.
  int RunOnce();

  // Runs RunOnce every interval on a thread of its own until Stop().
  void Start();
  void Stop();

  // Pods whose reclaim is in flight: pod key -> node (for /explain and logs).
  std::map<std::string, std::string> InFlight() const;

 private:
  struct InFlightReclaim {
    std::string pod_key;
    std::string node;
    std::vector<std::string> victim_uids;
    int64_t started_ms = 0;
    bool nudged = false;
  };
  // True when evicting every one of `victims` now stays within both rate limits.
  bool HasEvictionBudget(const std::vector<NormalizedPod>& victims, int64_t now_ms);
  bool TakeEvictionBudget(const std::string& ns, int64_t now_ms);
  // Gives back a token taken at `now_ms` for an eviction that did not happen.
  void ReturnEvictionBudget(const std::string& ns, int64_t now_ms);
  void TrackInFlight(int64_t now_ms);
  bool ReclaimFor(const NormalizedPod& pod, int64_t now_ms);
  void MaybeNudge(const NormalizedPod& pod, int64_t now_ms);

  SchedulerCache* cache_;
  Metrics* metrics_;
  MoreImportantFn more_important_;
  Evictor* evictor_;
  RequeueNudger* nudger_;
  ReclaimControllerOptions options_;

  mutable std::mutex mutex_;                          // guards in_flight_ for InFlight()
  std::map<std::string, InFlightReclaim> in_flight_;  // by pod uid
  std::deque<int64_t> recent_evictions_;              // global window (1 s)
  std::map<std::string, std::deque<int64_t>> recent_by_namespace_;  // 60 s windows
  std::map<std::string, int64_t> last_nudge_ms_;
  std::set<std::string> dry_run_logged_;
  struct RefusalBackoff {
    int64_t until_ms = 0;
    int64_t backoff_ms = 0;  // the last wait; the next one doubles it
  };
  std::map<std::string, RefusalBackoff> refused_;  // by pod uid: every candidate was refused

  std::thread thread_;
  std::mutex stop_mutex_;
  std::condition_variable stop_cv_;
  bool stopping_ = false;
};

}  // namespace capext
