// ApiDiscovery: which API groups the cluster serves, and which ElasticQuota group to use.
// ElasticQuota exists under two groups: scheduling.x-k8s.io (current scheduler-plugins) and
// scheduling.sigs.k8s.io (older releases). The current one is preferred when both are served.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "extender/kube/rest_client.h"

namespace capext::kube {

inline constexpr char kElasticQuotaGroup[] = "scheduling.x-k8s.io";
inline constexpr char kLegacyElasticQuotaGroup[] = "scheduling.sigs.k8s.io";

struct GroupVersion {
  std::string group;
  std::string version;
  std::string ApiPath() const { return "/apis/" + group + "/" + version; }  // no trailing '/'
  std::string ToString() const { return group + "/" + version; }
};

struct DiscoveredApis {
  std::vector<std::string> groups;  // every group of GET /apis, in the server's order
  // The ElasticQuota group/version in use; empty when the cluster serves neither group (the
  // CRD is not installed) or the chosen group/version lists no "elasticquotas" resource.
  std::optional<GroupVersion> elastic_quota;
};

// GET /apis, then GET /apis/<group>/<version> of the chosen ElasticQuota group to confirm it
// serves elasticquotas. The version is v1alpha1 when served, else the group's preferred one.
// Logs the choice and any ignored alternative. Errors only for a failed or malformed /apis.
Status DiscoverApis(RestClient* client, DiscoveredApis* out);

}  // namespace capext::kube
