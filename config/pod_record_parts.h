// PodRecordParts: what a wire decoder of a v1 Pod reads before the record is built (the JSON
// stream decoder, config/object_stream_decoder.h, and the protobuf one,
// config/object_protobuf_decoder.h), and BuildPodRecord, the one place that turns it into the
// core's Pod. So the rules that make the record (the namespace "default", the phase's text, a
// deletionTimestamp as terminating, the effective request, the workload fields) are written
// once, and both encodings give the same record by construction
// (docs/architecture.md#the-protobuf-decoders).
// Thread-safety: a value type and a pure function.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "config/pod_workload_fields.h"
#include "core/pod.h"
#include "core/pod_request.h"
#include "core/status.h"

namespace capext {

struct PodRecordParts {
  // metadata
  std::string ns, name, uid, resource_version;  // ns "" = "default"
  int64_t creation_ms = 0, deletion_ms = 0;     // Unix ms; 0 = absent
  Labels labels;
  bool has_annotations = false;  // metadata.annotations is present
  std::string accelerator_model, reclaim_record;
  // spec
  std::string node_name, scheduler_name, priority_class_name;
  std::optional<int32_t> priority;
  std::optional<PreemptionPolicy> preemption_policy;  // ParsePreemptionPolicy's
  Labels node_selector;
  std::vector<Toleration> tolerations;
  std::vector<NodeSelectorTerm> affinity;  // required node affinity terms
  std::vector<ContainerRequests> containers, init_containers;
  ResourceList overhead;
  std::vector<PodClaimRef> claims;  // spec.resourceClaims, joined with their statuses
  // status
  std::string phase, nominated;  // status.phase and nominatedNodeName, as written
  int64_t start_ms = 0;          // status.startTime, Unix ms; 0 = absent
  bool unschedulable = false;    // a PodScheduled=False condition with reason Unschedulable
  // metadata and spec: the workload fields' texts (ApplyWorkloadFields)
  PodWorkloadText workload;
};

// The record. REQUIRES: the parts passed the decoder's checks.
Pod BuildPodRecord(PodRecordParts parts);

// spec.preemptionPolicy's text: "" leaves *out unset; "Never" and "PreemptLowerPriority" set it;
// any other text is the error both decoders give, naming the field.
Status ParsePreemptionPolicy(const std::string& text, std::optional<PreemptionPolicy>* out);

}  // namespace capext
