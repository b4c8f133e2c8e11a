// OutOfSyncLog: the log lines about a cache out of sync (architecture.md, "Staying in sync with
// the API server"): a warning when a resource has been out of sync for longer than the report's
// bound (resource, seconds, cause), again every `repeat` while it lasts, and an info line when it
// is back in sync, with how long it was out. Fed with successive reports; logs only what changed.
// Thread-safety: one caller (live mode's background thread).
#pragma once

#include <chrono>
#include <map>
#include <string>

#include "extender/cache_sync.h"

namespace capext {

class OutOfSyncLog {
 public:
  explicit OutOfSyncLog(std::chrono::milliseconds repeat = std::chrono::seconds(30))
      : repeat_(repeat) {}

  void Observe(const CacheSyncReport& report);

 private:
  struct Episode {
    std::chrono::steady_clock::time_point since;      // out of sync since
    std::chrono::steady_clock::time_point logged_at;  // the last warning
  };
  std::chrono::milliseconds repeat_;
  std::map<std::string, Episode> logged_;  // resources reported out of sync beyond the bound
};

}  // namespace capext
