#include "extender/kube/lease_record.h"

#include <rapidjson/document.h>

#include <fmt/format.h>

#include <optional>

#include "config/json_fields.h"
#include "extender/kube/api_envelopes.h"
#include "extender/kube/url_component.h"

namespace capext::kube {

Status ParseLease(std::string_view json_text, LeaseRecord* out) {
  rapidjson::Document doc;
  doc.Parse(json_text.data(), json_text.size());
  if (doc.HasParseError() || !doc.IsObject())
    return Status::Invalid("the Lease is not a JSON object");
  LeaseRecord record;
  record.exists = true;
  if (const rapidjson::Value* meta = json::Member(doc, "metadata")) {
    if (Status s = json::ExpectObject(*meta, "metadata"); !s.ok()) return s;
    if (Status s = json::ReadString(*meta, "resourceVersion", "metadata.resourceVersion",
                                    &record.resource_version);
        !s.ok()) {
      return s;
    }
  }
  if (const rapidjson::Value* spec = json::Member(doc, "spec")) {
    if (Status s = json::ExpectObject(*spec, "spec"); !s.ok()) return s;
    if (Status s = json::ReadString(*spec, "holderIdentity", "spec.holderIdentity", &record.holder);
        !s.ok()) {
      return s;
    }
    std::optional<int32_t> duration, transitions;
    if (Status s =
            json::ReadInt32(*spec, "leaseDurationSeconds", "spec.leaseDurationSeconds", &duration);
        !s.ok()) {
      return s;
    }
    if (Status s =
            json::ReadInt32(*spec, "leaseTransitions", "spec.leaseTransitions", &transitions);
        !s.ok()) {
      return s;
    }
    record.duration_seconds = duration.value_or(0);
    record.transitions = transitions.value_or(0);
  }
  if (record.resource_version.empty()) {
    return Status::Invalid("the Lease has no metadata.resourceVersion");
  }
  *out = std::move(record);
  return {};
}

Status ReadLease(RestClient* client, const std::string& namespace_name, const std::string& name,
                 LeaseRecord* out, std::stop_token stop, std::chrono::milliseconds timeout) {
  const std::string path = "/apis/coordination.k8s.io/v1/namespaces/" +
                           EscapeUrlComponent(namespace_name) + "/leases/" +
                           EscapeUrlComponent(name);
  RestResponse response = client->Send("GET", path, "", "", stop, timeout);
  if (response.status == 404) {
    *out = LeaseRecord{};
    return {};
  }
  if (!response.ok()) {
    std::string why = response.error;
    if (why.empty()) {
      ApiStatus status;
      why = ParseApiStatus(response.body, &status) ? status.message : response.body.substr(0, 200);
      why = fmt::format("HTTP {}: {}", response.status, why);
    }
    return Status::Unavailable(
        fmt::format("cannot read the lease {}/{}: {}", namespace_name, name, why));
  }
  if (Status s = ParseLease(response.body, out); !s.ok()) {
    return s.WithContext(fmt::format("lease {}/{}", namespace_name, name));
  }
  return {};
}

}  // namespace capext::kube
