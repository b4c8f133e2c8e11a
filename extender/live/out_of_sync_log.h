// OutOfSyncLog: the log lines about a cache out of sync
// (docs/architecture.md#staying-in-sync-with-the-api-server): a warning when a resource has been
// out of sync for longer than the report's bound (resource, seconds, cause), again every `repeat`
// while it lasts, and an info line when it is back in sync, with how long it was out. Fed with
// successive reports; says only what changed. Thread-safety: one caller (live mode's background
// thread).
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <string>

#include "extender/cache_sync.h"

namespace capext {

// One line to log.
struct SyncNotice {
  bool back_in_sync = false;  // else: out of sync beyond the bound
  std::string resource;
  double seconds = 0;  // out of sync so far, or in all (back in sync)
  std::chrono::milliseconds bound{0};
  std::string cause;  // out of sync: why
};

// Writes a notice to the process log.
void LogSyncNotice(const SyncNotice& notice);

class OutOfSyncLog {
 public:
  explicit OutOfSyncLog(std::chrono::milliseconds repeat = std::chrono::seconds(30),
                        std::function<void(const SyncNotice&)> emit = LogSyncNotice)
      : repeat_(repeat), emit_(std::move(emit)) {}

  void Observe(const CacheSyncReport& report);

 private:
  struct Episode {
    std::chrono::steady_clock::time_point since;      // out of sync since
    std::chrono::steady_clock::time_point logged_at;  // the last warning
  };
  std::chrono::milliseconds repeat_;
  std::function<void(const SyncNotice&)> emit_;
  std::map<std::string, Episode> logged_;  // resources reported out of sync beyond the bound
};

}  // namespace capext
