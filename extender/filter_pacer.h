// FilterPacer: back-pressure from the Binding queue to kube-scheduler's scheduling cycle
// (docs/architecture.md#pacing-filter-while-bindings-queue). While more than `hold_above`
// Bindings wait for a connection, a /filter answer is held until the queue is back at `hold_above`
// or `hold_limit` has passed, whichever comes first; otherwise it is sent at once. The answer is
// decided before it is held (a later /bind checks again).
// Thread-safety: every method may be called from any thread; answers are sent without the lock
// held, released ones on the thread that shortened the queue or on the pacer's timer thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>

#include "extender/http/message.h"
#include "extender/metrics.h"
#include "extender/timer_thread.h"

namespace capext {

class FilterPacer {
 public:
  struct Options {
    int64_t hold_above = 16;                     // filterHoldQueuedBinds
    std::chrono::milliseconds hold_limit{1000};  // filterHoldLimit; 0: never hold
  };
  // `metrics` outlives the pacer.
  FilterPacer(Options options, Metrics* metrics);
  // Sends every answer still held, at once.
  ~FilterPacer();
  FilterPacer(const FilterPacer&) = delete;
  FilterPacer& operator=(const FilterPacer&) = delete;

  // The number of Bindings waiting for a connection moved by `delta` (the binder reports each
  // change: +1 when a Binding joins the queue, -1 when it leaves it, written or not). Back at
  // `hold_above` or below, every held answer is sent, oldest first.
  void QueuedBindingsChanged(int64_t delta);
  // Sends `response` through `respond` now, or holds it while the queue is too long.
  void Answer(http::Response response, http::Responder respond);
  // Answers held now.
  std::size_t held() const;

 private:
  using Clock = std::chrono::steady_clock;
  struct Held {
    http::Response response;
    http::Responder respond;
    Clock::time_point since;
    TimerThread::Id timer = 0;
  };
  // Sends one held answer (lock not held); `by_limit` when its hold_limit ended it.
  void Send(Held held, bool by_limit);
  void OnLimit(uint64_t serial);

  const Options options_;
  Metrics* metrics_;
  mutable std::mutex mutex_;
  int64_t queued_ = 0;             // guarded by mutex_
  uint64_t next_serial_ = 1;       // guarded by mutex_
  std::map<uint64_t, Held> held_;  // by serial: oldest first; guarded by mutex_
  // Last member: its callbacks use the others. None when hold_limit is 0 (nothing is held).
  std::unique_ptr<TimerThread> timers_;
};

}  // namespace capext
