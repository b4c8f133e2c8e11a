// CacheSync: whether the cluster cache follows the API server, resource by resource, and what
// that allows (docs/architecture.md#staying-in-sync-with-the-api-server;
// docs/capacity-semantics.md#12-deciding-on-a-cache-that-is-out-of-sync):
//   - /readyz is not ready once a resource has been out of sync for longer than the bound
//     (maxOutOfSync), and says which, for how long and why (StaleReason);
//   - the reclaim loop and the status.used writes wait while any resource is out of sync, from
//     the first moment (Hold);
//   - /metrics shows each resource's state (CacheSyncGauges).
// Live mode reports its informers' states through a CacheSyncSource (extender/live/); embedded
// mode has none: its cache is the snapshot, always in sync.
// Thread-safety: the report is a value; a source must be callable from any thread.
#pragma once

#include <chrono>
#include <string>
#include <vector>

namespace capext {

struct ResourceSync {
  std::string resource;  // the informer's name: "pods", "elasticquotas", ...
  bool listed = false;   // a first complete list reached the cache
  bool in_sync = false;
  // In sync: since when. Out of sync: the last moment the cache was known to follow.
  std::chrono::steady_clock::time_point since;
  std::string cause;  // out of sync: why
};

struct CacheSyncReport {
  using Clock = std::chrono::steady_clock;
  Clock::time_point now;
  std::chrono::milliseconds max_out_of_sync{5000};  // the /readyz bound
  std::vector<ResourceSync> resources;

  // Seconds the resource has been out of sync (0 when in sync).
  double OutOfSyncSeconds(const ResourceSync& resource) const;
  bool AllInSync() const;
  // "" when nothing has been out of sync beyond max_out_of_sync; else /readyz's reason, naming
  // every such resource: "cache out of sync for longer than 5s: pods for 7.2 s (list
  // /api/v1/pods: ... (retrying))".
  std::string StaleReason() const;
  // "" when every resource is in sync; else why whoever must not act on a stale cache waits:
  // "cache out of sync: pods for 0.4 s (...); nodes not listed yet".
  std::string Hold() const;
};

class CacheSyncSource {
 public:
  virtual ~CacheSyncSource() = default;
  virtual CacheSyncReport Report(std::chrono::steady_clock::time_point now) const = 0;
};

// capacity_extender_cache_in_sync{resource} and capacity_extender_cache_out_of_sync_seconds
// {resource}, in the Prometheus text format ("" for a report without resources).
std::string CacheSyncGauges(const CacheSyncReport& report);

}  // namespace capext
