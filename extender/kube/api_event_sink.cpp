#include "extender/kube/api_event_sink.h"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <ctime>

#include <fmt/format.h>

#include "extender/kube/api_envelopes.h"
#include "extender/kube/url_component.h"

namespace capext::kube {
namespace {

using JsonWriter = rapidjson::Writer<rapidjson::StringBuffer>;

void EventField(JsonWriter& w, const char* key, const std::string& value) {
  w.Key(key);
  w.String(value.data(), static_cast<rapidjson::SizeType>(value.size()));
}

std::string EventsPath(const std::string& ns) {
  return "/apis/events.k8s.io/v1/namespaces/" + EscapeUrlComponent(ns) + "/events";
}

EventWriteResult EventResultOf(const RestResponse& response) {
  EventWriteResult result;
  if (response.ok()) return result;
  result.code = response.status == 404 ? EventWriteCode::kNotFound : EventWriteCode::kFailed;
  if (!response.error.empty()) {
    result.error = response.error;
    return result;
  }
  ApiStatus status;
  result.error = ParseApiStatus(response.body, &status)
                     ? fmt::format("HTTP {} {}: {}", response.status, status.reason, status.message)
                     : fmt::format("HTTP {}: {}", response.status, response.body.substr(0, 200));
  return result;
}

void WriteSeries(JsonWriter& w, int32_t count, int64_t last_observed_us) {
  w.Key("series");
  w.StartObject();
  w.Key("count");
  w.Int(count);
  EventField(w, "lastObservedTime", ApiEventSink::MicroTime(last_observed_us));
  w.EndObject();
}

}  // namespace

std::string ApiEventSink::MicroTime(int64_t unix_us) {
  const std::time_t seconds = static_cast<std::time_t>(unix_us / 1'000'000);
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%S", &utc);
  return fmt::format("{}.{:06d}Z", stamp, unix_us % 1'000'000);
}

std::string ApiEventSink::CreateBody(const EventObject& e) {
  rapidjson::StringBuffer body;
  JsonWriter w(body);
  w.StartObject();
  EventField(w, "apiVersion", "events.k8s.io/v1");
  EventField(w, "kind", "Event");
  w.Key("metadata");
  w.StartObject();
  EventField(w, "name", e.name);
  EventField(w, "namespace", e.ns);
  w.EndObject();
  EventField(w, "eventTime", MicroTime(e.event_time_us));
  if (e.series_count >= 2) WriteSeries(w, e.series_count, e.series_last_observed_us);
  EventField(w, "reportingController", e.reporting_controller);
  EventField(w, "reportingInstance", e.reporting_instance);
  EventField(w, "action", e.action);
  EventField(w, "reason", e.reason);
  w.Key("regarding");
  w.StartObject();
  EventField(w, "kind", "Pod");
  EventField(w, "namespace", e.ns);
  EventField(w, "name", e.pod_name);
  EventField(w, "uid", e.pod_uid);
  EventField(w, "apiVersion", "v1");
  w.EndObject();
  EventField(w, "note", e.note);
  EventField(w, "type", e.type);
  w.EndObject();
  return std::string(body.GetString(), body.GetSize());
}

EventWriteResult ApiEventSink::Create(const EventObject& event) {
  return EventResultOf(client_->Post(EventsPath(event.ns), CreateBody(event)));
}

EventWriteResult ApiEventSink::PatchSeries(const std::string& ns, const std::string& name,
                                           int32_t count, int64_t last_observed_us) {
  rapidjson::StringBuffer body;
  JsonWriter w(body);
  w.StartObject();
  WriteSeries(w, count, last_observed_us);
  w.EndObject();
  return EventResultOf(client_->Patch(EventsPath(ns) + "/" + EscapeUrlComponent(name),
                                      std::string(body.GetString(), body.GetSize()),
                                      "application/strategic-merge-patch+json"));
}

}  // namespace capext::kube
