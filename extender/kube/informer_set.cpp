#include "extender/kube/informer_set.h"

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
    // The sink decodes protobuf for pods and nodes only: nearly every event is one of theirs.
    options.protobuf_watch = base.protobuf_watch && (resource == "pods" || resource == "nodes");
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
    options.protobuf_watch = false;
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
  options.protobuf_watch = false;  // a custom resource: JSON only
  options.path = gv.ApiPath() + "/elasticquotas";
  return options;
}

}  // namespace capext::kube
