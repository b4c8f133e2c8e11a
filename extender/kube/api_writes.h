// The writes live mode makes to the API server, one thin class each: bind a pod, evict a pod,
// patch an ElasticQuota's status.used, annotate a pod to nudge kube-scheduler into a retry.
// The blocking calls wait on one request (RestClient's timeout) from the caller's thread and return
// an ApiWriteResult; BindAsync completes on the client thread instead (the /bind hot path).
//
// Thread-safety: every method may be called concurrently (RestClient is thread-safe).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>

#include "extender/kube/api_discovery.h"
#include "extender/kube/rest_client.h"

namespace capext::kube {

struct ApiWriteResult {
  bool ok = false;      // 2xx
  int http_status = 0;  // 0 when no response arrived
  std::string reason;   // Status.reason ("Conflict", "NotFound", "TooManyRequests", ...)
  std::string message;  // Status.message, or the transport error, or the start of the body
  // Eviction only: 429 whose causes include "DisruptionBudget" (a PDB forbids it right now).
  bool refused_by_disruption_budget = false;
  int retry_after_seconds = 0;  // details.retryAfterSeconds when the server gave one
  // The request reached a connection (RestResponse::sent): with http_status 0 the write may or
  // may not have happened; without it, it did not.
  bool sent = false;
  bool send_deadline_passed = false;    // never sent: its send_by passed first
  std::chrono::microseconds queued{0};  // waited this long for a connection
};

// POST /api/v1/namespaces/{ns}/pods/{name}/binding with the v1 Binding of
// extender-protocol.md. 201 = bound; 409 = already bound (or stale precondition); 404 = no pod.
class Binder {
 public:
  explicit Binder(RestClient* client) : client_(client) {}
  ApiWriteResult Bind(const std::string& namespace_name, const std::string& pod_name,
                      const std::string& pod_uid, const std::string& node_name);
  // `done` runs once on the client thread. `options` as RestClient::SendAsync's: a timeout for
  // this request, and the instant after which it is never sent.
  void BindAsync(const std::string& namespace_name, const std::string& pod_name,
                 const std::string& pod_uid, const std::string& node_name,
                 std::function<void(ApiWriteResult)> done, CallOptions options = {});

 private:
  RestClient* client_;
};

// POST /api/v1/namespaces/{ns}/pods/{name}/eviction with a policy/v1 Eviction. 201 = evicted;
// 429 with refused_by_disruption_budget = a PodDisruptionBudget refused; 404 = no pod.
class Evictor {
 public:
  explicit Evictor(RestClient* client) : client_(client) {}
  // A non-empty `pod_uid` becomes a deleteOptions UID precondition (only that incarnation of the
  // pod is evicted); `grace_period_seconds` overrides the pod's own grace period.
  // `timeout` > 0 bounds the request (else the client's request timeout).
  ApiWriteResult Evict(const std::string& namespace_name, const std::string& pod_name,
                       const std::string& pod_uid = "",
                       std::optional<int64_t> grace_period_seconds = std::nullopt,
                       std::chrono::milliseconds timeout = {});

 private:
  RestClient* client_;
};

// PATCH {elasticquotas}/{name}/status, application/merge-patch+json {"status":{"used":{...}}}.
// A merge patch keeps resources absent from `used`: send "0" for a resource no longer used.
class StatusPatcher {
 public:
  StatusPatcher(RestClient* client, GroupVersion elastic_quota)
      : client_(client), elastic_quota_(std::move(elastic_quota)) {}
  ApiWriteResult PatchUsed(const std::string& namespace_name, const std::string& quota_name,
                           const std::map<std::string, std::string>& used,
                           std::chrono::milliseconds timeout = {});

 private:
  RestClient* client_;
  GroupVersion elastic_quota_;
};

// PATCH pod, application/strategic-merge-patch+json, on metadata.annotations:
//   - MarkForRetry sets scheduling.capacity-extender.io/retry to an RFC 3339 UTC time: an update
//     event that makes kube-scheduler retry an unschedulable pod now rather than after its backoff;
//   - SetReclaimRecord sets scheduling.capacity-extender.io/reclaim (kReclaimRecordAnnotation) to
//     the record of an in-flight reclaim, or removes it (nullopt).
// `timeout` > 0 bounds the request (else the client's request timeout).
class PodAnnotator {
 public:
  static constexpr char kRetryAnnotation[] = "scheduling.capacity-extender.io/retry";
  explicit PodAnnotator(RestClient* client) : client_(client) {}
  ApiWriteResult MarkForRetry(const std::string& namespace_name, const std::string& pod_name,
                              std::chrono::system_clock::time_point when,
                              std::chrono::milliseconds timeout = {});
  ApiWriteResult SetReclaimRecord(const std::string& namespace_name, const std::string& pod_name,
                                  const std::optional<std::string>& record,
                                  std::chrono::milliseconds timeout = {});

 private:
  ApiWriteResult Annotate(const std::string& namespace_name, const std::string& pod_name,
                          const char* key, const std::optional<std::string>& value,
                          std::chrono::milliseconds timeout);
  RestClient* client_;
};

// An RFC 3339 UTC time with milliseconds, "2026-01-01T00:00:00.000Z".
std::string Rfc3339Millis(std::chrono::system_clock::time_point when);

}  // namespace capext::kube
