// The admission queue of gate mode (docs/workloads.md#3-gate-mode-the-admission-queue): which gated
// pods may have their gate lifted now, which wait and why, and which starting groups have timed
// out. One round plans over the whole state:
//   - units: a single gated pod; a starting group's `need` oldest gated members together (all or
//     nothing); one gated member of a group with need = 0 (a surplus unit, as a single pod);
//   - in order: priority (a group's is its highest member's), then creation (a group's: its
//     earliest member's), then the unit's first pod key;
//   - best-effort FIFO: a unit that cannot go is skipped and the next considered;
//   - a unit goes when its quota admits its summed request
//   (docs/capacity-semantics.md#3-admission-may-this-pod-run-in-its-quota, every level
//     of the tree, with holds and nominations) and, for a group unit, core's placement finds a
//     node for each member together on the current nodes (each placed member takes its room
//     before the next);
//   - each unit that goes is applied to a what-if copy (as holds) before the next is
//     considered, so a round never overshoots a quota;
//   - with fair sharing on (docs/fair-sharing.md#5-admission-order-gate-mode): units within their
//     leaf's min first, in that order; then the borrowing ones by their quota's share after
//     admission (core/fair_admission_order.h); the first borrowing unit blocked by the sum of
//     all mins is the barrier, and every borrowing unit after it waits for fair share. The units a
//     round tried that the sum of all mins blocked are marked (AdmissionWait::shared_capacity).
// Pure: the caller (the live admission loop, the simulator) lifts the gates, makes the holds and
// evicts; time is passed in.
// Thread-safety: a pure function over a ClusterState the caller keeps still.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/cluster_state.h"
#include "core/pod_group.h"
#include "core/status.h"

namespace capext {

struct AdmissionOptions {
  // The timeout of a group whose PodGroup sets none (config gangScheduleTimeout).
  int64_t default_group_timeout_ms = 120'000;
  // Require core's placement for group units (docs/workloads.md); off only in tests of the
  // quota rule alone.
  bool require_placement = true;
  // Fair sharing by weight (config fairSharing.enabled, docs/fair-sharing.md).
  bool fair_sharing = false;
};

enum class AdmissionUnitKind { kSingle, kGroup, kSurplus };

struct AdmissionUnit {
  AdmissionUnitKind kind = AdmissionUnitKind::kSingle;
  GroupKey group;                 // empty for a single pod
  std::vector<std::string> pods;  // store keys, oldest first
  // For a group unit: the node placement found for each pod (same order); empty otherwise.
  std::vector<std::string> nodes;
  int32_t priority = 0;
  int64_t creation_ms = 0;
};

enum class AdmissionWaitReason {
  kQuotaExceeded,   // the quota does not admit the unit now (QuotaExceeded)
  kQuotaNever,      // the unit's request alone exceeds a max: it can never be admitted
  kGangIncomplete,  // fewer gated members exist than the group needs (GangWaiting)
  kNoPlacement,     // the quota admits the group, but its members do not fit the nodes together
  kOtherGates,      // other scheduling gates are still on: ours is lifted after them
  kFairShare,       // behind the fairness barrier: a quota with a lower share waits for room
};

struct AdmissionWait {
  AdmissionWaitReason reason = AdmissionWaitReason::kQuotaExceeded;
  // /filter's words with the numbers, prefixed by the unit, e.g. "gang eq1/train-a: 4 pods need
  // cpu 16: ElasticQuota eq1/eq1 would exceed max: cpu used 0 + request 16 > max 10".
  std::string message;
  // Tried this round and blocked by the shared capacity (the sum of all mins, resolvable), not by
  // a max: with fair sharing, the units the admission loop plans reclaim for
  // (docs/fair-sharing.md#gate-mode-the-admission-loop-reclaims-for-the-barrier): the round's
  // barrier and the units within min the sum of all mins blocks. Units behind the barrier are not
  // tried (kFairShare) and never carry it.
  bool shared_capacity = false;
};

struct GroupTimeout {
  GroupKey group;
  int64_t admitted_ms = 0;  // the group's first admission
  int64_t timeout_ms = 0;   // the timeout that applied; 0: the gang lost its core (at once)
  // Members to evict: admitted (held) or on a node, with a controller.
  std::vector<std::string> evict;
  // Admitted or bound members without a controller: reported, left alone.
  std::vector<std::string> reported;
  // A gang that lost its core (timeout_ms 0): its members admitted through the gate without a
  // controller, whose admission the caller revokes (ClusterState::RevokeAdmission, then the
  // admitted-at annotation removed: docs/workloads.md#2-holds-quota-without-a-node).
  std::vector<std::string> revoke;
  // For `revoke`: the gang's active members and minMember when it was planned (the Event's
  // numbers).
  int32_t active = 0;
  int32_t min_member = 0;
  // Admitted members whose holds end (the caller releases them, evicted or not).
  std::vector<std::string> release_holds;
};

struct AdmissionRound {
  std::vector<AdmissionUnit> admit;              // in the order they were admitted
  std::map<std::string, AdmissionWait> waiting;  // by pod store key
  std::vector<GroupTimeout> timed_out;           // by group key
};

AdmissionRound PlanAdmissions(const ClusterState& state, const AdmissionOptions& options,
                              int64_t now_ms);

}  // namespace capext
