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

std::string GangNoPlacement(std::string_view group, int pods, int placed) {
  return fmt::format("{}: {} pods fit the quota but not the nodes together: {} of {} placed", group,
                     pods, placed, pods);
}

std::string PlanNoPlacement(int pods, int placed) {
  return fmt::format("no plan: {} of {} pod{} placed after removing every eligible unit", placed,
                     pods, pods == 1 ? "" : "s");
}

std::string PlanBudgetExhausted(int64_t steps) {
  return fmt::format("no plan (search budget exhausted: approximate): {} steps", steps);
}

std::string GangLostCore(std::string_view group, int orphaned) {
  return fmt::format("{}: lost its core: {} admitted member{} released first", group, orphaned,
                     orphaned == 1 ? " is" : "s are");
}

std::string AdmissionRevoked(std::string_view group, int active, int min_member) {
  return fmt::format(
      "{} lost its core ({} of minMember {} active): admission revoked; the pod runs only with "
      "its gang, when the quota and the nodes admit the gang's need together",
      group, active, min_member);
}

std::string FairShareWaiting(std::string_view quota, std::string_view share,
                             std::string_view barrier_quota, std::string_view barrier_share,
                             bool tie) {
  return fmt::format("waiting for fair share: {}'s share {} {} {}'s {}", quota, share,
                     tie ? ">=" : ">", barrier_quota, barrier_share);
}

std::string DevicesNotCountable(std::string_view pod_key, std::string_view details) {
  return fmt::format("pod {} waits for its devices: {}", pod_key, details);
}

}  // namespace capext::reasons
