// ApiEventSink: the EventRecorder's sink in live mode. Writes events.k8s.io/v1 Events about pods
// through RestClient, as kube-scheduler's event broadcaster does:
//   create:  POST  /apis/events.k8s.io/v1/namespaces/{ns}/events
//   refresh: PATCH /apis/events.k8s.io/v1/namespaces/{ns}/events/{name}
//            (application/strategic-merge-patch+json, {"series":{"count":N,"lastObservedTime":T}})
// 404 on a patch (the Event expired) is reported as kNotFound so the recorder re-creates it.
// Needs RBAC: events.k8s.io events create, patch.
// Thread-safety: calls may come from any one thread at a time (RestClient is thread-safe).
#pragma once

#include <cstdint>
#include <string>

#include "extender/kube/rest_client.h"
#include "extender/reclaim/event_sink.h"

namespace capext::kube {

class ApiEventSink final : public EventSink {
 public:
  explicit ApiEventSink(RestClient* client) : client_(client) {}
  EventWriteResult Create(const EventObject& event) override;
  EventWriteResult PatchSeries(const std::string& ns, const std::string& name, int32_t count,
                               int64_t last_observed_us) override;

  // The Event as the POST body (JSON).
  static std::string CreateBody(const EventObject& event);
  // metav1.MicroTime: RFC 3339 in UTC with six fractional digits, "2026-01-01T00:00:00.000000Z".
  static std::string MicroTime(int64_t unix_us);

 private:
  RestClient* client_;
};

}  // namespace capext::kube
