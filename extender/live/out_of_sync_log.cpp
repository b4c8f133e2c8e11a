#include "extender/live/out_of_sync_log.h"

#include <set>

#include <fmt/format.h>

#include "config/duration_text.h"
#include "extender/log.h"

namespace capext {
namespace {

double Seconds(std::chrono::steady_clock::duration d) {
  return std::chrono::duration<double>(d).count();
}

}  // namespace

void LogSyncNotice(const SyncNotice& notice) {
  if (notice.back_in_sync) {
    Log(LogLevel::kInfo, "cache back in sync",
        {{"resource", notice.resource},
         {"out_of_sync_seconds", fmt::format("{:.1f}", notice.seconds)}});
    return;
  }
  Log(LogLevel::kWarn, "cache out of sync with the API server",
      {{"resource", notice.resource},
       {"seconds", fmt::format("{:.1f}", notice.seconds)},
       {"bound", FormatDuration(notice.bound)},
       {"cause", notice.cause}});
}

void OutOfSyncLog::Observe(const CacheSyncReport& report) {
  std::set<std::string> seen;
  for (const auto& r : report.resources) {
    seen.insert(r.resource);
    auto it = logged_.find(r.resource);
    // The episode logged before is over: in sync again, or followed again since (a newer
    // "since" means the cache followed the server in between).
    if (it != logged_.end() && (r.in_sync || r.since != it->second.since)) {
      emit_({true, r.resource, Seconds(r.since - it->second.since), report.max_out_of_sync, ""});
      logged_.erase(it);
      it = logged_.end();
    }
    const bool beyond = !r.in_sync && r.listed && report.now - r.since > report.max_out_of_sync;
    if (!beyond) continue;
    if (it != logged_.end() && report.now - it->second.logged_at < repeat_) continue;
    emit_({false, r.resource, Seconds(report.now - r.since), report.max_out_of_sync, r.cause});
    logged_[r.resource] = Episode{r.since, report.now};
  }
  for (auto it = logged_.begin(); it != logged_.end();) {
    it = seen.count(it->first) ? std::next(it) : logged_.erase(it);
  }
}

}  // namespace capext
