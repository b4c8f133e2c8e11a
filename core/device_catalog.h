// DeviceCatalog: the DRA objects a pod's device demand reads (docs/devices.md) — DeviceClasses
// with the quota resource each one charges, ResourceClaims, ResourceClaimTemplates, the
// configured deviceClassMappings — and two indexes ClusterState keeps in step with its pods:
//  - which pods name each claim and each template (to re-file them when the object changes);
//  - which pods hold each claim (bound and not terminal, or reserved on a node) and which one of
//    them carries the claim's devices in its quota request
//    (docs/devices.md#5-a-shared-claim-is-charged-once, "A shared claim is charged once").
// Thread-safety: none; ClusterState serialises writers and readers.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "core/device_claim.h"
#include "core/resource_name.h"

namespace capext {

class DeviceCatalog {
 public:
  // A DeviceClass with its quota resource resolved
  // (docs/devices.md#4-the-quota-resource-of-a-deviceclass).
  struct ClassEntry {
    DeviceClass device_class;
    ResourceName resource;
    std::optional<int64_t> all_count;  // from its mapping
    std::string problem;               // non-empty: the resource name could not be interned
  };
  // The pods holding a claim, by store key in order, and the one carrying its devices.
  struct Holders {
    std::string carrier;
    std::vector<std::string> holders;
  };

  // --- objects -------------------------------------------------------------------------------
  void SetMappings(std::vector<DeviceClassMapping> mappings);
  const std::vector<DeviceClassMapping>& mappings() const { return mappings_; }
  void UpsertClass(DeviceClass device_class);
  bool DeleteClass(std::string_view name);
  const ClassEntry* FindClass(std::string_view name) const;
  const std::map<std::string, ClassEntry, std::less<>>& classes() const { return classes_; }

  void UpsertClaim(ResourceClaim claim);
  bool DeleteClaim(std::string_view key);
  const ResourceClaim* FindClaim(std::string_view key) const;
  const std::map<std::string, ResourceClaim, std::less<>>& claims() const { return claims_; }

  void UpsertTemplate(ResourceClaimTemplate tmpl);
  bool DeleteTemplate(std::string_view key);
  const ResourceClaimTemplate* FindTemplate(std::string_view key) const;
  const std::map<std::string, ResourceClaimTemplate, std::less<>>& templates() const {
    return templates_;
  }

  // --- which pods name what ------------------------------------------------------------------
  // Replaces what the pod `pod_key` names ("ns/name" keys); empty lists forget the pod.
  void SetPodRefs(const std::string& pod_key, std::vector<std::string> claims,
                  std::vector<std::string> templates);
  // The claims the pod names (empty when none).
  const std::vector<std::string>& ClaimsOfPod(std::string_view pod_key) const;
  const std::set<std::string, std::less<>>* PodsOfClaim(std::string_view key) const;
  const std::set<std::string, std::less<>>* PodsOfTemplate(std::string_view key) const;
  // Whether any pod / the pod `pod_key` names a claim or a template.
  bool HasPodRefs() const { return !pod_refs_.empty(); }
  bool HasPodRefs(std::string_view pod_key) const {
    return pod_refs_.find(pod_key) != pod_refs_.end();
  }
  // Every pod that names a claim or a template.
  std::vector<std::string> PodsWithRefs() const;

  // --- who holds and who carries a claim -----------------------------------------------------
  // Sets the holders (sorted store keys). The carrier stays when it still holds the claim, else
  // becomes the first holder (none when there is none). Returns true when anything changed.
  bool SetHolders(const std::string& claim, std::vector<std::string> holders);
  const Holders* HoldersOf(std::string_view claim) const;

 private:
  struct PodRefs {
    std::vector<std::string> claims;
    std::vector<std::string> templates;
  };
  void ResolveClass(ClassEntry* entry) const;

  std::vector<DeviceClassMapping> mappings_;
  std::map<std::string, ClassEntry, std::less<>> classes_;
  std::map<std::string, ResourceClaim, std::less<>> claims_;
  std::map<std::string, ResourceClaimTemplate, std::less<>> templates_;
  std::map<std::string, PodRefs, std::less<>> pod_refs_;
  std::map<std::string, std::set<std::string, std::less<>>, std::less<>> pods_of_claim_;
  std::map<std::string, std::set<std::string, std::less<>>, std::less<>> pods_of_template_;
  std::map<std::string, Holders, std::less<>> holders_;
};

}  // namespace capext
