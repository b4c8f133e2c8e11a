#include "core/reasons.h"

#include <fmt/format.h>

namespace capext::reasons {

std::string InsufficientResource(std::string_view resource) {
  return fmt::format("Insufficient {}", resource);
}

std::string UntoleratedTaint(std::string_view key, std::string_view value) {
  return fmt::format("node(s) had untolerated taint {{{}: {}}}", key, value);
}

std::string QuotaMaxRule(std::string_view quota_key, std::string_view details) {
  return fmt::format("ElasticQuota {} would exceed max: {}", quota_key, details);
}

std::string QuotaRequestAboveMaxRule(std::string_view quota_key, std::string_view details) {
  return fmt::format("its request alone exceeds the max of ElasticQuota {}: {}", quota_key,
                     details);
}

std::string AggregateMinRule(std::string_view details) {
  return fmt::format("total ElasticQuota usage would exceed the sum of all mins: {}", details);
}

std::string QuotaMaxExceeded(std::string_view pod_key, std::string_view quota_key,
                             std::string_view details) {
  return fmt::format("pod {} rejected: {}", pod_key, QuotaMaxRule(quota_key, details));
}

std::string QuotaRequestAboveMax(std::string_view pod_key, std::string_view quota_key,
                                 std::string_view details) {
  return fmt::format("pod {} rejected: {}", pod_key, QuotaRequestAboveMaxRule(quota_key, details));
}

std::string AggregateMinExceeded(std::string_view pod_key, std::string_view details) {
  return fmt::format("pod {} rejected: {}", pod_key, AggregateMinRule(details));
}

std::string GangNeeds(std::string_view group, int pods, std::string_view request) {
  return fmt::format("{}: {} pod{} need {}: ", group, pods, pods == 1 ? "" : "s", request);
}

std::string GangIncomplete(std::string_view group, int exist, int min_member) {
  return fmt::format("{}: {} of {} pods exist", group, exist, min_member);
}

}  // namespace capext::reasons
