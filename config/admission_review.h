// The ElasticQuota validating admission webhook's decision (POST /admit), pure: AdmissionReview
// request bytes (admission.k8s.io/v1) and a read-only view of the cluster in, AdmissionReview
// response bytes out. The HTTP wiring is the caller's.
//
// The object gets the same checks as `capacity-extender validate` (quota_object_check.h,
// written once), plus the cluster's:
//  - deny (403) when the namespace already has an ElasticQuota of another name;
//  - deny (403) when the hierarchy gets an error it did not have before: the parent is missing
//    or in the other API group, a cycle, children's min above the parent's min (existing
//    problems unrelated to this object are not blamed on it); warn when a child's max comes to
//    exceed its parent's max (the parent caps it anyway);
//  - warn when the sum of mins (existing quotas, this one replacing its old version) exceeds
//    the cluster's allocatable in a resource this quota's min names.
// An invalid object (bad quantity, unknown field, min > max...) is denied with 400. Every
// reason is joined into status.message; warnings go to response.warnings (kubectl prints them).
// DELETE and CONNECT are allowed unchecked.
// Thread-safety: stateless; the view is only read.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/elastic_quota.h"
#include "core/resource_list.h"
#include "core/status.h"

namespace capext {

struct AdmissionClusterView {
  std::vector<ElasticQuota> existing_quotas;
  // Sum of every node's allocatable. Empty = unknown (e.g. not synced): no capacity warning.
  ResourceList total_allocatable;
};

struct AdmissionDecision {
  std::string uid;  // request.uid, echoed ("" when the review did not carry one)
  bool allowed = false;
  int code = 0;         // when denied: 400 malformed review or object, 403 cluster rule
  std::string message;  // when denied: every reason, joined with "; "
  std::vector<std::string> warnings;
};

// Decides a review that is already known to be JSON. Never fails: a malformed review is a
// denial with code 400 and a message saying what is wrong.
AdmissionDecision DecideElasticQuotaAdmission(std::string_view body,
                                              const AdmissionClusterView& cluster);

// The AdmissionReview response for `decision`: apiVersion admission.k8s.io/v1, kind
// AdmissionReview, response {uid, allowed, status {code, reason, message} when denied,
// warnings when any}.
std::string WriteAdmissionResponse(const AdmissionDecision& decision);

// The whole webhook: when `body` is not JSON at all, returns an error Status (answer HTTP 400
// with its message) and leaves the outputs alone; otherwise OK with *response_json set (and
// *decision, when not null, for logs and metrics).
Status ReviewElasticQuotaAdmission(std::string_view body, const AdmissionClusterView& cluster,
                                   std::string* response_json,
                                   AdmissionDecision* decision = nullptr);

}  // namespace capext
