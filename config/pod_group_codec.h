// Decoding of the group objects live mode watches
// (docs/workloads-live.md#where-group-objects-come-from) into PodGroupSpecs:
//  - coscheduling PodGroup (scheduling.x-k8s.io/v1alpha1): spec.minMember,
//    spec.scheduleTimeoutSeconds -> one spec keyed (scheduling.x-k8s.io, ns, name);
//  - upstream Workload (scheduling.k8s.io/v1alpha1): one spec per spec.podGroups[] entry, keyed
//    (scheduling.k8s.io, ns, "<workload>/<podGroup>"), min_member = policy.gang.minCount
//    (policy.basic, or no gang policy: 0, single pods); no timeout field.
// A malformed object is an error naming the object and the field; the caller skips it.
// Thread-safety: stateless.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/pod_group.h"
#include "core/status.h"

namespace capext {

Status DecodePodGroupObject(std::string_view json, PodGroupSpec* out);
// *ns and *name: the Workload's (a Workload with no podGroups states no group).
Status DecodeWorkloadObject(std::string_view json, std::vector<PodGroupSpec>* out, std::string* ns,
                            std::string* name);

}  // namespace capext
