#include "extender/kube/api_writes.h"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <fmt/format.h>

#include <ctime>

#include "config/object_codec.h"
#include "extender/kube/api_envelopes.h"
#include "extender/kube/url_component.h"

namespace capext::kube {
namespace {

using JsonWriter = rapidjson::Writer<rapidjson::StringBuffer>;

void PatchField(JsonWriter& writer, const char* key, const std::string& value) {
  writer.Key(key);
  writer.String(value.data(), static_cast<rapidjson::SizeType>(value.size()));
}

std::string PodPath(const std::string& namespace_name, const std::string& pod_name) {
  return "/api/v1/namespaces/" + EscapeUrlComponent(namespace_name) + "/pods/" +
         EscapeUrlComponent(pod_name);
}

ApiWriteResult WriteResultOf(const RestResponse& response) {
  ApiWriteResult result;
  result.http_status = response.status;
  result.ok = response.ok();
  result.sent = response.sent;
  result.send_deadline_passed = response.send_deadline_passed;
  result.queued = response.queued;
  if (!response.error.empty()) {
    result.message = response.error;
    return result;
  }
  ApiStatus status;
  if (ParseApiStatus(response.body, &status)) {
    result.reason = status.reason;
    result.message = status.message;
    result.retry_after_seconds = status.retry_after_seconds;
    if (response.status == 429) {
      for (const auto& cause : status.causes) {
        if (cause.first == "DisruptionBudget") {
          result.refused_by_disruption_budget = true;
          if (!cause.second.empty()) result.message += " (" + cause.second + ")";
        }
      }
    }
  } else if (!result.ok) {
    result.message = response.body.substr(0, 200);
  }
  return result;
}

}  // namespace

namespace {

std::string BindingBody(const std::string& namespace_name, const std::string& pod_name,
                        const std::string& pod_uid, const std::string& node_name) {
  rapidjson::StringBuffer body;
  JsonWriter writer(body);
  writer.StartObject();
  PatchField(writer, "apiVersion", "v1");
  PatchField(writer, "kind", "Binding");
  writer.Key("metadata");
  writer.StartObject();
  PatchField(writer, "name", pod_name);
  PatchField(writer, "namespace", namespace_name);
  PatchField(writer, "uid", pod_uid);
  writer.EndObject();
  writer.Key("target");
  writer.StartObject();
  PatchField(writer, "apiVersion", "v1");
  PatchField(writer, "kind", "Node");
  PatchField(writer, "name", node_name);
  writer.EndObject();
  writer.EndObject();
  return std::string(body.GetString(), body.GetSize());
}

}  // namespace

ApiWriteResult Binder::Bind(const std::string& namespace_name, const std::string& pod_name,
                            const std::string& pod_uid, const std::string& node_name) {
  return WriteResultOf(client_->Post(PodPath(namespace_name, pod_name) + "/binding",
                                     BindingBody(namespace_name, pod_name, pod_uid, node_name)));
}

void Binder::BindAsync(const std::string& namespace_name, const std::string& pod_name,
                       const std::string& pod_uid, const std::string& node_name,
                       std::function<void(ApiWriteResult)> done, CallOptions options) {
  client_->SendAsync(
      "POST", PodPath(namespace_name, pod_name) + "/binding",
      BindingBody(namespace_name, pod_name, pod_uid, node_name), "application/json",
      [done = std::move(done)](RestResponse response) { done(WriteResultOf(response)); },
      std::move(options));
}

ApiWriteResult Evictor::Evict(const std::string& namespace_name, const std::string& pod_name,
                              const std::string& pod_uid,
                              std::optional<int64_t> grace_period_seconds,
                              std::chrono::milliseconds timeout) {
  rapidjson::StringBuffer body;
  JsonWriter writer(body);
  writer.StartObject();
  PatchField(writer, "apiVersion", "policy/v1");
  PatchField(writer, "kind", "Eviction");
  writer.Key("metadata");
  writer.StartObject();
  PatchField(writer, "name", pod_name);
  PatchField(writer, "namespace", namespace_name);
  writer.EndObject();
  if (!pod_uid.empty() || grace_period_seconds) {
    writer.Key("deleteOptions");
    writer.StartObject();
    if (grace_period_seconds) {
      writer.Key("gracePeriodSeconds");
      writer.Int64(*grace_period_seconds);
    }
    if (!pod_uid.empty()) {
      writer.Key("preconditions");
      writer.StartObject();
      PatchField(writer, "uid", pod_uid);
      writer.EndObject();
    }
    writer.EndObject();
  }
  writer.EndObject();
  return WriteResultOf(client_->Send("POST", PodPath(namespace_name, pod_name) + "/eviction",
                                     std::string(body.GetString(), body.GetSize()),
                                     "application/json", {}, timeout));
}

ApiWriteResult StatusPatcher::PatchUsed(const std::string& namespace_name,
                                        const std::string& quota_name,
                                        const std::map<std::string, std::string>& used,
                                        std::chrono::milliseconds timeout) {
  rapidjson::StringBuffer body;
  JsonWriter writer(body);
  writer.StartObject();
  writer.Key("status");
  writer.StartObject();
  writer.Key("used");
  writer.StartObject();
  for (const auto& [resource, quantity] : used)
    PatchField(writer, resource.c_str(), quantity);
  writer.EndObject();
  writer.EndObject();
  writer.EndObject();
  std::string path = elastic_quota_.ApiPath() + "/namespaces/" +
                     EscapeUrlComponent(namespace_name) + "/elasticquotas/" +
                     EscapeUrlComponent(quota_name) + "/status";
  return WriteResultOf(client_->Send("PATCH", path, std::string(body.GetString(), body.GetSize()),
                                     "application/merge-patch+json", {}, timeout));
}

std::string Rfc3339Millis(std::chrono::system_clock::time_point when) {
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(when.time_since_epoch());
  std::time_t seconds = static_cast<std::time_t>(ms.count() / 1000);
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char stamp[40];
  const std::size_t n = std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%S", &utc);
  return std::string(stamp, n) + fmt::format(".{:03}Z", ms.count() % 1000);
}

ApiWriteResult PodAnnotator::MarkForRetry(const std::string& namespace_name,
                                          const std::string& pod_name,
                                          std::chrono::system_clock::time_point when,
                                          std::chrono::milliseconds timeout) {
  std::time_t seconds = std::chrono::system_clock::to_time_t(when);
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return Annotate(namespace_name, pod_name, kRetryAnnotation, std::string(stamp), timeout);
}

ApiWriteResult PodAnnotator::SetReclaimRecord(const std::string& namespace_name,
                                              const std::string& pod_name,
                                              const std::optional<std::string>& record,
                                              std::chrono::milliseconds timeout) {
  return Annotate(namespace_name, pod_name, kReclaimRecordAnnotation, record, timeout);
}

ApiWriteResult PodAnnotator::Annotate(const std::string& namespace_name,
                                      const std::string& pod_name, const char* key,
                                      const std::optional<std::string>& value,
                                      std::chrono::milliseconds timeout) {
  rapidjson::StringBuffer body;
  JsonWriter writer(body);
  writer.StartObject();
  writer.Key("metadata");
  writer.StartObject();
  writer.Key("annotations");
  writer.StartObject();
  if (value) {
    PatchField(writer, key, *value);
  } else {
    writer.Key(key);
    writer.Null();  // a null value removes the annotation
  }
  writer.EndObject();
  writer.EndObject();
  writer.EndObject();
  return WriteResultOf(client_->Send("PATCH", PodPath(namespace_name, pod_name),
                                     std::string(body.GetString(), body.GetSize()),
                                     "application/strategic-merge-patch+json", {}, timeout));
}

}  // namespace capext::kube
