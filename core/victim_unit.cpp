#include "core/victim_unit.h"

#include <algorithm>

namespace capext {

VictimUnit VictimUnitOf(const ClusterState& state, const NormalizedPod& pod) {
  VictimUnit unit;
  unit.pods = {&pod};
  unit.representative = &pod;
  unit.priority = pod.priority;
  const GroupView* group = pod.group.empty() ? nullptr : state.GroupOf(pod);
  if (group == nullptr || !group->IsGang()) return unit;
  unit.group = group->key;
  // The members are in start order, the active ones first: the first min_member are the core.
  int32_t index = 0;
  bool core = false;
  for (const auto& m : group->members) {
    if (m.state != MemberState::kBound && m.state != MemberState::kReserved &&
        m.state != MemberState::kAdmitted)
      break;
    if (m.pod == &pod) {
      core = index < group->min_member;
      break;
    }
    ++index;
  }
  if (!core) {
    unit.kind = VictimUnitKind::kSurplus;
    return unit;
  }
  // The core takes every remaining member on a node: the group whole.
  unit.kind = VictimUnitKind::kCore;
  unit.pods.clear();
  for (const auto& m : group->members) {
    if (m.state != MemberState::kBound && m.state != MemberState::kReserved) continue;
    unit.pods.push_back(m.pod);
    unit.priority = std::max(unit.priority, m.pod->priority);
  }
  unit.representative = unit.pods.front();           // the earliest started
  std::reverse(unit.pods.begin(), unit.pods.end());  // the most recently started goes first
  return unit;
}

}  // namespace capext
