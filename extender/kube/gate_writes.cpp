#include "extender/kube/gate_writes.h"

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <ctime>
#include <optional>

#include <fmt/format.h>

#include "config/json_fields.h"
#include "config/object_codec.h"
#include "config/object_stream_decoder.h"
#include "extender/kube/url_component.h"

namespace capext::kube {
namespace {

using JsonWriter = rapidjson::Writer<rapidjson::StringBuffer>;

std::string PodsPath(const std::string& namespace_name) {
  return "/api/v1/namespaces/" + EscapeUrlComponent(namespace_name) + "/pods";
}

using json::PointerToken;

ApiWriteResult Failure(int status, std::string reason, std::string message) {
  ApiWriteResult r;
  r.http_status = status;
  r.reason = std::move(reason);
  r.message = std::move(message);
  return r;
}

// ToResult of api_writes.cpp is private to it: the Status fields we need are read here.
ApiWriteResult FromResponse(const RestResponse& response) {
  ApiWriteResult r;
  r.http_status = response.status;
  r.ok = response.ok();
  if (!response.error.empty()) {
    r.message = response.error;
    return r;
  }
  if (r.ok) return r;
  rapidjson::Document d;
  d.Parse(response.body.data(), response.body.size());
  if (!d.HasParseError() && d.IsObject()) {
    if (d.HasMember("reason") && d["reason"].IsString()) r.reason = d["reason"].GetString();
    if (d.HasMember("message") && d["message"].IsString()) r.message = d["message"].GetString();
  } else {
    r.message = response.body.substr(0, 200);
  }
  return r;
}

// The patch of docs/workloads-live.md#the-gate-removal, from `basis`.
std::string GatePatch(const PodPatchBasis& basis, const std::string& stamp) {
  rapidjson::StringBuffer body;
  JsonWriter w(body);
  auto op = [&w](const char* name, const std::string& at) {
    w.StartObject();
    w.Key("op");
    w.String(name);
    w.Key("path");
    w.String(at);
  };
  const std::string gate_path = fmt::format("/spec/schedulingGates/{}", basis.quota_gate_index);
  w.StartArray();
  op("test", "/metadata/resourceVersion");
  w.Key("value");
  w.String(basis.resource_version);
  w.EndObject();
  op("test", gate_path + "/name");
  w.Key("value");
  w.String(kQuotaGate);
  w.EndObject();
  op("remove", gate_path);
  w.EndObject();
  if (basis.has_annotations) {
    op("add", "/metadata/annotations/" + PointerToken(kAdmittedAtAnnotation));
    w.Key("value");
    w.String(stamp);
  } else {
    op("add", "/metadata/annotations");
    w.Key("value");
    w.StartObject();
    w.Key(kAdmittedAtAnnotation);
    w.String(stamp);
    w.EndObject();
  }
  w.EndObject();
  w.EndArray();
  return std::string(body.GetString(), body.GetSize());
}

// The patch of docs/workloads-live.md#revoking-an-admission, from `basis`.
std::string RevokePatch(const PodPatchBasis& basis) {
  rapidjson::StringBuffer body;
  JsonWriter w(body);
  w.StartArray();
  w.StartObject();
  w.Key("op");
  w.String("test");
  w.Key("path");
  w.String("/metadata/resourceVersion");
  w.Key("value");
  w.String(basis.resource_version);
  w.EndObject();
  w.StartObject();
  w.Key("op");
  w.String("remove");
  w.Key("path");
  w.String("/metadata/annotations/" + PointerToken(kAdmittedAtAnnotation));
  w.EndObject();
  w.EndArray();
  return std::string(body.GetString(), body.GetSize());
}

// After a refused patch: the pod read back, decoded as the watch's pods are (so that it means what
// the cache would). On failure, the write's answer: `*refused` when the server refused the read
// (its status then decides), else the answer was not this pod (malformed, another incarnation).
std::optional<ApiWriteResult> ReadBack(RestClient* client, const std::string& path,
                                       const std::string& namespace_name,
                                       const std::string& pod_name, const std::string& pod_uid,
                                       std::chrono::milliseconds timeout, Pod* pod, bool* refused) {
  const RestResponse got = client->Send("GET", path, "", "", {}, timeout);
  *refused = !got.ok();
  if (*refused) return FromResponse(got);
  std::string kind;
  if (Status s = DecodePodJson(got.body, DecodeOptions{}, pod, &kind); !s.ok() || kind != "Pod") {
    return Failure(got.status, "Malformed",
                   "GET pod: " + (s.ok() ? "kind " + kind + ", not Pod" : s.message()));
  }
  if (!pod_uid.empty() && pod->uid != pod_uid) {
    return Failure(409, "Conflict",
                   fmt::format("pod {}/{} is another incarnation (uid {})", namespace_name,
                               pod_name, pod->uid));
  }
  return std::nullopt;
}

}  // namespace

AdmissionRevocationWrite AdmissionRevoker::Revoke(const std::string& namespace_name,
                                                  const std::string& pod_name,
                                                  const std::string& pod_uid,
                                                  const PodPatchBasis& cached, int64_t admitted_ms,
                                                  std::chrono::milliseconds timeout) {
  const std::string path = PodsPath(namespace_name) + "/" + EscapeUrlComponent(pod_name);
  auto patch = [&](const PodPatchBasis& basis) {
    return FromResponse(client_->Send("PATCH", path, RevokePatch(basis),
                                      "application/json-patch+json", {}, timeout));
  };
  AdmissionRevocationWrite out;
  auto settle = [&out]() {
    if (out.write.ok) {
      out.outcome = RevokeOutcome::kRevoked;
    } else if (out.write.http_status == 404) {
      out.outcome = RevokeOutcome::kNothingToRevoke;
    }
    return out;
  };
  if (!cached.resource_version.empty()) {
    out.write = patch(cached);
    // 422: a `test` failed; 409: the server's own retries met a conflict. Nothing was written.
    if (out.write.ok || (out.write.http_status != 422 && out.write.http_status != 409))
      return settle();
  }
  out.read = true;
  Pod pod;
  bool refused = false;
  if (auto failed =
          ReadBack(client_, path, namespace_name, pod_name, pod_uid, timeout, &pod, &refused)) {
    out.write = std::move(*failed);
    return refused ? settle() : out;  // a 404 on the read: nothing left to revoke
  }
  if (pod.admitted_ms == 0) {
    out.outcome = RevokeOutcome::kNothingToRevoke;
    return out;
  }
  if (pod.admitted_ms != admitted_ms) {
    out.outcome = RevokeOutcome::kChanged;
    return out;
  }
  out.write = patch(pod.patch_basis);
  return settle();
}

GateLift GateLifter::Lift(const std::string& namespace_name, const std::string& pod_name,
                          const std::string& pod_uid, const PodPatchBasis& cached,
                          std::chrono::system_clock::time_point admitted,
                          std::chrono::milliseconds timeout) {
  const std::string path = PodsPath(namespace_name) + "/" + EscapeUrlComponent(pod_name);
  const std::string stamp = Rfc3339Millis(admitted);
  auto patch = [&](const PodPatchBasis& basis) {
    return FromResponse(client_->Send("PATCH", path, GatePatch(basis, stamp),
                                      "application/json-patch+json", {}, timeout));
  };
  GateLift out;
  if (!cached.resource_version.empty() && cached.quota_gate_index >= 0) {
    out.write = patch(cached);
    // 422: a `test` failed (kube-apiserver answers a JSON patch that does not apply so); 409: its
    // own retries met a conflict. Either way nothing was written and the cache was stale.
    if (out.write.ok || (out.write.http_status != 422 && out.write.http_status != 409)) return out;
  }
  out.read = true;
  Pod pod;
  bool refused = false;
  if (auto failed =
          ReadBack(client_, path, namespace_name, pod_name, pod_uid, timeout, &pod, &refused)) {
    out.write = std::move(*failed);
    return out;
  }
  if (pod.patch_basis.quota_gate_index < 0) {
    out.write =
        Failure(409, "NotGated",
                fmt::format("pod {}/{} does not carry {}", namespace_name, pod_name, kQuotaGate));
    return out;
  }
  out.write = patch(pod.patch_basis);
  return out;
}

GateSupport ProbeSchedulingGates(RestClient* client, const std::string& namespace_name) {
  const std::string body = fmt::format(
      R"({{"apiVersion":"v1","kind":"Pod","metadata":{{"generateName":"capacity-extender-gate-probe-"}},)"
      R"("spec":{{"schedulingGates":[{{"name":"{}"}}],"containers":[{{"name":"probe","image":"probe"}}]}}}})",
      kQuotaGate);
  const RestResponse response = client->Post(PodsPath(namespace_name) + "?dryRun=All", body);
  GateSupport out;
  if (!response.ok()) {
    const ApiWriteResult r = FromResponse(response);
    out.detail = fmt::format(
        "dry-run create of a gated pod in {} failed: {}", namespace_name,
        r.http_status == 0 ? r.message
                           : fmt::format("HTTP {} {}: {}", r.http_status, r.reason, r.message));
    return out;
  }
  out.known = true;
  rapidjson::Document pod;
  pod.Parse(response.body.data(), response.body.size());
  if (!pod.HasParseError() && pod.IsObject() && pod.HasMember("spec") && pod["spec"].IsObject() &&
      pod["spec"].HasMember("schedulingGates") && pod["spec"]["schedulingGates"].IsArray()) {
    for (const auto& gate : pod["spec"]["schedulingGates"].GetArray()) {
      if (gate.IsObject() && gate.HasMember("name") && gate["name"].IsString() &&
          std::string(gate["name"].GetString()) == kQuotaGate)
        out.kept = true;
    }
  }
  out.detail = out.kept ? "the API server keeps spec.schedulingGates"
                        : "the API server dropped spec.schedulingGates from a dry-run pod "
                          "(Kubernetes 1.26 needs --feature-gates=PodSchedulingReadiness=true on "
                          "kube-apiserver and kube-scheduler)";
  return out;
}

}  // namespace capext::kube
