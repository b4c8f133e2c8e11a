#include "core/group_quota.h"

#include "core/quota_admission.h"
#include "core/reasons.h"

namespace capext {

std::vector<const NormalizedPod*> GroupNeedMembers(const ClusterState& state,
                                                   const NormalizedPod& pod, int32_t* need) {
  *need = 0;
  if (pod.group.empty() || pod.IsBound() || pod.IsTerminal() || pod.IsGated()) return {};
  const GroupView* group = state.GroupOf(pod);
  if (group == nullptr || !group->starting() || group->need() == 0) return {};
  const std::string& self = pod.store_key();
  // A held or reserved member is admitted already: it is a single pod for the quota.
  if (state.FindHold(self) != nullptr || state.FindReservation(self) != nullptr) return {};
  *need = group->need();
  // The pod, then the oldest other pending members (members are in start order: the pending
  // ones by creation, then name).
  std::vector<const NormalizedPod*> unit{&pod};
  for (const auto& m : group->members) {
    if (static_cast<int32_t>(unit.size()) == *need) break;
    if (m.state == MemberState::kPending && m.pod->store_key() != self) unit.push_back(m.pod);
  }
  return unit;
}

GroupQuotaCheck CheckGroupQuota(const ClusterState& state, const NormalizedPod& pod) {
  GroupQuotaCheck out;
  int32_t need = 0;
  const std::vector<const NormalizedPod*> unit = GroupNeedMembers(state, pod, &need);
  if (unit.empty()) return out;
  out.applies = true;
  const GroupView* group = state.GroupOf(pod);
  if (static_cast<int32_t>(unit.size()) < need) {
    out.status = Status::Unschedulable(reasons::GangIncomplete(
        group->key.Display(), group->active() + group->pending, group->min_member));
    return out;
  }
  ResourceList request;
  for (const NormalizedPod* member : unit)
    request.Add(member->quota_request());
  out.status = CheckGroupRequest(state, pod, request, group->key.Display(), need);
  if (!out.status.ok()) return out;
  for (const NormalizedPod* member : unit)
    out.hold.push_back(member->store_key());
  return out;
}

}  // namespace capext
