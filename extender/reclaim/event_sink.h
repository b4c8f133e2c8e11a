// EventSink: where the EventRecorder's Kubernetes Events go (events.k8s.io/v1). Live mode writes
// them to the API server (extender/kube/api_event_sink.h); tests record them. The recorder
// decides what to write and when; a sink only performs one write per call.
// Thread-safety: implementations must allow calls from one thread other than their creator's.
#pragma once

#include <cstdint>
#include <string>

namespace capext {

// One events.k8s.io/v1 Event about a pod, as created. Times are Unix microseconds
// (metav1.MicroTime).
struct EventObject {
  std::string ns;                 // metadata.namespace: the pod's namespace
  std::string name;               // metadata.name: "<pod>.<hex nanoseconds>", unique per series
  std::string pod_name, pod_uid;  // regarding: v1 Pod
  std::string type;               // "Warning"
  std::string reason;             // e.g. "QuotaExceeded" (at most 128 characters)
  std::string action;             // e.g. "Reclaim" (at most 128 characters)
  std::string note;               // the message (at most 1 KiB)
  std::string reporting_controller;
  std::string reporting_instance;
  int64_t event_time_us = 0;
  // A series re-created after its Event vanished (the API server's event TTL) carries it.
  int32_t series_count = 0;  // 0 = no series yet
  int64_t series_last_observed_us = 0;
};

enum class EventWriteCode {
  kOk,
  kNotFound,  // a patched Event no longer exists (expired): create it again
  kFailed,    // anything else: refused (4xx), or no answer (transport, 5xx, 429)
};

struct EventWriteResult {
  EventWriteCode code = EventWriteCode::kOk;
  std::string error;  // why, for the log, when not kOk
};

class EventSink {
 public:
  virtual ~EventSink() = default;
  // POST the Event.
  virtual EventWriteResult Create(const EventObject& event) = 0;
  // PATCH the Event's series: {"series": {"count": count, "lastObservedTime": ...}}.
  // REQUIRES: count >= 2 (the API server refuses smaller counts).
  virtual EventWriteResult PatchSeries(const std::string& ns, const std::string& name,
                                       int32_t count, int64_t last_observed_us) = 0;
};

}  // namespace capext
