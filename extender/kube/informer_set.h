// InformerSet: the informers of live mode started and stopped together, and the question
// /readyz asks: has every resource been listed once (HasSynced)?
//
// Thread-safety: Add/Start/Stop from one controlling thread; the rest from any thread.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "extender/kube/api_discovery.h"
#include "extender/kube/informer.h"

namespace capext::kube {

// The resources live mode mirrors: pods, nodes, priorityclasses, poddisruptionbudgets and one
// elasticquotas informer per ElasticQuota group served (sink resource names are these plurals;
// see ElasticQuotaResource). `base` supplies the tuning (timeouts, backoff, resync); its resource
// and path are replaced.
std::vector<InformerOptions> LiveModeInformers(const DiscoveredApis& apis,
                                               const InformerOptions& base = {});
// The informer of one ElasticQuota group/version.
InformerOptions ElasticQuotaInformer(const GroupVersion& gv, const InformerOptions& base = {});
// The informers of the DRA objects of `gv` (docs/devices.md 8): resourceclaims,
// resourceclaimtemplates and deviceclasses (the sink resource names).
std::vector<InformerOptions> DeviceInformers(const GroupVersion& gv,
                                             const InformerOptions& base = {});
// The sink resource name of a group's ElasticQuotas: "elasticquotas" for scheduling.x-k8s.io,
// "elasticquotas.<group>" for any other group.
std::string ElasticQuotaResource(const std::string& group);

class InformerSet {
 public:
  // `client` and `sink` must outlive the set. `apis` is kept for apis().
  InformerSet(RestClient* client, InformerSink* sink, DiscoveredApis apis = {});
  ~InformerSet();  // Stop()s

  // REQUIRES: before Start().
  void Add(InformerOptions options);
  void Start();
  void Stop();  // stops every informer; the sink is not called afterwards

  // True once every informer has handed a complete list to the sink (stays true after).
  bool HasSynced() const;
  // Polls HasSynced() (every 10 ms) until true or `timeout`; returns HasSynced().
  bool WaitForSync(std::chrono::milliseconds timeout) const;
  // Resources not listed yet, for /readyz's message.
  std::vector<std::string> UnsyncedResources() const;
  std::vector<InformerStats> Stats() const;
  const DiscoveredApis& apis() const { return apis_; }

 private:
  RestClient* client_;
  InformerSink* sink_;
  DiscoveredApis apis_;
  std::vector<std::unique_ptr<Informer>> informers_;
};

}  // namespace capext::kube
