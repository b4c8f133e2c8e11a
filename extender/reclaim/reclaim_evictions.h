// ReclaimEvictions: the one place a reclaim evicts
// (docs/reclaim-plan.md#gate-mode-the-admission-loop-plans-for-a-gated-gang, step 2). The reclaim
// controller (its one-node reclaims and its plans) and gate mode's admission loop both evict
// through it, so every reclaim shares:
//  - the eviction rate limits (EvictionBudget): a plan takes one token per victim, all or none,
//    in one step (two loops asking at once never overshoot the limits together); a victim that
//    is not evicted gives its token back;
//  - "only the actor writes" (docs/architecture.md#two-replicas-one-actor): the Leadership is
//    asked just before each eviction, and a replica that stops acting stops at once;
//  - the evictions' metrics (capacity_extender_evictions_total, ..._refused_total);
//  - the victims' Events (victim_event.h): queued here and written by the reclaim controller's
//    events thread (ReclaimController::FlushEvents), the one writer of victim Events.
// Thread-safety: every method may be called from any thread; the evictions themselves are sent
// without the lock held (a slow API server delays only the loop that evicts).
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "core/pod.h"
#include "extender/leadership/leadership.h"
#include "extender/metrics.h"
#include "extender/reclaim/event_sink.h"
#include "extender/reclaim/eviction_budget.h"

namespace capext {

struct EvictOutcome {
  bool ok = false;
  bool refused_by_pdb = false;  // 429: try another candidate, or later
  std::string error;
  int retry_after_seconds = 0;  // the API server's Retry-After for a refusal, when it gave one
  bool not_sent = false;        // this replica stopped acting before the request could go out
};

// Removes one victim. Embedded: deletes it from the cache. Live: POSTs pods/{name}/eviction.
class Evictor {
 public:
  virtual ~Evictor() = default;
  virtual EvictOutcome Evict(const Pod& victim, const std::string& reason) = 0;
};

// What EvictInOrder did: the first `evicted` victims were evicted; `stop` says why it stopped
// before the end (a refusal or failure the API server gave, or this replica stopped acting).
struct EvictionRun {
  std::size_t evicted = 0;
  std::optional<EvictOutcome> stop;
  bool stopped_acting = false;  // stop is "not sent" (or the lease was lost): nothing was refused
};

class ReclaimEvictions {
 public:
  ReclaimEvictions(Evictor* evictor, Metrics* metrics, double max_evictions_per_second,
                   int max_evictions_per_namespace_per_minute);

  // Evicts only while `leadership` leads (without one: always). REQUIRES: before any eviction; it
  // outlives this object.
  void FollowLeadership(const Leadership* leadership) { leadership_ = leadership; }
  // Queues a victim Event per eviction (reported by `reporting_instance`). Without this call, no
  // victim Events are queued (no Event sink). REQUIRES: before any eviction.
  void QueueVictimEvents(std::string reporting_instance);
  bool Acts() const { return leadership_ == nullptr || leadership_->Leads(); }

  // Takes one token per entry of `victim_namespaces` (repeats count) at `now_ms`, all or none:
  // false (nothing taken) when the whole set does not fit the limits now.
  bool TakeTokens(const std::vector<std::string>& victim_namespaces, int64_t now_ms);
  // Gives back one token of namespace `ns` taken at `now_ms` for an eviction that did not happen.
  void GiveBack(const std::string& ns, int64_t now_ms);
  double per_second() const { return budget_.per_second(); }
  int per_namespace_per_minute() const { return budget_.per_namespace_per_minute(); }

  // Evicts `victims` in this order (their tokens taken by TakeTokens), each with the reason
  // "reclaim for <preemptor>", stopping at the first that is not evicted: its outcome is logged
  // and, when the API server answered, counted as refused. Each evicted victim is counted and
  // gets its Event ("evicted by quota reclaim for <preemptor>: <plan>"). The victims not evicted
  // give their tokens back. `preemptor`: "pod ns/name" or "gang ns/group".
  EvictionRun EvictInOrder(const std::vector<const Pod*>& victims, const std::string& preemptor,
                           const std::string& plan, int64_t now_ms);

  // The victim Events queued since the last call, in eviction order (the events thread).
  std::vector<EventObject> TakeVictimEvents();

 private:
  Evictor* evictor_;
  Metrics* metrics_;
  const Leadership* leadership_ = nullptr;
  std::optional<std::string> reporting_instance_;  // set: victim Events are queued

  std::mutex mutex_;
  EvictionBudget budget_;                   // guarded by mutex_
  std::vector<EventObject> victim_events_;  // guarded by mutex_
  int victim_event_sequence_ = 0;           // guarded by mutex_
};

}  // namespace capext
