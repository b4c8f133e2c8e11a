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

std::string StringMember(const rapidjson::Value& object, const char* name) {
  if (!object.IsObject()) return "";
  auto it = object.FindMember(name);
  if (it == object.MemberEnd() || !it->value.IsString()) return "";
  return it->value.GetString();
}

Status ParseGroupList(const std::string& body, std::vector<ServedGroup>* out) {
  rapidjson::Document document;
  document.Parse(body.data(), body.size());
  if (document.HasParseError() || !document.IsObject() ||
      StringMember(document, "kind") != "APIGroupList") {
    return Status::Error("GET /apis did not return an APIGroupList");
  }
  auto groups = document.FindMember("groups");
  if (groups == document.MemberEnd() || !groups->value.IsArray()) return Status::Ok();
  for (const auto& group : groups->value.GetArray()) {
    ServedGroup served;
    served.name = StringMember(group, "name");
    if (served.name.empty()) continue;
    auto versions = group.FindMember("versions");
    if (versions != group.MemberEnd() && versions->value.IsArray()) {
      for (const auto& version : versions->value.GetArray()) {
        std::string v = StringMember(version, "version");
        if (!v.empty()) served.versions.push_back(v);
      }
    }
    auto preferred = group.FindMember("preferredVersion");
    if (preferred != group.MemberEnd())
      served.preferred = StringMember(preferred->value, "version");
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

bool ServesResource(RestClient* client, const GroupVersion& gv, std::string_view name,
                    std::string* why) {
  RestResponse response = client->Get(gv.ApiPath());
  if (response.status != 200) {
    *why = response.error.empty() ? "HTTP " + std::to_string(response.status) : response.error;
    return false;
  }
  rapidjson::Document document;
  document.Parse(response.body.data(), response.body.size());
  if (document.HasParseError() || !document.IsObject()) {
    *why = "malformed APIResourceList";
    return false;
  }
  auto resources = document.FindMember("resources");
  if (resources != document.MemberEnd() && resources->value.IsArray()) {
    for (const auto& resource : resources->value.GetArray()) {
      if (StringMember(resource, "name") == name) return true;
    }
  }
  *why = "no " + std::string(name) + " resource listed";
  return false;
}

// The DRA version read: the first served of v1, v1beta2, v1beta1 that lists resourceclaims
// (docs/devices.md#8-api-versions).
std::optional<GroupVersion> ChooseDeviceApi(RestClient* client, const ServedGroup& group) {
  for (const char* version : {"v1", "v1beta2", "v1beta1"}) {
    if (std::find(group.versions.begin(), group.versions.end(), version) == group.versions.end())
      continue;
    GroupVersion gv{group.name, version};
    std::string why;
    if (ServesResource(client, gv, "resourceclaims", &why)) return gv;
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
  for (const auto& group : groups) {
    apis.groups.push_back(group.name);
    if (group.name == kDeviceGroup) apis.device_api = ChooseDeviceApi(client, group);
    if (group.name == kElasticQuotaGroup) current = &group;
    if (group.name == kLegacyElasticQuotaGroup) legacy = &group;
  }
  for (const ServedGroup* candidate : {current, legacy}) {
    if (candidate == nullptr) continue;
    GroupVersion gv = ChooseVersion(*candidate);
    std::string why;
    if (ServesResource(client, gv, "elasticquotas", &why)) {
      apis.elastic_quota_groups.push_back(gv);
    } else {
      apis.unusable.push_back("ElasticQuota group " + gv.ToString() + " unusable: " + why);
    }
  }
  if (!apis.elastic_quota_groups.empty()) apis.elastic_quota = apis.elastic_quota_groups.front();
  *out = std::move(apis);
  return Status::Ok();
}

}  // namespace capext::kube
