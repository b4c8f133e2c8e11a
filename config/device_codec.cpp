#include "config/device_codec.h"

#include <fmt/format.h>

#include "config/json_fields.h"

#define CE_RETURN_IF_ERROR(expr)  \
  do {                            \
    ::capext::Status _s = (expr); \
    if (!_s.ok()) return _s;      \
  } while (0)

namespace capext {
namespace {

using json::Member;

Status ReadNamed(const rapidjson::Value& object, std::string_view kind, std::string* ns,
                 std::string* name) {
  CE_RETURN_IF_ERROR(json::ExpectObject(object, std::string(kind)));
  const rapidjson::Value* meta = Member(object, "metadata");
  if (meta == nullptr) return Status::Error("metadata: missing");
  CE_RETURN_IF_ERROR(json::ExpectObject(*meta, "metadata"));
  if (ns != nullptr) {
    CE_RETURN_IF_ERROR(json::ReadString(*meta, "namespace", "metadata.namespace", ns));
    if (ns->empty()) *ns = "default";
  }
  CE_RETURN_IF_ERROR(json::ReadString(*meta, "name", "metadata.name", name));
  if (name->empty()) return Status::Error("metadata.name: missing");
  return {};
}

Status ReadCount(const rapidjson::Value& object, const std::string& path, int64_t* out) {
  const rapidjson::Value* v = Member(object, "count");
  if (v == nullptr) return {};
  if (!v->IsInt64() || v->GetInt64() < 0) {
    return Status::Error(fmt::format("{}.count: expected a non-negative integer", path));
  }
  *out = v->GetInt64();
  return {};
}

// deviceClassName, allocationMode and count of `object` (an exactly part, a subrequest, or a
// v1beta1 request).
Status ReadSubrequest(const rapidjson::Value& object, const std::string& path,
                      DeviceSubrequest* out) {
  CE_RETURN_IF_ERROR(json::ExpectObject(object, path));
  CE_RETURN_IF_ERROR(json::ReadString(object, "name", path + ".name", &out->name));
  CE_RETURN_IF_ERROR(
      json::ReadString(object, "deviceClassName", path + ".deviceClassName", &out->device_class));
  if (out->device_class.empty()) {
    return Status::Error(fmt::format("{}.deviceClassName: missing", path));
  }
  std::string mode;
  CE_RETURN_IF_ERROR(json::ReadString(object, "allocationMode", path + ".allocationMode", &mode));
  if (mode == "All") {
    out->all = true;
  } else if (!mode.empty() && mode != "ExactCount") {
    return Status::Error(fmt::format("{}.allocationMode: unknown mode \"{}\"", path, mode));
  }
  out->count = 1;
  return ReadCount(object, path, &out->count);
}

Status ReadRequest(const rapidjson::Value& object, const std::string& path, DeviceRequest* out) {
  CE_RETURN_IF_ERROR(json::ExpectObject(object, path));
  CE_RETURN_IF_ERROR(json::ReadString(object, "name", path + ".name", &out->name));
  if (const rapidjson::Value* first = Member(object, "firstAvailable")) {
    CE_RETURN_IF_ERROR(json::ExpectArray(*first, path + ".firstAvailable"));
    if (first->Empty()) return Status::Error(fmt::format("{}.firstAvailable: empty", path));
    for (rapidjson::SizeType i = 0; i < first->Size(); ++i) {
      DeviceSubrequest sub;
      CE_RETURN_IF_ERROR(
          ReadSubrequest((*first)[i], fmt::format("{}.firstAvailable[{}]", path, i), &sub));
      out->first_available.push_back(std::move(sub));
    }
    return {};
  }
  // v1 and v1beta2: under exactly; v1beta1: on the request itself (docs/devices.md#8-api-versions).
  if (const rapidjson::Value* exactly = Member(object, "exactly")) {
    return ReadSubrequest(*exactly, path + ".exactly", &out->exactly);
  }
  if (Member(object, "deviceClassName") != nullptr) {
    CE_RETURN_IF_ERROR(ReadSubrequest(object, path, &out->exactly));
    out->exactly.name.clear();
    return {};
  }
  return Status::Error(fmt::format("{}: no exactly, deviceClassName or firstAvailable", path));
}

// spec.devices.requests of a claim spec, and (claims only) status.allocation's results.
Status ReadClaimBody(const rapidjson::Value* spec, const std::string& path,
                     const rapidjson::Value* status, ResourceClaim* out) {
  if (spec != nullptr) {
    CE_RETURN_IF_ERROR(json::ExpectObject(*spec, path));
    if (const rapidjson::Value* devices = Member(*spec, "devices")) {
      CE_RETURN_IF_ERROR(json::ExpectObject(*devices, path + ".devices"));
      if (const rapidjson::Value* requests = Member(*devices, "requests")) {
        CE_RETURN_IF_ERROR(json::ExpectArray(*requests, path + ".devices.requests"));
        for (rapidjson::SizeType i = 0; i < requests->Size(); ++i) {
          DeviceRequest r;
          CE_RETURN_IF_ERROR(
              ReadRequest((*requests)[i], fmt::format("{}.devices.requests[{}]", path, i), &r));
          out->requests.push_back(std::move(r));
        }
      }
    }
  }
  if (status == nullptr) return {};
  CE_RETURN_IF_ERROR(json::ExpectObject(*status, "status"));
  const rapidjson::Value* allocation = Member(*status, "allocation");
  if (allocation == nullptr) return {};
  CE_RETURN_IF_ERROR(json::ExpectObject(*allocation, "status.allocation"));
  out->allocated = true;
  const rapidjson::Value* devices = Member(*allocation, "devices");
  if (devices == nullptr) return {};
  CE_RETURN_IF_ERROR(json::ExpectObject(*devices, "status.allocation.devices"));
  const rapidjson::Value* results = Member(*devices, "results");
  if (results == nullptr) return {};
  CE_RETURN_IF_ERROR(json::ExpectArray(*results, "status.allocation.devices.results"));
  for (rapidjson::SizeType i = 0; i < results->Size(); ++i) {
    const std::string rpath = fmt::format("status.allocation.devices.results[{}]", i);
    CE_RETURN_IF_ERROR(json::ExpectObject((*results)[i], rpath));
    std::string request;
    CE_RETURN_IF_ERROR(json::ReadString((*results)[i], "request", rpath + ".request", &request));
    out->results.push_back(std::move(request));
  }
  return {};
}

}  // namespace

Status DecodeDeviceClass(const rapidjson::Value& object, DeviceClass* out) {
  DeviceClass c;
  CE_RETURN_IF_ERROR(ReadNamed(object, "DeviceClass", nullptr, &c.name));
  if (const rapidjson::Value* spec = Member(object, "spec")) {
    CE_RETURN_IF_ERROR(json::ExpectObject(*spec, "spec"));
    CE_RETURN_IF_ERROR(json::ReadString(*spec, "extendedResourceName", "spec.extendedResourceName",
                                        &c.extended_resource_name));
  }
  *out = std::move(c);
  return {};
}

Status DecodeResourceClaim(const rapidjson::Value& object, ResourceClaim* out) {
  ResourceClaim c;
  CE_RETURN_IF_ERROR(ReadNamed(object, "ResourceClaim", &c.ns, &c.name));
  Status body = ReadClaimBody(Member(object, "spec"), "spec", Member(object, "status"), &c);
  if (!body.ok()) {
    c.requests.clear();
    c.results.clear();
    c.malformed = body.message();
  }
  *out = std::move(c);
  return {};
}

Status DecodeResourceClaimTemplate(const rapidjson::Value& object, ResourceClaimTemplate* out) {
  ResourceClaimTemplate t;
  CE_RETURN_IF_ERROR(ReadNamed(object, "ResourceClaimTemplate", &t.ns, &t.name));
  Status body = {};
  if (const rapidjson::Value* spec = Member(object, "spec")) {
    body = json::ExpectObject(*spec, "spec");
    if (body.ok()) body = ReadClaimBody(Member(*spec, "spec"), "spec.spec", nullptr, &t);
  }
  if (!body.ok()) {
    t.requests.clear();
    t.malformed = body.message();
  }
  *out = std::move(t);
  return {};
}

Status DecodePodClaims(const rapidjson::Value& spec, Pod* pod) {
  const rapidjson::Value* list = Member(spec, "resourceClaims");
  if (list == nullptr) return {};
  CE_RETURN_IF_ERROR(json::ExpectArray(*list, "spec.resourceClaims"));
  for (rapidjson::SizeType i = 0; i < list->Size(); ++i) {
    const std::string path = fmt::format("spec.resourceClaims[{}]", i);
    CE_RETURN_IF_ERROR(json::ExpectObject((*list)[i], path));
    PodClaimRef ref;
    CE_RETURN_IF_ERROR(json::ReadString((*list)[i], "name", path + ".name", &ref.name));
    CE_RETURN_IF_ERROR(json::ReadString((*list)[i], "resourceClaimName",
                                        path + ".resourceClaimName", &ref.claim_name));
    CE_RETURN_IF_ERROR(json::ReadString((*list)[i], "resourceClaimTemplateName",
                                        path + ".resourceClaimTemplateName", &ref.template_name));
    pod->resource_claims.push_back(std::move(ref));
  }
  return {};
}

Status DecodePodClaimStatuses(const rapidjson::Value& status, Pod* pod) {
  const rapidjson::Value* list = Member(status, "resourceClaimStatuses");
  if (list == nullptr) return {};
  CE_RETURN_IF_ERROR(json::ExpectArray(*list, "status.resourceClaimStatuses"));
  for (rapidjson::SizeType i = 0; i < list->Size(); ++i) {
    const std::string path = fmt::format("status.resourceClaimStatuses[{}]", i);
    CE_RETURN_IF_ERROR(json::ExpectObject((*list)[i], path));
    std::string name, claim;
    CE_RETURN_IF_ERROR(json::ReadString((*list)[i], "name", path + ".name", &name));
    CE_RETURN_IF_ERROR(
        json::ReadString((*list)[i], "resourceClaimName", path + ".resourceClaimName", &claim));
    JoinPodClaimStatus(name, claim, &pod->resource_claims);
  }
  return {};
}

void JoinPodClaimStatus(const std::string& name, const std::string& claim,
                        std::vector<PodClaimRef>* claims) {
  for (auto& ref : *claims) {
    if (ref.name != name || ref.template_name.empty()) continue;
    ref.claim_name = claim;
    ref.no_claim_needed = claim.empty();
  }
}

Status DecodeDeviceClassMappings(const rapidjson::Value& list,
                                 std::vector<DeviceClassMapping>* out) {
  CE_RETURN_IF_ERROR(json::ExpectArray(list, "deviceClassMappings"));
  std::vector<DeviceClassMapping> mappings;
  for (rapidjson::SizeType i = 0; i < list.Size(); ++i) {
    const std::string path = fmt::format("deviceClassMappings[{}]", i);
    CE_RETURN_IF_ERROR(json::ExpectObject(list[i], path));
    DeviceClassMapping m;
    CE_RETURN_IF_ERROR(json::ReadString(list[i], "name", path + ".name", &m.resource));
    if (m.resource.empty()) return Status::Error(path + ".name: missing");
    const rapidjson::Value* classes = Member(list[i], "deviceClassNames");
    if (classes == nullptr) return Status::Error(path + ".deviceClassNames: missing");
    CE_RETURN_IF_ERROR(json::ExpectArray(*classes, path + ".deviceClassNames"));
    for (rapidjson::SizeType j = 0; j < classes->Size(); ++j) {
      if (!(*classes)[j].IsString()) {
        return Status::Error(fmt::format("{}.deviceClassNames[{}]: expected a string", path, j));
      }
      m.device_classes.emplace_back((*classes)[j].GetString());
    }
    if (const rapidjson::Value* n = Member(list[i], "allocationModeAllCount")) {
      if (!n->IsInt64() || n->GetInt64() < 0) {
        return Status::Error(path + ".allocationModeAllCount: expected a non-negative integer");
      }
      m.all_count = n->GetInt64();
    }
    mappings.push_back(std::move(m));
  }
  *out = std::move(mappings);
  return {};
}

}  // namespace capext
