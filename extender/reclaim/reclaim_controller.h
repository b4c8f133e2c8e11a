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
//
// Every pod it looks at gets a verdict (pod_verdict.h), kept on the PendingBoard (GET /pending)
// and, when an EventRecorder is attached, turned into a Warning Event on the pod. Events are
// written by a thread of their own (FlushEvents), so a slow API server never delays a reclaim,
// and on their own schedule: a pod that is not planned again still has its series refreshed.
// Thread-safety: RunOnce is called from one thread (the controller's own, or a test), and
// FlushEvents from one thread; InFlight and board() from any thread.
#pragma once

#include <condition_variable>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "core/quota_admission.h"
#include "core/reclaim_planner.h"
#include "core/victim_selection.h"
#include "extender/metrics.h"
#include "extender/reclaim/event_recorder.h"
#include "extender/reclaim/eviction_budget.h"
#include "extender/reclaim/pending_board.h"
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
  // How often the events thread writes what the EventRecorder has due.
  int64_t event_flush_interval_ms = 500;
  std::size_t reclaim_history = 100;  // reclaims kept for /pending
};

class ReclaimController {
 public:
  ReclaimController(SchedulerCache* cache, Metrics* metrics, MoreImportantFn more_important,
                    Evictor* evictor, RequeueNudger* nudger, ReclaimControllerOptions options);
  ~ReclaimController();

  // Verdicts become Events through `recorder`, written to `sink`. REQUIRES: before Start();
  // both outlive the controller.
  void RecordEvents(EventRecorder* recorder, EventSink* sink);

  // One pass. Returns the number of reclaims started.
  int RunOnce();
  // Forgets the Events (and board records) of pods no longer pending, then writes what is due.
  // Without an EventRecorder, does nothing.
  EventFlushStats FlushEvents();

  // Runs RunOnce every interval (and FlushEvents on a thread of its own) until Stop().
  void Start();
  void Stop();

  // Pods whose reclaim is in flight: pod key -> node (for /explain and logs).
  std::map<std::string, std::string> InFlight() const;
  const PendingBoard& board() const { return board_; }

 private:
  struct InFlightReclaim {
    std::string pod_key;
    std::string node;
    std::vector<std::string> victim_uids;
    std::vector<std::string> victim_keys;
    int64_t started_ms = 0;
    bool nudged = false;
  };
  struct RefusalBackoff {
    int64_t until_ms = 0;
    int64_t backoff_ms = 0;  // the last wait; the next one doubles it
    PodVerdict verdict;      // shown while it waits
  };
  // PlanReclaim for `pod` with the victims copied out of the lock, plus the quota check alone.
  // The one place that calls into core's planner.
  struct Plan {
    ReclaimDecision decision = ReclaimDecision::kNoCandidate;
    std::string node, reason;
    std::vector<NormalizedPod> victims;
    Status quota;
  };
  Plan PlanFor(const NormalizedPod& pod, const std::vector<std::string>& excluded_nodes) const;
  // The verdict of a pod for which nothing is evicted now.
  PodVerdict NoEviction(const NormalizedPod& pod, const Plan& plan, bool dry_run) const;
  PodVerdict ReclaimFor(const NormalizedPod& pod, int64_t now_ms, bool* started);
  void Publish(const NormalizedPod& pod, const std::string& quota, PodVerdict verdict,
               int64_t now_ms);
  void TrackInFlight(int64_t now_ms);
  void MaybeNudge(const NormalizedPod& pod, int64_t now_ms);
  std::set<std::string> PendingQuotaPodUids() const;

  SchedulerCache* cache_;
  Metrics* metrics_;
  MoreImportantFn more_important_;
  Evictor* evictor_;
  RequeueNudger* nudger_;
  ReclaimControllerOptions options_;
  EventRecorder* recorder_ = nullptr;
  EventSink* sink_ = nullptr;
  PendingBoard board_;

  mutable std::mutex mutex_;                          // guards in_flight_ for InFlight()
  std::map<std::string, InFlightReclaim> in_flight_;  // by pod uid
  EvictionBudget budget_;
  std::map<std::string, int64_t> last_nudge_ms_;
  std::set<std::string> dry_run_logged_;
  std::map<std::string, RefusalBackoff> refused_;  // by pod uid: every candidate was refused

  std::thread thread_;
  std::thread events_thread_;
  std::mutex stop_mutex_;
  std::condition_variable stop_cv_;
  bool stopping_ = false;
};

}  // namespace capext
