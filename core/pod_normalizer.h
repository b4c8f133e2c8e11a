// PodNormalizer: turns a raw Pod (decoded from the wire, a snapshot or a trace) into the
// NormalizedPod every decision takes, and keeps the PriorityClasses that normalisation reads.
//  - priority: spec.priority when set (the admission plugin already resolved it), else the value
//    of spec.priorityClassName's class, else (no class named) the global default class with the
//    smallest value, else 0; a named class that does not exist gives 0;
//  - preemptionPolicy: spec.preemptionPolicy when set, else the class's, else
//    PreemptLowerPriority;
//  - quota request: QuotaRequestOf(semantics, pod) (pods: 1 and the GPU-model mapping under
//    capacity-extender semantics; the reference's resource set under scheduler-plugins);
//    plus, under capacity-extender semantics, the device demand of its ResourceClaims
//    (DeviceDemandOf over the catalog kept here; docs/devices.md);
//  - store key: the uid, else "namespace/name".
// Requests themselves (init containers, sidecars, overhead) are computed by the decoder
// (EffectivePodRequest); normalisation takes them as given.
// Thread-safety: const methods may run concurrently; changes need exclusive access.
#pragma once

#include <map>
#include <string>
#include <string_view>

#include "core/device_catalog.h"
#include "core/pod.h"
#include "core/priority_class.h"
#include "core/quota_semantics.h"

namespace capext {

class PodNormalizer {
 public:
  explicit PodNormalizer(QuotaSemantics semantics) : semantics_(semantics) {}

  QuotaSemantics semantics() const { return semantics_; }

  NormalizedPod Normalize(Pod raw) const;
  // Re-resolves priority and preemption policy, e.g. after a PriorityClass changed. Returns true
  // when either changed.
  bool Refresh(NormalizedPod* pod) const;

  void UpsertPriorityClass(const PriorityClass& pc);
  // Returns false when there was no such class.
  bool DeletePriorityClass(std::string_view name);
  const std::map<std::string, PriorityClass, std::less<>>& priority_classes() const {
    return classes_;
  }

  // The DRA objects normalisation reads (ClusterState keeps the catalog's indexes).
  DeviceCatalog& devices() { return devices_; }
  const DeviceCatalog& devices() const { return devices_; }

 private:
  void Resolve(Pod* pod) const;
  void FindGlobalDefault();

  QuotaSemantics semantics_;
  std::map<std::string, PriorityClass, std::less<>> classes_;
  const PriorityClass* global_default_ = nullptr;  // into classes_
  DeviceCatalog devices_;
};

}  // namespace capext
