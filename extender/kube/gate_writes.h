// The API calls of gate mode (docs/workloads-live.md): lifting our scheduling gate from an
// admitted pod, and the start-up probe of whether the API server keeps spec.schedulingGates.
// Blocking calls on the caller's thread (the admission loop's), each bounded by RestClient's
// request timeout.
// Thread-safety: every method may be called concurrently (RestClient is thread-safe).
#pragma once

#include <chrono>
#include <string>

#include "core/pod.h"
#include "extender/kube/api_writes.h"
#include "extender/kube/rest_client.h"

namespace capext::kube {

// The gate and the annotation: capext::kQuotaGate, capext::kAdmittedAtAnnotation (core/pod.h).

// Lifts the quota gate of an admitted pod: GET the pod (the gate's index in
// spec.schedulingGates, whether it has annotations, its uid), then one JSON patch
// (application/json-patch+json): `test` the uid and the gate's name at its index, `remove` that
// gate, `add` the admitted-at annotation (RFC 3339 UTC with milliseconds). The `test`s make a
// patch against a replaced pod or a changed gate list fail (422) instead of removing another
// gate. A pod without our gate is a failure with reason "NotGated".
class GateLifter {
 public:
  explicit GateLifter(RestClient* client) : client_(client) {}
  // `timeout` > 0 bounds each of the two requests (the tenure left); else the client's own.
  ApiWriteResult Lift(const std::string& namespace_name, const std::string& pod_name,
                      const std::string& pod_uid, std::chrono::system_clock::time_point admitted,
                      std::chrono::milliseconds timeout = {});

 private:
  RestClient* client_;
};

// Whether the API server keeps spec.schedulingGates: a server-side dry run (?dryRun=All,
// nothing is stored) creating a pod with our gate in `namespace_name`. kept = the answer still
// has the gate (1.26 with PodSchedulingReadiness=true, 1.27+); known = false when the dry run
// itself failed (detail says why).
struct GateSupport {
  bool known = false;
  bool kept = false;
  std::string detail;
};
GateSupport ProbeSchedulingGates(RestClient* client, const std::string& namespace_name);

}  // namespace capext::kube
