#include "core/reasons.h"

#include <fmt/format.h>

namespace capext::reasons {

std::string InsufficientResource(std::string_view resource) {
  return fmt::format("Insufficient {}", resource);
}

std::string UntoleratedTaint(std::string_view key, std::string_view value) {
  return fmt::format("node(s) had untolerated taint {{{}: {}}}", key, value);
}

std::string QuotaMaxExceeded(std::string_view pod_key, std::string_view quota_key,
                             std::string_view details) {
  return fmt::format("pod {} rejected: ElasticQuota {} would exceed max: {}", pod_key, quota_key,
                     details);
}

std::string QuotaRequestAboveMax(std::string_view pod_key, std::string_view quota_key,
                                 std::string_view details) {
  return fmt::format("pod {} rejected: its request alone exceeds the max of ElasticQuota {}: {}",
                     pod_key, quota_key, details);
}

std::string AggregateMinExceeded(std::string_view pod_key, std::string_view details) {
  return fmt::format(
      "pod {} rejected: total ElasticQuota usage would exceed the sum of all mins: {}", pod_key,
      details);
}

std::string DevicesNotCountable(std::string_view pod_key, std::string_view details) {
  return fmt::format("pod {} waits for its devices: {}", pod_key, details);
}

}  // namespace capext::reasons
