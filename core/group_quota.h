// The group rule of filter mode (docs/workloads.md#4-filter-mode), in the decision path every
// /filter shares (core's Placement, so the extender and the simulator both apply it): a member of
// a starting group passes the quota only if the quota admits the group's need, the summed
// request of the `need` oldest pending members (this pod among them), every rule of
// docs/capacity-semantics.md#3-admission-may-this-pod-run-in-its-quota included. Members already
// bound, reserved or held are in used, so the need is all that is added. And, as gate mode's queue
// asks, core's placement must find a node for every one of them together on the current nodes
// (group_placement.h). The caller then holds those members (ClusterState::Hold). Thread-safety: a
// pure function over a ClusterState the caller keeps still.
#pragma once

#include <string>
#include <vector>

#include "core/cluster_state.h"
#include "core/status.h"

namespace capext {

struct GroupQuotaCheck {
  // Whether the rule applies: the pod is a pending, unheld member of a starting group with
  // need > 0. When false, the pod is a single pod for the quota (CheckQuota decides).
  bool applies = false;
  Status status;  // the verdict when it applies; reasons prefixed by the group's Display()
  // When it applies and passes: the store keys of the `need` members to hold, oldest first.
  std::vector<std::string> hold;
};

GroupQuotaCheck CheckGroupQuota(const ClusterState& state, const NormalizedPod& pod);

// The members the rule admits together with `pod` (the pod first, then the oldest other pending
// members), when the rule applies; fewer than the need when too few are pending; empty when the
// rule does not apply. For a pod under our gate alone (gate mode), the others are the oldest
// members under our gate alone: the admission queue's group unit.
std::vector<const NormalizedPod*> GroupNeedMembers(const ClusterState& state,
                                                   const NormalizedPod& pod, int32_t* need);

// The summed quota request of `members` admitted together. A claim that no pod holds is in the
// request of every pending member naming it, but admitted together they charge it once
// (docs/devices.md#5-a-shared-claim-is-charged-once): the sum counts it once.
ResourceList GroupRequestOf(const ClusterState& state,
                            const std::vector<const NormalizedPod*>& members);

// docs/devices.md#7-bad-input-the-pod-waits-never-admitted-uncounted for a unit admitted together:
// the first member whose devices cannot be counted holds the whole unit, with its reason.
Status DevicesCountable(const std::vector<const NormalizedPod*>& members);

}  // namespace capext
