// A pod's device demand: what its ResourceClaims add to its quota request (docs/devices.md).
//  - each spec.resourceClaims entry names a claim (directly, or generated and named by the status)
//    or, before the generated claim exists, a template;
//  - each request charges its class's quota resource: count units (ExactCount); the allocation's
//    results (All, once allocated; everything once allocated); the mapping's
//    allocationModeAllCount (All before allocation); the element-wise largest alternative
//    (firstAvailable before allocation);
//  - a claim held by pods is charged only to its carrier (DeviceCatalog::Holders); a pending pod
//    of a claim nobody holds carries it.
// Anything that cannot be counted is a problem: the pod waits
// (docs/devices.md#7-bad-input-the-pod-waits-never-admitted-uncounted). Thread-safety: pure
// functions.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/device_catalog.h"
#include "core/pod.h"
#include "core/resource_list.h"

namespace capext {

// The demand of `pod` (filed under `store_key`) in `catalog`.
DeviceDemand DeviceDemandOf(const DeviceCatalog& catalog, const Pod& pod,
                            std::string_view store_key);

// What the requests of one claim charge; `what` names the claim in problems ("ResourceClaim
// ns/c"). Returns the problem, empty when none.
std::string ClaimCharge(const DeviceCatalog& catalog, const ResourceClaim& claim,
                        std::string_view what, ResourceList* out);

}  // namespace capext
