// Decoding DRA objects (resource.k8s.io v1, v1beta2, v1beta1: ResourceClaim,
// ResourceClaimTemplate, DeviceClass) and a pod's claim references (spec.resourceClaims,
// status.resourceClaimStatuses) into the core records of core/device_claim.h (docs/devices.md
// 1 and 8). A request is read in either shape: `exactly` / `firstAvailable` (v1, v1beta2) or
// deviceClassName, allocationMode and count on the request itself (v1beta1).
// A claim or template whose metadata decodes but whose devices do not is returned ok with
// ResourceClaim::malformed set: its pods then wait with the reason
// (docs/devices.md#7-bad-input-the-pod-waits-never-admitted-uncounted). Thread-safety: stateless.
#pragma once

#include <rapidjson/document.h>

#include "core/device_claim.h"
#include "core/pod.h"
#include "core/status.h"

namespace capext {

// The DRA API group.
inline constexpr const char* kResourceGroup = "resource.k8s.io";

Status DecodeDeviceClass(const rapidjson::Value& object, DeviceClass* out);
Status DecodeResourceClaim(const rapidjson::Value& object, ResourceClaim* out);
Status DecodeResourceClaimTemplate(const rapidjson::Value& object, ResourceClaimTemplate* out);

// spec.resourceClaims of a pod spec (`spec`) into pod->resource_claims.
Status DecodePodClaims(const rapidjson::Value& spec, Pod* pod);
// status.resourceClaimStatuses of a pod status (`status`), joined with the entries read by
// DecodePodClaims (call it after).
Status DecodePodClaimStatuses(const rapidjson::Value& status, Pod* pod);
// One status.resourceClaimStatuses entry joined with the pod's claims: the entry `name` of a
// template names the claim made for it (`claim`; empty: none is needed). Only a template's entry
// is named by the status (docs/devices.md#2-which-claims-a-pod-charges). Both encodings' decoders
// join through it.
void JoinPodClaimStatus(const std::string& name, const std::string& claim,
                        std::vector<PodClaimRef>* claims);

// A deviceClassMappings list in JSON (a scenario file's key; the extender config reads the same
// shape from YAML, config/device_class_mappings.h).
Status DecodeDeviceClassMappings(const rapidjson::Value& list,
                                 std::vector<DeviceClassMapping>* out);

}  // namespace capext
