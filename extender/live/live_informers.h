// LiveInformers: the informers of live mode, and the cache's sync report over them. Pods, nodes,
// PriorityClasses and PodDisruptionBudgets always; one ElasticQuota informer per served group,
// started and stopped as discovery finds groups served or gone (ApplyQuotaGroups); the DRA
// informers while resource.k8s.io is served, at the version discovery chose (ApplyDeviceApi); one
// informer each for coscheduling PodGroups and upstream Workloads while their API is served
// (ApplyGroupApis; docs/workloads-live.md#where-group-objects-come-from). Each informer's
// SyncState becomes one ResourceSync of Report() (cache_sync.h), so /readyz, /metrics and the
// reclaim loop see every resource, ElasticQuota groups, DRA objects and pod-group APIs included.
// Thread-safety: Start/ApplyQuotaGroups/ApplyDeviceApi/ApplyGroupApis/Stop from the controlling
// threads (main, live mode's background thread), never concurrently with each other; Report,
// UnsyncedResources and QuotaGroups from any thread.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "extender/cache_sync.h"
#include "extender/kube/api_discovery.h"
#include "extender/kube/informer.h"
#include "extender/kube/informer_sink.h"
#include "extender/kube/rest_client.h"

namespace capext {

class LiveInformers final : public CacheSyncSource {
 public:
  // `base` gives every informer's tuning (timeouts, retries, resync); `client` and `sink` must
  // outlive this object. `max_out_of_sync` is the bound reported with each Report().
  LiveInformers(kube::RestClient* client, kube::InformerSink* sink, kube::InformerOptions base,
                std::chrono::milliseconds max_out_of_sync);
  ~LiveInformers() override;  // Stop()s

  // Starts the fixed informers.
  void Start();
  // Starts an informer for every ElasticQuota group newly served. A group missing from
  // discovery is dropped (its informer stopped, its quotas emptied in the sink) only when it is
  // missing from two discoveries in a row: a restarting API server lists its custom resources
  // late (measured on 1.26: a discovery during its start lacked the CRD group), and dropping the
  // quotas then would let pods past them. Returns true when the set changed.
  bool ApplyQuotaGroups(const kube::DiscoveredApis& apis);
  // Starts the DRA informers when resource.k8s.io is first served, moves them when the version
  // read changes, and stops them (their objects emptied in the sink) when it is no longer served
  // (docs/devices.md#8-api-versions). Returns true when the set changed.
  bool ApplyDeviceApi(const kube::DiscoveredApis& apis);
  // Starts the PodGroup and Workload informers whose API discovery now serves; stops one no
  // longer served and drops its objects (an empty Replace into the sink). Unlike quotas, no
  // second discovery is awaited: a group spec dropped for a moment makes its pods single pods
  // for that moment, which admits nothing a quota forbids.
  void ApplyGroupApis(const kube::DiscoveredApis& apis);
  // Stops every informer; the sink is not called afterwards. Idempotent.
  void Stop();

  CacheSyncReport Report(std::chrono::steady_clock::time_point now) const override;
  // Resources not listed once yet (for the first-sync readiness).
  std::vector<std::string> UnsyncedResources() const;
  // The ElasticQuota groups watched now.
  std::vector<kube::GroupVersion> QuotaGroups() const;
  bool ServesQuotas() const { return !QuotaGroups().empty(); }

 private:
  kube::RestClient* client_;
  kube::InformerSink* sink_;
  kube::InformerOptions base_;
  std::chrono::milliseconds max_out_of_sync_;
  mutable std::mutex mutex_;  // guards the containers below (not the informers' own state)
  std::vector<std::unique_ptr<kube::Informer>> fixed_;
  struct QuotaInformer {
    kube::GroupVersion gv;
    std::unique_ptr<kube::Informer> informer;
    bool missing_once = false;  // the last discovery did not list it
  };
  std::map<std::string, QuotaInformer> quota_;  // by group
  std::vector<std::unique_ptr<kube::Informer>> device_;
  std::string device_api_;  // the resource.k8s.io version the DRA informers read ("" = none)
  std::map<std::string, std::unique_ptr<kube::Informer>> groups_;  // pod-group APIs, by resource
  bool stopped_ = false;
};

}  // namespace capext
