// The workload fields of a Pod (docs/workloads.md#1-groups and docs/workloads.md#member-states):
// the values the DOM and the streaming Pod decoders read, and their one interpretation into
// Pod::group, min_member_annotation, quota_gated / other_gates, admitted_ms, has_controller and
// patch_basis.quota_gate_index.
// Annotation values that do not parse are ignored (a pod with a bad min-member annotation is a
// single pod; one with a bad admitted-at is not admitted), never an error: the annotations are
// free text to the API server, and a pod must not become unschedulable over them.
// Thread-safety: stateless.
#pragma once

#include <rapidjson/document.h>

#include <string>
#include <vector>

#include "core/pod.h"
#include "core/status.h"

namespace capext {

struct PodWorkloadText {
  std::string min_member;          // the min-member annotation's value
  std::string admitted_at;         // the admitted-at annotation's value
  std::vector<std::string> gates;  // spec.schedulingGates[].name
  // The position in spec.schedulingGates of the first entry named our gate; -1 = none.
  int32_t quota_gate_index = -1;
  std::string workload_name, workload_pod_group, workload_replica_key;  // spec.workloadRef
  bool has_controller = false;  // an ownerReference with controller: true
};

// Fills the pod's workload fields from `text` and the pod's labels (the pod-group label).
void ApplyWorkloadFields(const PodWorkloadText& text, Pod* pod);

// The DOM codec's readers of the fields (the streaming decoder has its own, with the same
// verdicts): metadata.ownerReferences' controller flag, spec.schedulingGates[].name and
// spec.workloadRef. Non-object list elements are skipped; wrong types are errors.
Status ReadOwnerReferences(const rapidjson::Value& meta, bool* has_controller);
Status ReadSchedulingGates(const rapidjson::Value& spec, PodWorkloadText* out);
Status ReadWorkloadRef(const rapidjson::Value& spec, PodWorkloadText* out);

}  // namespace capext
