// The pod-gating mutating webhook's decision (POST /mutate,
// docs/workloads-live.md#mutate-the-gate-admissionmode-gate), pure: AdmissionReview request bytes
// (admission.k8s.io/v1) and a question about the namespace in, AdmissionReview response bytes out.
// The HTTP wiring is the caller's.
//
// A Pod CREATE is answered allowed, with a JSONPatch adding the scheduling gate
// scheduling.capacity-extender.io/quota when: gate mode is in force, its namespace is governed by
// an ElasticQuota, its spec.nodeName is empty, its spec.schedulerName is one of the configured
// names ("" counts as default-scheduler), and it does not carry the gate already. Anything else
// that is a well-formed review (another kind, operation or subresource) is allowed untouched: the
// webhook never blocks what it does not gate. A malformed review is an error Status (HTTP 400 with
// the reason), never a crash. Thread-safety: stateless; `governed` is called once, from the
// caller's thread.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "core/pod.h"
#include "core/status.h"

namespace capext {

struct PodMutationOptions {
  // False when the admission mode in force is filter: nothing is gated (why_not says so).
  bool gating = true;
  // spec.schedulerName values whose pods are gated; "" in a pod means "default-scheduler".
  std::vector<std::string> scheduler_names{"default-scheduler"};
  // Whether a namespace is governed by an ElasticQuota (has a leaf in the quota tree).
  std::function<bool(std::string_view ns)> governed;
};

struct PodMutationDecision {
  std::string uid;
  bool gated = false;   // the patch adds our gate
  std::string pod;      // "namespace/name" (generateName + "*" before the name exists)
  std::string why_not;  // when not gated: why ("namespace has no ElasticQuota", ...)
  std::string patch;    // the JSONPatch text ("" when not gated)
};

// Splits "a, b,c" into names (empty entries dropped): the gateSchedulerNames setting.
std::vector<std::string> SplitSchedulerNames(std::string_view text);

// The whole webhook: OK with *response_json set (and *decision, when not null, for logs and
// metrics), or an error Status saying what is malformed (answer HTTP 400 with its message).
Status ReviewPodMutation(std::string_view body, const PodMutationOptions& options,
                         std::string* response_json, PodMutationDecision* decision = nullptr);

}  // namespace capext
