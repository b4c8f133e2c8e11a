// The workload fields of a Pod (docs/workloads.md, "Groups" and "Member states"): the values the
// DOM and the streaming Pod decoders read, and their one interpretation into Pod::group,
// min_member_annotation, quota_gated / other_gates, admitted_ms and has_controller.
// Annotation values that do not parse are ignored (a pod with a bad min-member annotation is a
// single pod; one with a bad admitted-at is not admitted), never an error: the annotations are
// free text to the API server, and a pod must not become unschedulable over them.
// Thread-safety: stateless.
#pragma once

#include <string>
#include <vector>

#include "core/pod.h"

namespace capext {

struct PodWorkloadText {
  std::string min_member;          // the min-member annotation's value
  std::string admitted_at;         // the admitted-at annotation's value
  std::vector<std::string> gates;  // spec.schedulingGates[].name
  std::string workload_name, workload_pod_group, workload_replica_key;  // spec.workloadRef
  bool has_controller = false;  // an ownerReference with controller: true
};

// Fills the pod's workload fields from `text` and the pod's labels (the pod-group label).
void ApplyWorkloadFields(const PodWorkloadText& text, Pod* pod);

}  // namespace capext
