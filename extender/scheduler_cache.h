// SchedulerCache: the ClusterState every request reads, behind one reader/writer lock, plus the
// clock. Readers (filter, prioritize, preempt, /quotas) share the lock; writers (binds, watch
// events, reclaim, expiry) take it alone. The bind path's check-and-reserve happens inside one
// Write() so no interleaving of binds can push a quota over its limits
// (docs/capacity-semantics.md#2-which-resources-a-quota-governs-two-semantics). It also says how
// far it may be trusted: listed once (ready), whether an ElasticQuota API is served (quota_api),
// and whether each resource follows the API server now (SyncReport, from live mode's
// CacheSyncSource; cache_sync.h). Readiness() is what /readyz answers. Thread-safety: all methods
// are safe to call from any thread.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <mutex>
#include <shared_mutex>

#include "config/object_codec.h"
#include "core/cluster_state.h"
#include "extender/cache_sync.h"

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

  // Whether the cluster serves an ElasticQuota API, and what /filter does while it does not
  // (docs/capacity-semantics.md#12-deciding-on-a-cache-that-is-out-of-sync, missingQuotaAPI).
  // Embedded mode: served.
  struct QuotaApi {
    bool served = true;
    bool refuse = true;   // missingQuotaAPI: refuse (else allow)
    std::string message;  // why it is missing ("" when served)
  };
  QuotaApi quota_api() const {
    std::lock_guard lock(reason_mutex_);
    return quota_api_;
  }
  void set_quota_api(QuotaApi api) {
    std::lock_guard lock(reason_mutex_);
    quota_api_ = std::move(api);
  }

  // Live mode: where SyncReport() comes from; nullptr (embedded) means always in sync.
  // REQUIRES: the source stays valid until it is replaced (set nullptr before destroying it).
  void set_sync_source(const CacheSyncSource* source) {
    std::lock_guard lock(source_mutex_);
    sync_source_ = source;
  }
  // Each resource's state now (no resources without a source). Asks the source each time.
  CacheSyncReport SyncReport() const {
    std::lock_guard lock(source_mutex_);
    if (sync_source_ == nullptr) {
      CacheSyncReport report;
      report.now = std::chrono::steady_clock::now();
      return report;
    }
    return sync_source_->Report(std::chrono::steady_clock::now());
  }

  // What /readyz answers: not ready before the first sync (or with no ElasticQuota API under
  // missingQuotaAPI: refuse), nor while a resource has been out of sync beyond the bound.
  struct ReadinessVerdict {
    bool ready = false;
    std::string reason;  // not ready: why; ready: a note ("" or the missing quota API)
  };
  ReadinessVerdict Readiness() const {
    if (!ready()) {
      const std::string reason = not_ready_reason();
      return {false, reason.empty() ? "cluster cache not synced yet" : reason};
    }
    if (std::string stale = SyncReport().StaleReason(); !stale.empty()) return {false, stale};
    const QuotaApi api = quota_api();
    return {true, api.served ? "" : api.message};
  }

  // Ready = every informer listed once (always true in embedded mode), and an ElasticQuota API
  // served unless missingQuotaAPI allows its absence. /filter decides only when ready.
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
  QuotaApi quota_api_;
  mutable std::mutex source_mutex_;  // held while the source reports (set_sync_source waits)
  const CacheSyncSource* sync_source_ = nullptr;
};

}  // namespace capext
