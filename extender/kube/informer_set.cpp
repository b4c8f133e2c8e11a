#include "extender/kube/informer_set.h"

#include <thread>
#include <utility>

namespace capext::kube {

std::vector<InformerOptions> LiveModeInformers(const DiscoveredApis& apis,
                                               const InformerOptions& base) {
  std::vector<std::pair<std::string, std::string>> resources = {
      {"pods", "/api/v1/pods"},
      {"nodes", "/api/v1/nodes"},
      {"priorityclasses", "/apis/scheduling.k8s.io/v1/priorityclasses"},
      {"poddisruptionbudgets", "/apis/policy/v1/poddisruptionbudgets"},
  };
  std::vector<InformerOptions> out;
  for (auto& [resource, path] : resources) {
    InformerOptions options = base;
    options.resource = resource;
    options.path = path;
    out.push_back(std::move(options));
  }
  for (const auto& gv : apis.elastic_quota_groups)
    out.push_back(ElasticQuotaInformer(gv, base));
  return out;
}

std::vector<InformerOptions> DeviceInformers(const GroupVersion& gv, const InformerOptions& base) {
  std::vector<InformerOptions> out;
  for (const char* resource : {"resourceclaims", "resourceclaimtemplates", "deviceclasses"}) {
    InformerOptions options = base;
    options.resource = resource;
    options.path = gv.ApiPath() + "/" + resource;
    out.push_back(std::move(options));
  }
  return out;
}

std::string ElasticQuotaResource(const std::string& group) {
  return group == kElasticQuotaGroup ? std::string("elasticquotas") : "elasticquotas." + group;
}

InformerOptions ElasticQuotaInformer(const GroupVersion& gv, const InformerOptions& base) {
  InformerOptions options = base;
  options.resource = ElasticQuotaResource(gv.group);
  options.path = gv.ApiPath() + "/elasticquotas";
  return options;
}

InformerSet::InformerSet(RestClient* client, InformerSink* sink, DiscoveredApis apis)
    : client_(client), sink_(sink), apis_(std::move(apis)) {}

InformerSet::~InformerSet() {
  Stop();
}

void InformerSet::Add(InformerOptions options) {
  informers_.push_back(std::make_unique<Informer>(client_, std::move(options), sink_));
}

void InformerSet::Start() {
  for (auto& informer : informers_)
    informer->Start();
}

void InformerSet::Stop() {
  for (auto& informer : informers_)
    informer->Stop();
}

bool InformerSet::HasSynced() const {
  for (const auto& informer : informers_) {
    if (!informer->HasSynced()) return false;
  }
  return true;
}

bool InformerSet::WaitForSync(std::chrono::milliseconds timeout) const {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!HasSynced()) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
}

std::vector<std::string> InformerSet::UnsyncedResources() const {
  std::vector<std::string> out;
  for (const auto& informer : informers_) {
    if (!informer->HasSynced()) out.push_back(informer->resource());
  }
  return out;
}

std::vector<InformerStats> InformerSet::Stats() const {
  std::vector<InformerStats> out;
  for (const auto& informer : informers_)
    out.push_back(informer->Stats());
  return out;
}

}  // namespace capext::kube
