// Every rejection reason, defined once. kube-scheduler folds identical FailedNodes messages into
// one "0/N nodes are available: 3 <reason>, ..." line, so reasons are worded to read the same on
// every node and carry the numbers a user needs.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace capext::reasons {

// Node fit (worded as kube-scheduler's own plugins word them).
inline constexpr std::string_view kNodeUnschedulable = "node(s) were unschedulable";
inline constexpr std::string_view kNodeAffinityMismatch =
    "node(s) didn't match Pod's node affinity/selector";
inline constexpr std::string_view kTooManyPods = "Too many pods";
std::string InsufficientResource(std::string_view resource);  // "Insufficient cpu"
std::string UntoleratedTaint(std::string_view key, std::string_view value);

// Quota (docs/capacity-semantics.md#3-admission-may-this-pod-run-in-its-quota).
std::string QuotaMaxExceeded(std::string_view pod_key, std::string_view quota_key,
                             std::string_view details);
std::string QuotaRequestAboveMax(std::string_view pod_key, std::string_view quota_key,
                                 std::string_view details);
std::string AggregateMinExceeded(std::string_view pod_key, std::string_view details);
// The pod's ResourceClaims cannot be counted
// (docs/devices.md#7-bad-input-the-pod-waits-never-admitted-uncounted): "pod ns/p waits for its
// devices: ResourceClaim ns/c not found".
std::string DevicesNotCountable(std::string_view pod_key, std::string_view details);
// The same rules without the subject ("ElasticQuota q would exceed max: ..."), for a subject
// other than one pod: "gang eq1/train-a: 4 pods need cpu 16: <rule>" (docs/workloads.md).
std::string QuotaMaxRule(std::string_view quota_key, std::string_view details);
std::string QuotaRequestAboveMaxRule(std::string_view quota_key, std::string_view details);
std::string AggregateMinRule(std::string_view details);
// "gang eq1/train-a: 4 pods need cpu 16: " (the subject of a group's quota reason).
std::string GangNeeds(std::string_view group, int pods, std::string_view request);
// "gang eq1/train-a: 2 of 4 pods exist"
std::string GangIncomplete(std::string_view group, int exist, int min_member);
// "gang eq1/train-a: 4 pods fit the quota but not the nodes together: 3 of 4 placed"
std::string GangNoPlacement(std::string_view group, int pods, int placed);
// "gang eq1/train-a: lost its core: 2 admitted members are released first"
std::string GangLostCore(std::string_view group, int orphaned);
// docs/workloads.md#2-holds-quota-without-a-node, "A revoked admission": "gang eq1/w lost its
// core (1 of minMember 3 active): admission revoked; the pod runs only with its gang, when the
// quota and the nodes admit the gang's need together"
std::string AdmissionRevoked(std::string_view group, int active, int min_member);
// Behind the fairness barrier (docs/fair-sharing.md#5-admission-order-gate-mode):
// "waiting for fair share: team-b/team-b's share 0.420 > team-a/team-a's 0.100" (">=" on a tie
// the barrier won).
std::string FairShareWaiting(std::string_view quota, std::string_view share,
                             std::string_view barrier_quota, std::string_view barrier_share,
                             bool tie);

// Preemption and reclaim (docs/capacity-semantics.md#4-victims-on-one-node,
// docs/capacity-semantics.md#8-the-reclaim-controller).
inline constexpr std::string_view kPreemptionPolicyNever =
    "not eligible to preempt: preemptionPolicy is Never";
inline constexpr std::string_view kTerminatingVictimOnNominatedNode =
    "not eligible to preempt: a victim on its nominated node is still terminating";
inline constexpr std::string_view kNoVictimsOnNode = "no eligible victims on the node";
inline constexpr std::string_view kDoesNotFitAfterVictims =
    "does not fit the node even after removing every eligible victim";
inline constexpr std::string_view kQuotaFailsAfterVictims =
    "quota checks still fail after removing every eligible victim";
inline constexpr std::string_view kNoNodeHasVictims =
    "no node has victims whose removal lets the pod fit";
inline constexpr std::string_view kReclaimInFlight = "a reclaim for this pod is already in flight";
inline constexpr std::string_view kNamespaceWithoutQuota =
    "namespace has no ElasticQuota: kube-scheduler's own preemption serves it";
inline constexpr std::string_view kEveryCandidateExcluded = "every candidate node was excluded";

// A plan for a placement (docs/reclaim-plan.md#2-the-search).
inline constexpr std::string_view kPlanNoVictims = "no plan: no unit the rules let go";
// "no plan: 3 of 4 pods placed after removing every eligible unit"
std::string PlanNoPlacement(int pods, int placed);
// "no plan (search budget exhausted: approximate): 250000 steps"
std::string PlanBudgetExhausted(int64_t steps);

}  // namespace capext::reasons
