// ApiDiscovery: which API groups the cluster serves, and which ElasticQuota group to use.
// ElasticQuota exists under two groups: scheduling.x-k8s.io (current scheduler-plugins) and
// scheduling.sigs.k8s.io (older releases). Live mode reads every group that is served (a cluster
// may carry quotas of both); the current one comes first.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "extender/kube/rest_client.h"

namespace capext::kube {

inline constexpr char kElasticQuotaGroup[] = "scheduling.x-k8s.io";
inline constexpr char kLegacyElasticQuotaGroup[] = "scheduling.sigs.k8s.io";
// Pod groups (docs/workloads-live.md#where-group-objects-come-from): coscheduling's PodGroup
// lives in kElasticQuotaGroup/v1alpha1 (resource podgroups); upstream's Workload in
// scheduling.k8s.io/v1alpha1 (resource workloads, Kubernetes 1.35 with GenericWorkload).
inline constexpr char kWorkloadGroup[] = "scheduling.k8s.io";

struct GroupVersion {
  std::string group;
  std::string version;
  std::string ApiPath() const { return "/apis/" + group + "/" + version; }  // no trailing '/'
  std::string ToString() const { return group + "/" + version; }
};

struct DiscoveredApis {
  std::vector<std::string> groups;  // every group of GET /apis, in the server's order
  // Every ElasticQuota group/version served with an "elasticquotas" resource, current group
  // first. Empty when the cluster serves neither (the CRD is not installed).
  std::vector<GroupVersion> elastic_quota_groups;
  // The first of elastic_quota_groups, if any.
  std::optional<GroupVersion> elastic_quota;
  // Why a served ElasticQuota group/version is not usable ("... lists no elasticquotas").
  std::vector<std::string> unusable;
  // The DRA API read (docs/devices.md#8-api-versions): the first of resource.k8s.io v1, v1beta2,
  // v1beta1 served with a "resourceclaims" resource; unset when none is.
  std::optional<GroupVersion> device_api;
  // scheduling.x-k8s.io/v1alpha1 when it lists podgroups; absent otherwise (not an error).
  std::optional<GroupVersion> pod_group;
  // scheduling.k8s.io/v1alpha1 when it lists workloads; absent otherwise (not an error).
  std::optional<GroupVersion> workload;
};

inline constexpr char kDeviceGroup[] = "resource.k8s.io";

// GET /apis, then GET /apis/<group>/<version> of each ElasticQuota group to confirm it serves
// elasticquotas (and, for scheduling.x-k8s.io/v1alpha1, podgroups), of resource.k8s.io for the DRA
// version (device_api), and of scheduling.k8s.io/v1alpha1 when served, for workloads. The
// ElasticQuota version is v1alpha1 when served, else the group's preferred one. Logs nothing (live
// mode runs it periodically and logs changes). Errors only for a failed or malformed /apis.
Status DiscoverApis(RestClient* client, DiscoveredApis* out);

}  // namespace capext::kube
