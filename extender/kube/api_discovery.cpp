#include "extender/kube/api_discovery.h"

#include <rapidjson/document.h>

#include <algorithm>

namespace capext::kube {
namespace {

struct ServedGroup {
  std::string name;
  std::vector<std::string> versions;
  std::string preferred;
};

std::string DiscoveryString(const rapidjson::Value& object, const char* name) {
  if (!object.IsObject()) return "";
  auto it = object.FindMember(name);
  if (it == object.MemberEnd() || !it->value.IsString()) return "";
  return it->value.GetString();
}

Status ParseGroupList(const std::string& body, std::vector<ServedGroup>* out) {
  rapidjson::Document document;
  document.Parse(body.data(), body.size());
  if (document.HasParseError() || !document.IsObject() ||
      DiscoveryString(document, "kind") != "APIGroupList") {
    return Status::Error("GET /apis did not return an APIGroupList");
  }
  auto groups = document.FindMember("groups");
  if (groups == document.MemberEnd() || !groups->value.IsArray()) return Status::Ok();
  for (const auto& group : groups->value.GetArray()) {
    ServedGroup served;
    served.name = DiscoveryString(group, "name");
    if (served.name.empty()) continue;
    auto versions = group.FindMember("versions");
    if (versions != group.MemberEnd() && versions->value.IsArray()) {
      for (const auto& version : versions->value.GetArray()) {
        std::string v = DiscoveryString(version, "version");
        if (!v.empty()) served.versions.push_back(v);
      }
    }
    auto preferred = group.FindMember("preferredVersion");
    if (preferred != group.MemberEnd())
      served.preferred = DiscoveryString(preferred->value, "version");
    out->push_back(std::move(served));
  }
  return Status::Ok();
}

// The ElasticQuota version of a served group: v1alpha1 (what the CRD defines), else preferred.
GroupVersion ChooseVersion(const ServedGroup& group) {
  bool has_v1alpha1 =
      std::find(group.versions.begin(), group.versions.end(), "v1alpha1") != group.versions.end();
  std::string version = has_v1alpha1 ? "v1alpha1" : group.preferred;
  if (version.empty() && !group.versions.empty()) version = group.versions.front();
  return GroupVersion{group.name, version};
}

// The resource names of GET /apis/<group>/<version>, or why they cannot be read.
Status ListResources(RestClient* client, const GroupVersion& gv, std::vector<std::string>* names) {
  RestResponse response = client->Get(gv.ApiPath());
  if (response.status != 200) {
    return Status::Unavailable(response.error.empty() ? "HTTP " + std::to_string(response.status)
                                                      : response.error);
  }
  rapidjson::Document document;
  document.Parse(response.body.data(), response.body.size());
  if (document.HasParseError() || !document.IsObject()) {
    return Status::Invalid("malformed APIResourceList");
  }
  auto resources = document.FindMember("resources");
  if (resources != document.MemberEnd() && resources->value.IsArray()) {
    for (const auto& resource : resources->value.GetArray())
      names->push_back(DiscoveryString(resource, "name"));
  }
  return {};
}

bool Lists(const std::vector<std::string>& names, const char* resource) {
  return std::find(names.begin(), names.end(), resource) != names.end();
}

// The DRA version read: the first served of v1, v1beta2, v1beta1 that lists resourceclaims
// (docs/devices.md#8-api-versions).
std::optional<GroupVersion> ChooseDeviceApi(RestClient* client, const ServedGroup& group) {
  for (const char* version : {"v1", "v1beta2", "v1beta1"}) {
    if (std::find(group.versions.begin(), group.versions.end(), version) == group.versions.end())
      continue;
    GroupVersion gv{group.name, version};
    std::vector<std::string> names;
    if (ListResources(client, gv, &names).ok() && Lists(names, "resourceclaims")) return gv;
  }
  return std::nullopt;
}

}  // namespace

Status DiscoverApis(RestClient* client, DiscoveredApis* out) {
  RestResponse response = client->Get("/apis");
  if (response.status != 200) {
    return Status::Error("API discovery GET /apis: " +
                         (response.error.empty() ? "HTTP " + std::to_string(response.status) +
                                                       ": " + response.body.substr(0, 200)
                                                 : response.error));
  }
  std::vector<ServedGroup> groups;
  Status status = ParseGroupList(response.body, &groups);
  if (!status.ok()) return status;

  DiscoveredApis apis;
  const ServedGroup* current = nullptr;
  const ServedGroup* legacy = nullptr;
  const ServedGroup* workload = nullptr;
  for (const auto& group : groups) {
    apis.groups.push_back(group.name);
    if (group.name == kDeviceGroup) apis.device_api = ChooseDeviceApi(client, group);
    if (group.name == kElasticQuotaGroup) current = &group;
    if (group.name == kLegacyElasticQuotaGroup) legacy = &group;
    if (group.name == kWorkloadGroup) workload = &group;
  }
  for (const ServedGroup* candidate : {current, legacy}) {
    if (candidate == nullptr) continue;
    GroupVersion gv = ChooseVersion(*candidate);
    std::vector<std::string> names;
    if (Status s = ListResources(client, gv, &names); !s.ok()) {
      apis.unusable.push_back("ElasticQuota group " + gv.ToString() + " unusable: " + s.message());
      continue;
    }
    if (Lists(names, "elasticquotas")) {
      apis.elastic_quota_groups.push_back(gv);
    } else {
      apis.unusable.push_back("ElasticQuota group " + gv.ToString() +
                              " unusable: no elasticquotas resource listed");
    }
    // coscheduling's PodGroup CRD defines v1alpha1 only.
    if (candidate == current && gv.version == "v1alpha1" && Lists(names, "podgroups"))
      apis.pod_group = gv;
  }
  // Workload is alpha: only v1alpha1 is read, and only when the group lists that version.
  if (workload != nullptr && std::find(workload->versions.begin(), workload->versions.end(),
                                       "v1alpha1") != workload->versions.end()) {
    const GroupVersion gv{kWorkloadGroup, "v1alpha1"};
    std::vector<std::string> names;
    if (ListResources(client, gv, &names).ok() && Lists(names, "workloads")) apis.workload = gv;
  }
  if (!apis.elastic_quota_groups.empty()) apis.elastic_quota = apis.elastic_quota_groups.front();
  *out = std::move(apis);
  return Status::Ok();
}

}  // namespace capext::kube
