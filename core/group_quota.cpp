#include "core/group_quota.h"

#include <map>

#include <fmt/format.h>

#include "core/device_demand.h"
#include "core/group_placement.h"
#include "core/quota_admission.h"
#include "core/reasons.h"

namespace capext {

std::vector<const NormalizedPod*> GroupNeedMembers(const ClusterState& state,
                                                   const NormalizedPod& pod, int32_t* need) {
  *need = 0;
  if (pod.group.empty() || pod.IsBound() || pod.IsTerminal()) return {};
  // A pod under our gate alone waits in gate mode's queue: its unit is the oldest members under
  // our gate alone, as the admission queue takes them
  // (docs/workloads.md#3-gate-mode-the-admission-queue), for the plan the admission loop asks
  // (docs/reclaim-plan.md#1-what-a-plan-is-for).
  const bool gated = pod.IsGated();
  if (pod.other_gates) return {};
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
    const bool waits = gated ? m.state == MemberState::kGated && !m.pod->other_gates
                             : m.state == MemberState::kPending;
    if (waits && m.pod->store_key() != self) unit.push_back(m.pod);
  }
  return unit;
}

ResourceList GroupRequestOf(const ClusterState& state,
                            const std::vector<const NormalizedPod*>& members) {
  ResourceList request;
  std::map<std::string_view, int> carriers;  // an unheld claim -> the members carrying it
  for (const NormalizedPod* member : members) {
    request.Add(member->quota_request());
    if (const DeviceDemand* d = member->device_demand()) {
      for (const auto& claim : d->claims) {
        if (state.devices().HoldersOf(claim) == nullptr) ++carriers[claim];
      }
    }
  }
  for (const auto& [key, n] : carriers) {
    const ResourceClaim* claim = n > 1 ? state.devices().FindClaim(key) : nullptr;
    if (claim == nullptr) continue;  // named once, or not found (then the members wait)
    ResourceList charge;
    if (!ClaimCharge(state.devices(), *claim, fmt::format("ResourceClaim {}", key), &charge)
             .empty())
      continue;
    for (int i = 1; i < n; ++i)
      request.Subtract(charge);
  }
  return request;
}

Status DevicesCountable(const std::vector<const NormalizedPod*>& members) {
  for (const NormalizedPod* member : members) {
    if (!member->device_problem().empty()) {
      return Status::Unschedulable(
          reasons::DevicesNotCountable(member->Key(), member->device_problem()));
    }
  }
  return {};
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
  if (state.QuotaFor(pod.ns) != nullptr) out.status = DevicesCountable(unit);
  if (!out.status.ok()) return out;
  const ResourceList request = GroupRequestOf(state, unit);
  out.status = CheckGroupRequest(state, pod, request, group->key.Display(), need);
  if (!out.status.ok()) return out;
  // And a place for every one of them together on the current nodes, as gate mode's queue asks
  // (docs/workloads.md#4-filter-mode): a gang that cannot run holds nothing.
  std::vector<std::string> keys;
  for (const NormalizedPod* member : unit)
    keys.push_back(member->store_key());
  ClusterState what_if(state);
  int placed = 0;
  if (!PlaceTogether(&what_if, keys, 0, &placed)) {
    out.status = Status::Unschedulable(
        reasons::GangNoPlacement(group->key.Display(), static_cast<int>(unit.size()), placed));
    return out;
  }
  for (const NormalizedPod* member : unit)
    out.hold.push_back(member->store_key());
  return out;
}

}  // namespace capext
