#include "extender/live/out_of_sync_log.h"

#include <set>

#include <fmt/format.h>

#include "config/duration_text.h"
#include "extender/log.h"

namespace capext {
namespace {

std::string Seconds(std::chrono::steady_clock::duration d) {
  return fmt::format("{:.1f}", std::chrono::duration<double>(d).count());
}

}  // namespace

void OutOfSyncLog::Observe(const CacheSyncReport& report) {
  std::set<std::string> seen;
  for (const auto& r : report.resources) {
    seen.insert(r.resource);
    auto it = logged_.find(r.resource);
    // The episode logged before is over: in sync again, or followed again since (a newer
    // "since" means the cache followed the server in between).
    if (it != logged_.end() && (r.in_sync || r.since != it->second.since)) {
      Log(LogLevel::kInfo, "cache back in sync",
          {{"resource", r.resource}, {"out_of_sync_seconds", Seconds(r.since - it->second.since)}});
      logged_.erase(it);
      it = logged_.end();
    }
    const bool beyond = !r.in_sync && r.listed && report.now - r.since > report.max_out_of_sync;
    if (!beyond) continue;
    if (it != logged_.end() && report.now - it->second.logged_at < repeat_) continue;
    Log(LogLevel::kWarn, "cache out of sync with the API server",
        {{"resource", r.resource},
         {"seconds", Seconds(report.now - r.since)},
         {"bound", FormatDuration(report.max_out_of_sync)},
         {"cause", r.cause}});
    logged_[r.resource] = Episode{r.since, report.now};
  }
  for (auto it = logged_.begin(); it != logged_.end();) {
    it = seen.count(it->first) ? std::next(it) : logged_.erase(it);
  }
}

}  // namespace capext
