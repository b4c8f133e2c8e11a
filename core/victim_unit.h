// Victim units (docs/workloads.md#5-victim-units-and-their-order): reclaim and /preempt take a
// group's surplus member (one pod), a single pod, or a group's core (every remaining member of
// the group on a node: taking the core takes the group whole, so a reclaim never leaves a group
// running below its minMember). One order for all of them, first victim first:
//   1. priority, lowest first (a core's: its highest member's);
//   2. at equal priority: surplus members, then single pods, then group cores;
//   3. the profile's victim order (core/victim_order.h; by default the most recently started
//      first) on the unit's representative: the pod itself, or a core's earliest-started member;
//   4. the representative's store key.
// (The quota-tree distance stays the outermost key: victim_selection.cpp applies it first.)
// Thread-safety: pure functions over a ClusterState the caller keeps still.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/cluster_state.h"
#include "core/pod_group.h"
#include "core/victim_order.h"

namespace capext {

enum class VictimUnitKind { kSurplus = 0, kSingle = 1, kCore = 2 };

// The kind as users read it in /explain, /pending and the log: "surplus", "single", "core".
inline const char* VictimUnitKindName(VictimUnitKind kind) {
  switch (kind) {
    case VictimUnitKind::kSurplus:
      return "surplus";
    case VictimUnitKind::kSingle:
      return "single";
    case VictimUnitKind::kCore:
      return "core";
  }
  return "unknown";
}

struct VictimUnit {
  VictimUnitKind kind = VictimUnitKind::kSingle;
  GroupKey group;  // empty for a single pod
  // The pods that go with the unit, in removal order: the most recently started first. A core's
  // admitted members (quota holds, no node) are among them: their holds end with the core
  // (docs/workloads.md#2-holds-quota-without-a-node), so the what-if releases them in
  // turn, each passing the victim rule like the others; they are never victims (nothing runs).
  std::vector<const NormalizedPod*> pods;
  const NormalizedPod* representative = nullptr;
  int32_t priority = 0;
};

// Whether a unit's pod is a core's admitted member: held without a node, released with the core,
// never a victim (docs/workloads.md#2-holds-quota-without-a-node).
inline bool HeldWithoutNode(const ClusterState& state, const NormalizedPod& pod) {
  return !pod.IsBound() && state.FindReservation(pod.store_key()) == nullptr;
}

// The unit that `pod` (bound or reserved on a node) is taken in.
VictimUnit VictimUnitOf(const ClusterState& state, const NormalizedPod& pod);

// True when unit `a` goes before unit `b`: the one comparator of victims, keys 1 to 4 above, with
// the profile's victim order (core/victim_order.h) as key 3.
inline bool VictimUnitBefore(const VictimUnit& a, const VictimUnit& b, const VictimOrder& order) {
  if (a.priority != b.priority) return a.priority < b.priority;
  if (a.kind != b.kind) return static_cast<int>(a.kind) < static_cast<int>(b.kind);
  if (order.KeptOver(*b.representative, *a.representative)) return true;
  if (order.KeptOver(*a.representative, *b.representative)) return false;
  return a.representative->store_key() < b.representative->store_key();
}

}  // namespace capext
