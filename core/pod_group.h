// Pod groups (docs/workloads.md#1-groups): the key a group is known by, the PodGroup object's
// part that decisions read, and the view of a group that ClusterState keeps for decisions: its
// members, its effective minMember, and the member states that give active, need and complete.
// Thread-safety: value types.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/pod.h"

namespace capext {

// A group, by API group, namespace and name (coscheduling's kind and the Workload API's are both
// "PodGroup": the API group tells them apart). For the Workload API the name is
// "<workload>/<podGroup>[/<replicaKey>]" (docs/workloads.md#membership).
struct GroupKey {
  std::string api_group;
  std::string ns;
  std::string name;

  auto operator<=>(const GroupKey&) const = default;
  bool operator==(const GroupKey&) const = default;
  bool empty() const { return name.empty(); }
  // "gang ns/name", as users see it in reasons, Events and /pending.
  std::string Display() const { return "gang " + ns + "/" + name; }
};

struct GroupKeyHash {
  std::size_t operator()(const GroupKey& k) const {
    const std::hash<std::string> h;
    std::size_t seed = h(k.api_group);
    seed ^= h(k.ns) + 0x9e3779b97f4a7c15ULL + (seed << 6) + (seed >> 2);
    seed ^= h(k.name) + 0x9e3779b97f4a7c15ULL + (seed << 6) + (seed >> 2);
    return seed;
  }
};

// The group a pod belongs to (from Pod::group and its namespace); empty when none.
GroupKey GroupKeyOf(const Pod& pod);

// What a PodGroup object (coscheduling's scheduling.x-k8s.io/v1alpha1 spec.minMember and
// spec.scheduleTimeoutSeconds) or a Workload's pod group (gang.minCount; policy basic: 0) says.
struct PodGroupSpec {
  GroupKey key;
  int32_t min_member = 0;           // <= 1: the members are single pods
  int64_t schedule_timeout_ms = 0;  // 0 = unset (the configured gangScheduleTimeout applies)
  bool operator==(const PodGroupSpec&) const = default;
};

// Where a group's effective minMember came from (docs/workloads.md#minmember).
enum class MinMemberSource { kNone, kObject, kAnnotation };

// A member's state (docs/workloads.md#member-states). kPending: ungated and neither held nor
// on a node (a filter-mode member before its group's first pass, or a pod that slipped past the
// gate); it is not active.
enum class MemberState { kBound, kReserved, kAdmitted, kPending, kGated };

struct GroupMember {
  const NormalizedPod* pod = nullptr;
  MemberState state = MemberState::kPending;
  // When it started, by state: bound -> EffectiveStartMs; reserved -> the reservation time;
  // admitted -> the admission (hold) time; otherwise 0.
  int64_t started_ms = 0;
};

// A group as decisions see it. Rebuilt by ClusterState whenever a member, a hold, a reservation
// or the PodGroup changes.
struct GroupView {
  GroupKey key;
  // The effective minMember: the object's, else the oldest annotated member's annotation, else 0.
  int32_t min_member = 0;
  MinMemberSource source = MinMemberSource::kNone;
  // Members' annotations disagree (the oldest member's value is used; reported once).
  bool annotations_disagree = false;
  bool has_object = false;          // a PodGroupSpec is stored for the key
  int64_t schedule_timeout_ms = 0;  // the object's; 0 = unset
  // The non-terminal members, in start order: bound (earliest start first), reserved, admitted
  // (earliest admission first), then pending and gated by creation time; then name. The first
  // min_member active members are the core, the other active ones the surplus.
  std::vector<GroupMember> members;
  int32_t bound = 0, reserved = 0, admitted = 0, pending = 0, gated = 0;
  // Bound has reached min_member at least once (sticky until the group has no members).
  bool complete = false;
  // The earliest admission time among admitted members, 0 when none (the timeout's start).
  int64_t first_admitted_ms = 0;
  // The gang lost its core (docs/workloads.md#2-holds-quota-without-a-node): the members
  // that were admitted through the gate then, whose admission core revoked at once and whose
  // admitted-at annotation is still on them (ClusterState::FindRevocation), by store key. The
  // admission loop evicts them (with a controller) or removes the annotation.
  std::vector<std::string> orphaned;

  // minMember > 1: the members are admitted and taken as a group; else they are single pods.
  bool IsGang() const { return min_member > 1; }
  int32_t active() const { return bound + reserved + admitted; }
  int32_t need() const { return IsGang() && min_member > active() ? min_member - active() : 0; }
  bool starting() const { return IsGang() && !complete; }
  // The highest priority among the members; the earliest creation time.
  int32_t Priority() const;
  int64_t EarliestCreationMs() const;
};

}  // namespace capext
