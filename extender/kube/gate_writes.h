// The API calls of gate mode (docs/workloads-live.md): lifting our scheduling gate from an
// admitted pod, revoking the admission of a pod whose gang lost its core, and the start-up probe of
// whether the API server keeps spec.schedulingGates. Blocking calls on the caller's thread (the
// admission loop's), each bounded by RestClient's request timeout. Thread-safety: every method may
// be called concurrently (RestClient is thread-safe).
#pragma once

#include <chrono>
#include <string>

#include "core/pod.h"
#include "extender/kube/api_writes.h"
#include "extender/kube/rest_client.h"

namespace capext::kube {

// The gate and the annotation: capext::kQuotaGate, capext::kAdmittedAtAnnotation (core/pod.h).

// What one gate removal did: the answer to its last request, and whether the pod was read.
struct GateLift {
  ApiWriteResult write;
  bool read = false;  // the cached basis was stale or unknown: one GET, then a second patch
};

// Lifts the quota gate of an admitted pod (docs/workloads-live.md#the-gate-removal): one JSON
// patch (application/json-patch+json) built from `cached`, the pod as the cache last saw it:
// `test` metadata.resourceVersion and the gate's name at its index, `remove` that gate, `add` the
// admitted-at annotation (RFC 3339 UTC with milliseconds; into the map, or the map itself when
// the pod had none). The `test`s make a patch against any other version of the pod fail (422, or
// 409) and change nothing; then the pod is read once (GET: another uid than `pod_uid` is a
// failure with reason "Conflict", a pod without our gate one with "NotGated") and the patch built
// from that read is sent once. A 404 or any other failure of the first patch is returned as is.
// A basis without resourceVersion or gate index starts with the read.
class GateLifter {
 public:
  explicit GateLifter(RestClient* client) : client_(client) {}
  // `timeout` > 0 bounds each request (the tenure left); else the client's own.
  GateLift Lift(const std::string& namespace_name, const std::string& pod_name,
                const std::string& pod_uid, const PodPatchBasis& cached,
                std::chrono::system_clock::time_point admitted,
                std::chrono::milliseconds timeout = {});

 private:
  RestClient* client_;
};

// What one revocation of an admission did (docs/workloads-live.md#revoking-an-admission).
enum class RevokeOutcome {
  kRevoked,          // the admitted-at annotation was removed
  kNothingToRevoke,  // the pod is gone, or carries no admitted-at any more
  kChanged,          // the pod carries another admitted-at (a later admission): left as it is
  kFailed,           // not written (write.* says why): to be retried
};
struct AdmissionRevocationWrite {
  RevokeOutcome outcome = RevokeOutcome::kFailed;
  ApiWriteResult write;
  bool read = false;  // the cached basis was stale: one GET, then a second patch
};

// Revokes the admission of a pod whose gang lost its core
// (docs/workloads-live.md#revoking-an-admission): one JSON patch built from `cached` that
// `test`s metadata.resourceVersion and `remove`s the admitted-at annotation. A refusal (422, 409)
// reads the pod once: another uid than `pod_uid` is a failure with reason "Conflict"; no
// admitted-at is kNothingToRevoke; another admitted-at than `admitted_ms` is kChanged; otherwise
// the patch built from the read is sent once. A 404 is kNothingToRevoke.
class AdmissionRevoker {
 public:
  explicit AdmissionRevoker(RestClient* client) : client_(client) {}
  // `timeout` > 0 bounds each request (the tenure left); else the client's own.
  AdmissionRevocationWrite Revoke(const std::string& namespace_name, const std::string& pod_name,
                                  const std::string& pod_uid, const PodPatchBasis& cached,
                                  int64_t admitted_ms, std::chrono::milliseconds timeout = {});

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
