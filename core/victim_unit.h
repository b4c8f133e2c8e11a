// Victim units (docs/workloads.md, "Victim units and their order"): reclaim and /preempt take a
// group's surplus member (one pod), a single pod, or a group's core (every remaining member of
// the group on a node: taking the core takes the group whole, so a reclaim never leaves a group
// running below its minMember). One order for all of them, first victim first:
//   1. priority, lowest first (a core's: its highest member's);
//   2. at equal priority: surplus members, then single pods, then group cores;
//   3. the caller's pod order (by default the most recently started first) on the unit's
//      representative: the pod itself, or a core's earliest-started member;
//   4. the representative's store key.
// (The quota-tree distance stays the outermost key: victim_selection.cpp applies it first.)
// Thread-safety: pure functions over a ClusterState the caller keeps still.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/cluster_state.h"
#include "core/pod_group.h"

namespace capext {

enum class VictimUnitKind { kSurplus = 0, kSingle = 1, kCore = 2 };

struct VictimUnit {
  VictimUnitKind kind = VictimUnitKind::kSingle;
  GroupKey group;  // empty for a single pod
  // The pods on nodes that go with the unit, in removal order: the most recently started first.
  std::vector<const NormalizedPod*> pods;
  const NormalizedPod* representative = nullptr;
  int32_t priority = 0;
};

// The unit that `pod` (bound or reserved on a node) is taken in.
VictimUnit VictimUnitOf(const ClusterState& state, const NormalizedPod& pod);

// True when unit `a` goes before unit `b`. `more_important(x, y)`: pod x is kept over pod y.
template <typename MoreImportant>
bool VictimUnitBefore(const VictimUnit& a, const VictimUnit& b, MoreImportant&& more_important) {
  if (a.priority != b.priority) return a.priority < b.priority;
  if (a.kind != b.kind) return static_cast<int>(a.kind) < static_cast<int>(b.kind);
  if (more_important(*b.representative, *a.representative)) return true;
  if (more_important(*a.representative, *b.representative)) return false;
  return a.representative->store_key() < b.representative->store_key();
}

}  // namespace capext
