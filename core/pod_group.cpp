#include "core/pod_group.h"

#include <algorithm>
#include <limits>

namespace capext {

GroupKey GroupKeyOf(const Pod& pod) {
  const GroupRef& group = *pod.group;
  if (group.empty()) return {};
  std::string name = group.name;
  // docs/workloads.md#membership: a Workload's pod group is "<workload>/<podGroup>[/<key>]".
  if (group.api_group == kWorkloadApiGroup) {
    name += "/" + group.pod_group;
    if (!group.replica_key.empty()) name += "/" + group.replica_key;
  }
  return GroupKey{group.api_group, pod.ns, std::move(name)};
}

int32_t GroupView::Priority() const {
  int32_t p = std::numeric_limits<int32_t>::min();
  for (const auto& m : members)
    p = std::max(p, m.pod->priority);
  return members.empty() ? 0 : p;
}

int64_t GroupView::EarliestCreationMs() const {
  int64_t t = std::numeric_limits<int64_t>::max();
  for (const auto& m : members)
    t = std::min(t, m.pod->creation_ms);
  return members.empty() ? 0 : t;
}

}  // namespace capext
