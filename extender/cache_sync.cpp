#include "extender/cache_sync.h"

#include <fmt/format.h>

#include "config/duration_text.h"

namespace capext {
namespace {

std::string Describe(const CacheSyncReport& report, const ResourceSync& r) {
  if (!r.listed) {
    return r.cause.empty() ? fmt::format("{} not listed yet", r.resource)
                           : fmt::format("{} not listed yet ({})", r.resource, r.cause);
  }
  return fmt::format("{} for {:.1f} s ({})", r.resource, report.OutOfSyncSeconds(r), r.cause);
}

}  // namespace

double CacheSyncReport::OutOfSyncSeconds(const ResourceSync& resource) const {
  if (resource.in_sync || now <= resource.since) return 0;
  return std::chrono::duration<double>(now - resource.since).count();
}

bool CacheSyncReport::AllInSync() const {
  for (const auto& r : resources) {
    if (!r.in_sync) return false;
  }
  return true;
}

std::string CacheSyncReport::StaleReason() const {
  std::string out;
  for (const auto& r : resources) {
    if (r.in_sync || !r.listed || now - r.since <= max_out_of_sync) continue;
    out += (out.empty() ? "" : "; ") + Describe(*this, r);
  }
  if (out.empty()) return out;
  return fmt::format("cache out of sync with the API server for longer than {}: {}",
                     FormatDuration(max_out_of_sync), out);
}

std::string CacheSyncReport::Hold() const {
  std::string out;
  for (const auto& r : resources) {
    if (!r.in_sync) out += (out.empty() ? "" : "; ") + Describe(*this, r);
  }
  return out.empty() ? out : "cache out of sync with the API server: " + out;
}

std::string CacheSyncGauges(const CacheSyncReport& report) {
  if (report.resources.empty()) return "";
  std::string out =
      "# HELP capacity_extender_cache_in_sync 1 while the cache follows the API server for the "
      "resource.\n# TYPE capacity_extender_cache_in_sync gauge\n";
  for (const auto& r : report.resources)
    out += fmt::format("capacity_extender_cache_in_sync{{resource=\"{}\"}} {}\n", r.resource,
                       r.in_sync ? 1 : 0);
  out +=
      "# HELP capacity_extender_cache_out_of_sync_seconds How long the resource has been out of "
      "sync (0 in sync).\n# TYPE capacity_extender_cache_out_of_sync_seconds gauge\n";
  for (const auto& r : report.resources)
    out += fmt::format("capacity_extender_cache_out_of_sync_seconds{{resource=\"{}\"}} {:.3f}\n",
                       r.resource, report.OutOfSyncSeconds(r));
  return out;
}

}  // namespace capext
