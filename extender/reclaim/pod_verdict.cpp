#include "extender/reclaim/pod_verdict.h"

#include <fmt/format.h>

namespace capext {
namespace {

std::string Join(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& item : items)
    out += (out.empty() ? "" : ", ") + item;
  return out;
}

std::string DescribeRefusals(const std::vector<RefusedEviction>& refusals) {
  std::string out;
  for (const auto& r : refusals) {
    if (!out.empty()) out += "; ";
    out += fmt::format("{} on node {}: {}", r.victim, r.node, r.error);
  }
  return out;
}

}  // namespace

const char* VerdictName(VerdictCode code) {
  switch (code) {
    case VerdictCode::kFits:
      return "Fits";
    case VerdictCode::kAwaitingScheduler:
      return "AwaitingScheduler";
    case VerdictCode::kUnschedulable:
      return "Unschedulable";
    case VerdictCode::kQuotaExceeded:
      return "QuotaExceeded";
    case VerdictCode::kWaitingForReclaim:
      return "WaitingForReclaim";
    case VerdictCode::kReclaimRefused:
      return "ReclaimRefused";
    case VerdictCode::kReclaimBackoff:
      return "ReclaimBackoff";
    case VerdictCode::kGated:
      return "Gated";
  }
  return "Unknown";
}

bool WritesEvent(VerdictCode code) {
  return code == VerdictCode::kQuotaExceeded || code == VerdictCode::kWaitingForReclaim ||
         code == VerdictCode::kReclaimRefused || code == VerdictCode::kReclaimBackoff;
}

const char* VerdictAction(VerdictCode code) {
  if (code == VerdictCode::kGated) return "Admission";
  return code == VerdictCode::kQuotaExceeded ? "QuotaCheck" : "Reclaim";
}

const char* ReclaimStateName(ReclaimState state) {
  switch (state) {
    case ReclaimState::kNone:
      return "none";
    case ReclaimState::kInFlight:
      return "in-flight";
    case ReclaimState::kRefused:
      return "refused";
    case ReclaimState::kBackoff:
      return "backoff";
  }
  return "none";
}

namespace verdicts {

std::string WaitingForReclaim(std::string_view pod_key, const std::vector<std::string>& victims,
                              std::string_view node) {
  return fmt::format(
      "reclaim for pod {} in progress: evicted {} on node {}; the room there is held for this "
      "pod until it binds",
      pod_key, victims.empty() ? "nothing" : Join(victims), node);
}

std::string RefusedByDisruptionBudget(std::string_view pod_key,
                                      const std::vector<RefusedEviction>& refusals) {
  return fmt::format(
      "reclaim for pod {} refused: every candidate's eviction was refused by a "
      "PodDisruptionBudget ({}); retrying with backoff",
      pod_key, DescribeRefusals(refusals));
}

std::string EvictionsFailed(std::string_view pod_key,
                            const std::vector<RefusedEviction>& failures) {
  return fmt::format(
      "reclaim for pod {} waits: every candidate's eviction failed ({}); retrying with backoff",
      pod_key, DescribeRefusals(failures));
}

std::string RateLimited(std::string_view pod_key, const std::vector<std::string>& victims,
                        std::string_view node, double per_second, int per_namespace_per_minute) {
  return fmt::format(
      "reclaim for pod {} postponed by the eviction rate limit ({} per second cluster-wide, {} "
      "per minute per namespace): it would evict {} on node {}",
      pod_key, per_second, per_namespace_per_minute, Join(victims), node);
}

std::string WaitingForRecordedReclaim(std::string_view pod_key, std::string_view node) {
  return fmt::format(
      "reclaim for pod {} in progress on node {} (recorded on the pod by the replica that "
      "started it); the room there is held for this pod until it binds",
      pod_key, node);
}

std::string NotActing(std::string_view plan_reason) {
  return fmt::format(
      "this replica does not act (the replica whose kube-scheduler holds the leader lease does); "
      "that one would do this: {}",
      plan_reason);
}

std::string NoReclaimPossible(std::string_view plan_reason) {
  return fmt::format("no node fits and reclaim cannot make room: {}", plan_reason);
}

std::string DryRun(std::string_view plan_reason) {
  return fmt::format("reclaim is in dry-run mode; it would do this: {}", plan_reason);
}

}  // namespace verdicts
}  // namespace capext
