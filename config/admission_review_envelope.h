// The AdmissionReview (admission.k8s.io/v1) response envelope, shared by both webhooks: /admit
// (ElasticQuota validation, admission_review.h) and /mutate (the scheduling gate,
// pod_mutation.h). Each writes only what its answer adds inside `response`.
#pragma once

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <functional>
#include <string>
#include <string_view>

namespace capext {

inline constexpr std::string_view kAdmissionApiVersion = "admission.k8s.io/v1";

using AdmissionResponseWriter = rapidjson::Writer<rapidjson::StringBuffer>;

// {"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","response":{"uid":..,
// "allowed":.., <what `more` writes>}}. `more` writes keys and values of `response` only.
std::string WriteAdmissionReviewResponse(std::string_view uid, bool allowed,
                                         const std::function<void(AdmissionResponseWriter&)>& more);

}  // namespace capext
