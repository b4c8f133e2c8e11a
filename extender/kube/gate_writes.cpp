#include "extender/kube/gate_writes.h"

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <ctime>

#include <fmt/format.h>

#include "extender/kube/url_component.h"

namespace capext::kube {
namespace {

using JsonWriter = rapidjson::Writer<rapidjson::StringBuffer>;

std::string PodsPath(const std::string& namespace_name) {
  return "/api/v1/namespaces/" + EscapeUrlComponent(namespace_name) + "/pods";
}

// RFC 6901: "~" -> "~0", "/" -> "~1".
std::string PointerToken(const std::string& key) {
  std::string out;
  for (char c : key) {
    if (c == '~') {
      out += "~0";
    } else if (c == '/') {
      out += "~1";
    } else {
      out += c;
    }
  }
  return out;
}

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

}  // namespace

ApiWriteResult GateLifter::Lift(const std::string& namespace_name, const std::string& pod_name,
                                const std::string& pod_uid,
                                std::chrono::system_clock::time_point admitted,
                                std::chrono::milliseconds timeout) {
  const std::string path = PodsPath(namespace_name) + "/" + EscapeUrlComponent(pod_name);
  const RestResponse got = client_->Send("GET", path, "", "", {}, timeout);
  if (!got.ok()) return FromResponse(got);
  rapidjson::Document pod;
  pod.Parse(got.body.data(), got.body.size());
  if (pod.HasParseError() || !pod.IsObject() || !pod.HasMember("metadata") ||
      !pod["metadata"].IsObject()) {
    return Failure(got.status, "Malformed", "GET pod: not a Pod object");
  }
  const auto& meta = pod["metadata"];
  const std::string uid =
      meta.HasMember("uid") && meta["uid"].IsString() ? meta["uid"].GetString() : "";
  if (!pod_uid.empty() && uid != pod_uid) {
    return Failure(
        409, "Conflict",
        fmt::format("pod {}/{} is another incarnation (uid {})", namespace_name, pod_name, uid));
  }
  int index = -1;
  if (pod.HasMember("spec") && pod["spec"].IsObject() && pod["spec"].HasMember("schedulingGates") &&
      pod["spec"]["schedulingGates"].IsArray()) {
    int i = 0;
    for (const auto& gate : pod["spec"]["schedulingGates"].GetArray()) {
      if (gate.IsObject() && gate.HasMember("name") && gate["name"].IsString() &&
          std::string(gate["name"].GetString()) == kQuotaGate) {
        index = i;
        break;
      }
      ++i;
    }
  }
  if (index < 0) {
    return Failure(
        409, "NotGated",
        fmt::format("pod {}/{} does not carry {}", namespace_name, pod_name, kQuotaGate));
  }
  const bool has_annotations = meta.HasMember("annotations") && meta["annotations"].IsObject();
  const std::string stamp = Rfc3339Millis(admitted);

  rapidjson::StringBuffer body;
  JsonWriter w(body);
  auto op = [&w](const char* name, const std::string& at) {
    w.Key("op");
    w.String(name);
    w.Key("path");
    w.String(at);
  };
  w.StartArray();
  w.StartObject();
  op("test", "/metadata/uid");
  w.Key("value");
  w.String(uid);
  w.EndObject();
  const std::string gate_path = fmt::format("/spec/schedulingGates/{}", index);
  w.StartObject();
  op("test", gate_path + "/name");
  w.Key("value");
  w.String(kQuotaGate);
  w.EndObject();
  w.StartObject();
  op("remove", gate_path);
  w.EndObject();
  w.StartObject();
  if (has_annotations) {
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
  return FromResponse(client_->Send("PATCH", path, std::string(body.GetString(), body.GetSize()),
                                    "application/json-patch+json", {}, timeout));
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
