// The DRA objects (resource.k8s.io) that quota decisions read, as decoded from any of v1,
// v1beta2 and v1beta1 (docs/devices.md#1-what-is-read), and how a pod names its claims.
// Only what a device demand needs is kept: no selectors, constraints or device configs.
// Thread-safety: value types.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/resource_list.h"

namespace capext {

// A DeviceClass (cluster-scoped).
struct DeviceClass {
  std::string name;
  std::string extended_resource_name;  // spec.extendedResourceName; empty = none
};

// One alternative of a firstAvailable request, or the exactly part of a request.
struct DeviceSubrequest {
  std::string name;  // the subrequest's name (empty for the exactly part)
  std::string device_class;
  bool all = false;   // allocationMode: All
  int64_t count = 1;  // allocationMode: ExactCount
};

// One entry of spec.devices.requests.
struct DeviceRequest {
  std::string name;
  DeviceSubrequest exactly;                       // used when first_available is empty
  std::vector<DeviceSubrequest> first_available;  // the alternatives, in order
};

// A ResourceClaim, or the claim a ResourceClaimTemplate would generate (namespaced).
struct ResourceClaim {
  std::string ns;
  std::string name;
  std::vector<DeviceRequest> requests;
  // status.allocation is set; `results` lists each result's request ("r" or "r/sub").
  bool allocated = false;
  std::vector<std::string> results;
  // Non-empty when the object could not be decoded: why
  // (docs/devices.md#7-bad-input-the-pod-waits-never-admitted-uncounted). Such a claim is kept so
  // that its pods wait with the reason instead of passing uncounted.
  std::string malformed;

  std::string Key() const { return ns + "/" + name; }
};

// A ResourceClaimTemplate: the claim it generates (spec.spec) under the template's own name.
using ResourceClaimTemplate = ResourceClaim;

// One entry of a pod's spec.resourceClaims, joined with its status.resourceClaimStatuses entry.
struct PodClaimRef {
  std::string name;           // the entry's name in the pod
  std::string claim_name;     // resourceClaimName, or the generated claim's name from the status
  std::string template_name;  // resourceClaimTemplateName
  // The status lists the entry with a null resourceClaimName: no claim was needed.
  bool no_claim_needed = false;

  bool operator==(const PodClaimRef&) const = default;
};

// A DeviceClass -> quota resource mapping from the configuration (Kueue's deviceClassMappings).
struct DeviceClassMapping {
  std::string resource;                     // the quota resource name
  std::vector<std::string> device_classes;  // deviceClassNames
  // What an allocationMode All request of these classes charges before allocation; unset =
  // such a request waits (docs/devices.md#3-what-one-request-charges).
  std::optional<int64_t> all_count;
};

// How a pod's claims were counted (core/device_demand.h, DeviceDemandOf).
struct DeviceDemand {
  ResourceList charge;  // what the pod's claims add to its quota request
  // The part of `charge` that another holder of the claim keeps: evicting the pod frees it not
  // (docs/devices.md#5-a-shared-claim-is-charged-once, "Victims").
  ResourceList kept;
  // Why the devices cannot be counted ("ResourceClaim ns/c not found"); empty when they can.
  std::string problem;
  std::vector<std::string> claims;     // "ns/name" of each claim the pod names
  std::vector<std::string> templates;  // "ns/name" of each template read in place of a claim
};

}  // namespace capext
