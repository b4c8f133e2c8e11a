// PlanMembers (reclaim_plan.h): the pods that wait together with a pod, which a plan places
// (docs/reclaim-plan.md#1-what-a-plan-is-for).
#include "core/group_quota.h"
#include "core/reclaim_plan.h"

namespace capext {

std::vector<const NormalizedPod*> PlanMembers(const ClusterState& state, const NormalizedPod& pod) {
  int32_t need = 0;
  const std::vector<const NormalizedPod*> unit = GroupNeedMembers(state, pod, &need);
  if (need == 0) return {&pod};
  if (static_cast<int32_t>(unit.size()) < need) return {};
  std::vector<const NormalizedPod*> out;
  // The gang's admitted members wait for a node too (held, no node): placed first, in start
  // order (docs/reclaim-plan.md#1-what-a-plan-is-for).
  for (const auto& m : state.GroupOf(pod)->members) {
    if (m.state == MemberState::kAdmitted) out.push_back(m.pod);
  }
  out.insert(out.end(), unit.begin(), unit.end());
  return out;
}

}  // namespace capext
