// The pod-gating mutating webhook's decision (POST /mutate,
// docs/workloads-live.md#mutate-the-gate-admissionmode-gate), pure: AdmissionReview request bytes
// (admission.k8s.io/v1) and a question about the namespace in, AdmissionReview response bytes out.
// The HTTP wiring is the caller's.
//
// A Pod CREATE is answered allowed, with a JSONPatch adding the scheduling gate
// scheduling.capacity-extender.io/quota when: gate mode is in force, its namespace is governed by
// an ElasticQuota, its spec.nodeName is empty, its spec.schedulerName is one of the configured
// names ("" counts as default-scheduler), and it does not carry the gate already. Such a pod may
// instead be admitted at its creation (docs/workloads-live.md#admission-at-creation): when it is
// a single pod (no group label, workloadRef or min-member annotation), has no other gates and no
// resource claims, the request is not a dry run, and `admit_at_creation` admits it, the patch
// adds the admitted-at annotation and no gate. Anything else
// that is a well-formed review (another kind, operation or subresource) is allowed untouched: the
// webhook never blocks what it does not gate. A malformed review is an error Status (HTTP 400 with
// the reason), never a crash. Thread-safety: stateless; `governed` is called once, from the
// caller's thread.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "config/object_codec.h"
#include "core/pod.h"
#include "core/status.h"

namespace capext {

// What gate mode's admission at creation says of a pod /mutate would gate.
struct CreationAdmission {
  enum class Verdict {
    kGate,             // not now: the pod gets the gate (why_not says why)
    kAdmit,            // admitted at admitted_ms, its quota held: the patch adds admitted-at
    kAlreadyAdmitted,  // a re-invoked webhook: admitted-at is ours already; no patch
  };
  Verdict verdict = Verdict::kGate;
  int64_t admitted_ms = 0;
  std::string admitted_at;  // kAdmit: admitted_ms as the annotation's value (RFC 3339, ms)
  std::string why_not;
};

struct PodMutationOptions {
  // False when the admission mode in force is filter: nothing is gated (why_not says so).
  bool gating = true;
  // spec.schedulerName values whose pods are gated; "" in a pod means "default-scheduler".
  std::vector<std::string> scheduler_names{"default-scheduler"};
  // Whether a namespace is governed by an ElasticQuota (has a leaf in the quota tree).
  std::function<bool(std::string_view ns)> governed;
  // Admission at creation, asked for a pod the rules above gate when it is a single pod without
  // other gates or resource claims, outside a dry run: the pod as decoded with `decode`, its
  // namespace set. Null: every such pod is gated.
  std::function<CreationAdmission(Pod pod)> admit_at_creation;
  DecodeOptions decode;
};

struct PodMutationDecision {
  std::string uid;
  bool gated = false;  // the patch adds our gate
  bool admitted =
      false;        // admitted at creation: the patch adds admitted-at (or, re-invoked, nothing)
  std::string pod;  // "namespace/name" (generateName + "*" before the name exists)
  std::string why_not;  // when not gated: why ("namespace has no ElasticQuota", ...); when
                        // gated: why not admitted at creation, if it was asked
  std::string patch;    // the JSONPatch text ("" when not gated)
};

// Splits "a, b,c" into names (empty entries dropped): the gateSchedulerNames setting.
std::vector<std::string> SplitSchedulerNames(std::string_view text);

// The whole webhook: OK with *response_json set (and *decision, when not null, for logs and
// metrics), or an error Status saying what is malformed (answer HTTP 400 with its message).
Status ReviewPodMutation(std::string_view body, const PodMutationOptions& options,
                         std::string* response_json, PodMutationDecision* decision = nullptr);

}  // namespace capext
