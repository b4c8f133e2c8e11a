#include "core/pod_normalizer.h"

#include "core/device_demand.h"

namespace capext {

NormalizedPod PodNormalizer::Normalize(Pod raw) const {
  Resolve(&raw);
  raw.requests.ShrinkToFit();
  NormalizedPod pod(std::move(raw));
  if (pod.uid.empty()) pod.fallback_key_ = std::make_unique<std::string>(pod.Key());
  pod.quota_request_ = QuotaRequestOf(semantics_, pod);
  // docs/devices.md: the reference counts no claim; a pod naming none costs nothing here.
  if (!pod.resource_claims.empty() && semantics_->ChargesDeviceClaims()) {
    auto demand = std::make_shared<DeviceDemand>(DeviceDemandOf(devices_, pod, pod.store_key()));
    pod.quota_request_.Add(demand->charge);
    pod.devices_ = std::move(demand);
  }
  pod.quota_request_.ShrinkToFit();
  return pod;
}

bool PodNormalizer::Refresh(NormalizedPod* pod) const {
  const int32_t priority = pod->priority;
  const PreemptionPolicy policy = pod->preemption_policy;
  Resolve(pod);
  return pod->priority != priority || pod->preemption_policy != policy;
}

void PodNormalizer::Resolve(Pod* pod) const {
  const PriorityClass* cls = nullptr;
  if (!pod->priority_class_name.empty()) {
    auto it = classes_.find(pod->priority_class_name);
    if (it != classes_.end()) cls = &it->second;
  } else {
    cls = global_default_;
  }
  pod->priority = pod->spec_priority ? *pod->spec_priority : cls ? cls->value : 0;
  if (pod->spec_preemption_policy) {
    pod->preemption_policy = *pod->spec_preemption_policy;
  } else {
    pod->preemption_policy = cls ? cls->preemption_policy : PreemptionPolicy::kPreemptLowerPriority;
  }
}

void PodNormalizer::UpsertPriorityClass(const PriorityClass& pc) {
  classes_[pc.name] = pc;
  FindGlobalDefault();
}

bool PodNormalizer::DeletePriorityClass(std::string_view name) {
  auto it = classes_.find(name);
  if (it == classes_.end()) return false;
  classes_.erase(it);
  FindGlobalDefault();
  return true;
}

void PodNormalizer::FindGlobalDefault() {
  // With several global defaults Kubernetes uses the smallest value (PriorityClass API docs).
  global_default_ = nullptr;
  for (const auto& [name, pc] : classes_) {
    if (pc.global_default && (!global_default_ || pc.value < global_default_->value)) {
      global_default_ = &pc;
    }
  }
}

}  // namespace capext
