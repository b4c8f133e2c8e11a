// Builds a group's view (core/pod_group.h) from its members and the ledger's holds and
// reservations (docs/workloads.md, "minMember" and "Member states"). ClusterState calls it
// whenever something a view reads changes.
// Thread-safety: a pure function.
#pragma once

#include <vector>

#include "core/pod_group.h"
#include "core/quota_ledger.h"

namespace capext {

// `spec`: the group's PodGroupSpec, or nullptr; `members`: the pods naming the group, in any
// order (terminal ones are left out of the view); `complete`: the group completed before.
GroupView BuildGroupView(const GroupKey& key, const PodGroupSpec* spec,
                         const std::vector<const NormalizedPod*>& members,
                         const QuotaLedger& ledger, bool complete);

}  // namespace capext
