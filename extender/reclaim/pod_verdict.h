// PodVerdict: why a pending pod of a quota namespace waits, as the reclaim controller last
// judged it. The code's name is the reason of the Kubernetes Event written for it (when it is
// one kube-scheduler cannot show) and of GET /pending; the message carries the numbers.
// Every message is worded here, once, and stays the same while the situation does (an Event
// series is keyed by it): no countdowns, no times.
// Thread-safety: value types and pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace capext {

enum class VerdictCode {
  kFits,               // a node and the quota take it now: kube-scheduler will place it
  kAwaitingScheduler,  // live mode: kube-scheduler has not marked it unschedulable yet
  kUnschedulable,      // quota passes, no node fits, reclaim cannot help: kube-scheduler's
                       // own FailedScheduling event says why
  kQuotaExceeded,      // max or the sum of mins rejects it and reclaim cannot help
  kWaitingForReclaim,  // victims evicted for it, room held on a node until it binds
  kReclaimRefused,     // evictions refused by a PodDisruptionBudget, or postponed by the
                       // eviction rate limit
  kReclaimBackoff,     // waiting after evictions that failed for another reason
  kGated,              // gate mode: still carries our scheduling gate; the admission loop's
           // verdict (docs/workloads-live.md#the-admission-loop, why a pod waits); it writes its
           // own Events, so the reclaim controller never does
};

// "Fits", "AwaitingScheduler", "Unschedulable", "QuotaExceeded", "WaitingForReclaim",
// "ReclaimRefused", "ReclaimBackoff", "Gated".
const char* VerdictName(VerdictCode code);
// True for the codes written as Warning Events (kube-scheduler cannot show them).
bool WritesEvent(VerdictCode code);
// The Event's action: "QuotaCheck" or "Reclaim".
const char* VerdictAction(VerdictCode code);

enum class ReclaimState { kNone, kInFlight, kRefused, kBackoff };
const char* ReclaimStateName(ReclaimState state);  // none, in-flight, refused, backoff

// A reclaim plan across nodes as /pending and /ui show it
// (docs/reclaim-plan.md#5-where-a-user-sees-it).
struct PlanView {
  std::string outcome;    // found, no-victims, no-placement, budget-exhausted (approximate)
  std::string preemptor;  // "gang ns/group" or "pod ns/name": whom the room is for
  std::vector<std::pair<std::string, std::string>> members;  // "ns/name", planned node
  std::vector<std::string> units;  // victims per unit, eviction order: "single ns/b4", ...
  int64_t steps = 0;
  int64_t hold_expires_ms = 0;  // in flight: when the hold (nominationTTL) ends; 0 otherwise
};

struct PodVerdict {
  VerdictCode code = VerdictCode::kFits;
  std::string message;  // set for every code (Fits: verdicts::kFits)
  ReclaimState reclaim = ReclaimState::kNone;
  std::string node;                  // in-flight: where; refused: the last candidate tried
  std::vector<std::string> victims;  // "ns/name", most important first
  int64_t retry_at_ms = 0;           // backoff: when the next attempt may start
  int64_t reclaim_started_ms = 0;    // in-flight
  std::optional<PlanView> plan;      // a plan across nodes was asked for this pod
};

// One eviction the API server did not carry out.
struct RefusedEviction {
  std::string victim;  // "ns/name"
  std::string node;
  std::string error;
};

namespace verdicts {

std::string WaitingForReclaim(std::string_view pod_key, const std::vector<std::string>& victims,
                              std::string_view node);
std::string RefusedByDisruptionBudget(std::string_view pod_key,
                                      const std::vector<RefusedEviction>& refusals);
std::string EvictionsFailed(std::string_view pod_key, const std::vector<RefusedEviction>& failures);
std::string RateLimited(std::string_view pod_key, const std::vector<std::string>& victims,
                        std::string_view node, double per_second, int per_namespace_per_minute);
// A reclaim this replica follows from the record on the pod (another replica started it).
std::string WaitingForRecordedReclaim(std::string_view pod_key, std::string_view node);
std::string NoReclaimPossible(std::string_view plan_reason);
std::string DryRun(std::string_view plan_reason);
// A follower's verdict where the actor would evict (docs/architecture.md#two-replicas-one-actor).
std::string NotActing(std::string_view plan_reason);
inline constexpr std::string_view kFits =
    "a node and the quota take it now: kube-scheduler will place it";
inline constexpr std::string_view kAwaitingScheduler =
    "kube-scheduler has not tried the pod yet (no PodScheduled=False condition)";

}  // namespace verdicts
}  // namespace capext
