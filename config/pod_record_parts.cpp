#include "config/pod_record_parts.h"

#include <utility>

#include <fmt/format.h>

namespace capext {

Pod BuildPodRecord(PodRecordParts parts) {
  Pod pod;
  pod.ns = parts.ns.empty() ? std::string("default") : std::move(parts.ns);
  pod.name = std::move(parts.name);
  pod.uid = std::move(parts.uid);
  pod.creation_ms = parts.creation_ms;
  pod.labels = std::move(parts.labels);
  pod.terminating = parts.deletion_ms != 0;
  pod.accelerator_model = std::move(parts.accelerator_model);
  pod.reclaim_record = std::move(parts.reclaim_record);
  pod.node_name = std::move(parts.node_name);
  pod.scheduler_name = std::move(parts.scheduler_name);
  pod.spec_priority = parts.priority;
  pod.priority_class_name = std::move(parts.priority_class_name);
  pod.spec_preemption_policy = parts.preemption_policy;
  pod.node_selector = std::move(parts.node_selector);
  pod.tolerations = std::move(parts.tolerations);
  pod.required_affinity = std::move(parts.affinity);
  pod.requests = EffectivePodRequest(parts.containers, parts.init_containers, parts.overhead);
  pod.resource_claims = std::move(parts.claims);
  if (parts.phase == "Running") {
    pod.phase = PodPhase::kRunning;
  } else if (parts.phase == "Succeeded") {
    pod.phase = PodPhase::kSucceeded;
  } else if (parts.phase == "Failed") {
    pod.phase = PodPhase::kFailed;
  } else if (parts.phase == "Unknown") {
    pod.phase = PodPhase::kUnknown;
  }
  pod.nominated_node_name = std::move(parts.nominated);
  pod.start_ms = parts.start_ms;
  pod.unschedulable_condition = parts.unschedulable;
  ApplyWorkloadFields(parts.workload, &pod);
  pod.patch_basis.resource_version = std::move(parts.resource_version);
  pod.patch_basis.has_annotations = parts.has_annotations;
  return pod;
}

Status ParsePreemptionPolicy(const std::string& text, std::optional<PreemptionPolicy>* out) {
  if (text.empty()) return {};
  if (text == "Never") {
    *out = PreemptionPolicy::kNever;
  } else if (text == "PreemptLowerPriority") {
    *out = PreemptionPolicy::kPreemptLowerPriority;
  } else {
    return Status::Error(
        fmt::format("spec.preemptionPolicy: unknown preemption policy \"{}\"", text));
  }
  return {};
}

}  // namespace capext
