// SchedulerCache: the ClusterState every request reads, behind one reader/writer lock, plus the
// clock. Readers (filter, prioritize, preempt, /quotas) share the lock; writers (binds, watch
// events, reclaim, expiry) take it alone. The bind path's check-and-reserve happens inside one
// Write() so no interleaving of binds can push a quota over its limits
// (docs/capacity-semantics.md#6-accounting-used-reservations-nominations).
// Thread-safety: all methods are safe to call from any thread.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <mutex>
#include <shared_mutex>

#include "config/object_codec.h"
#include "core/cluster_state.h"

namespace capext {

// The wall clock in Unix milliseconds; a seam so tests can move time.
using ClockFn = std::function<int64_t()>;
int64_t SystemNowMs();

class SchedulerCache {
 public:
  SchedulerCache(QuotaSemantics semantics, DecodeOptions decode_options,
                 ClockFn clock = SystemNowMs)
      : state_(semantics), decode_options_(std::move(decode_options)), clock_(std::move(clock)) {}

  // Runs fn(const ClusterState&) under the shared lock and returns its result.
  template <typename F>
  auto Read(F&& fn) const {
    std::shared_lock lock(mutex_);
    return fn(static_cast<const ClusterState&>(state_));
  }
  // Runs fn(ClusterState&) under the exclusive lock and returns its result.
  template <typename F>
  auto Write(F&& fn) {
    std::unique_lock lock(mutex_);
    return fn(state_);
  }

  int64_t NowMs() const { return clock_(); }
  const DecodeOptions& decode_options() const { return decode_options_; }

  // Ready = every informer listed once (always true in embedded mode).
  bool ready() const { return ready_.load(std::memory_order_acquire); }
  void set_ready(bool ready) { ready_.store(ready, std::memory_order_release); }
  // Why the cache is not ready, for /readyz ("" = the default message).
  std::string not_ready_reason() const {
    std::lock_guard lock(reason_mutex_);
    return not_ready_reason_;
  }
  void set_not_ready_reason(std::string reason) {
    std::lock_guard lock(reason_mutex_);
    not_ready_reason_ = std::move(reason);
  }

 private:
  mutable std::shared_mutex mutex_;
  ClusterState state_;
  DecodeOptions decode_options_;
  ClockFn clock_;
  std::atomic<bool> ready_{false};
  mutable std::mutex reason_mutex_;
  std::string not_ready_reason_;
};

}  // namespace capext
