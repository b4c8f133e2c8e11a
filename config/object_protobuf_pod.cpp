// DecodePodProtobuf (config/object_protobuf_decoder.h).
//
// Field numbers: k8s.io/api/core/v1/generated.proto and
// k8s.io/apimachinery/pkg/apis/meta/v1/generated.proto at tag kubernetes-1.26.1 (repositories
// kubernetes/api d8429a47d18a97801383443ed6b4785e04edef9c and kubernetes/apimachinery
// 373a5f752d44989b9829888460844849878e1b6e), except for fields 1.26 lacks, whose numbers come
// from k8s.io/api/core/v1/generated.proto at tag kubernetes-1.35.0 (kubernetes/api
// 9afe7de0a56c582b06ca094f7309015bc84657a7):
//   - Container.restartPolicy = 24 (sidecar init containers; there since 1.28);
//   - PodSpec.workloadRef = 42, WorkloadReference {name = 1, podGroup = 2,
//     podGroupReplicaKey = 3} (the Workload API, 1.35; 1.36 replaced it by schedulingGroup = 43,
//     which the JSON path does not read either);
//   - PodResourceClaim {name = 1, resourceClaimName = 3, resourceClaimTemplateName = 4} (the shape
//     since 1.31) and PodStatus.resourceClaimStatuses = 15 with PodResourceClaimStatus {name = 1,
//     resourceClaimName = 2} (since 1.28). 1.26's claim has `source = 2` (ClaimSource) instead,
//     which the JSON path does not read (its JSON is `source: {...}`), so neither does this one.
#include <optional>
#include <vector>

#include "config/device_codec.h"
#include "config/object_protobuf_decoder.h"
#include "config/object_protobuf_parts.h"
#include "config/pod_record_parts.h"

namespace capext {
namespace {

using namespace protobuf_decoding;  // NOLINT: the decoder's own toolkit

// ObjectMeta.
constexpr uint32_t kMetaName = 1, kMetaNamespace = 3, kMetaUid = 5, kMetaResourceVersion = 6,
                   kMetaCreation = 8, kMetaDeletion = 9, kMetaLabels = 11, kMetaAnnotations = 12,
                   kMetaOwnerReferences = 13;
constexpr uint32_t kOwnerController = 6;
// PodSpec.
constexpr uint32_t kSpecContainers = 2, kSpecNodeSelector = 7, kSpecNodeName = 10,
                   kSpecAffinity = 18, kSpecSchedulerName = 19, kSpecInitContainers = 20,
                   kSpecTolerations = 22, kSpecPriorityClassName = 24, kSpecPriority = 25,
                   kSpecPreemptionPolicy = 31, kSpecOverhead = 32, kSpecSchedulingGates = 38,
                   kSpecResourceClaims = 39, kSpecWorkloadRef = 42;
// PodStatus.
constexpr uint32_t kStatusPhase = 1, kStatusConditions = 2, kStatusStartTime = 7,
                   kStatusNominatedNodeName = 11, kStatusResourceClaimStatuses = 15;

// The record's parts (pod_record_parts.h), and what is read on the way to them: the annotations
// as offered, the content errors in the JSON path's order, the preemption policy's text and the
// claim statuses, joined at the end.
struct PodParts : PodRecordParts {
  bool meta_present = false;
  AnnotationPick model, record, min_member, admitted;
  Status creation_content, deletion_content;
  std::string preemption_text;
  Status containers_content, init_content, overhead_content;
  std::vector<std::pair<std::string, std::string>> claim_statuses;  // (name, resourceClaimName)
  Status start_content;
};

Status ReadMetadata(std::string_view message, const DecodeOptions& options, PodParts* p) {
  return ForEachField(message, "metadata", [&](const Field& f) -> Status {
    switch (f.number) {
      case kMetaName:
        return TakeString(f, "metadata.name", &p->name);
      case kMetaNamespace:
        return TakeString(f, "metadata.namespace", &p->ns);
      case kMetaUid:
        return TakeString(f, "metadata.uid", &p->uid);
      case kMetaResourceVersion:
        return TakeString(f, "metadata.resourceVersion", &p->resource_version);
      case kMetaCreation:
        return TakeTime(f, "metadata.creationTimestamp", &p->creation_ms, &p->creation_content);
      case kMetaDeletion:
        return TakeTime(f, "metadata.deletionTimestamp", &p->deletion_ms, &p->deletion_content);
      case kMetaLabels:
        return TakeStringMapEntry(f, "metadata.labels", &p->labels);
      case kMetaAnnotations: {
        std::string_view key, value;
        if (Status s = TakeMapEntry(f, "metadata.annotations", &key, &value); !s.ok()) return s;
        p->has_annotations = true;
        p->model.Offer(key, options.accelerator_model_annotation, value);
        p->record.Offer(key, kReclaimRecordAnnotation, value);
        p->min_member.Offer(key, kMinMemberAnnotation, value);
        p->admitted.Offer(key, kAdmittedAtAnnotation, value);
        return {};
      }
      case kMetaOwnerReferences: {
        std::string_view owner;
        if (Status s = TakeBytes(f, "metadata.ownerReferences", &owner); !s.ok()) return s;
        return ForEachField(owner, "metadata.ownerReferences", [&](const Field& o) -> Status {
          if (o.number != kOwnerController) return {};
          bool controller = false;
          if (Status s = TakeBool(o, "metadata.ownerReferences.controller", &controller); !s.ok()) {
            return s;
          }
          if (controller) p->workload.has_controller = true;
          return {};
        });
      }
      default:
        return {};
    }
  });
}

// NodeSelectorRequirement {key = 1, operator = 2, values = 3}.
Status ReadRequirement(const Field& f, std::string_view path,
                       std::vector<NodeSelectorRequirement>* out) {
  std::string_view message;
  if (Status s = TakeBytes(f, path, &message); !s.ok()) return s;
  NodeSelectorRequirement req;
  Status s = ForEachField(message, path, [&](const Field& r) -> Status {
    if (r.number == 1) return TakeString(r, FieldPath(path, ".key"), &req.key);
    if (r.number == 2) return TakeString(r, FieldPath(path, ".operator"), &req.op);
    if (r.number == 3) {
      std::string value;
      if (Status v = TakeString(r, FieldPath(path, ".values"), &value); !v.ok()) return v;
      req.values.push_back(std::move(value));
    }
    return {};
  });
  out->push_back(std::move(req));
  return s;
}

// Affinity {nodeAffinity = 1 {requiredDuringSchedulingIgnoredDuringExecution = 1 (NodeSelector)
// {nodeSelectorTerms = 1 {matchExpressions = 1, matchFields = 2}}}}: the required terms only.
Status ReadAffinity(const Field& f, std::vector<NodeSelectorTerm>* terms) {
  static constexpr std::string_view kNode = "spec.affinity.nodeAffinity";
  static constexpr std::string_view kRequired =
      "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution";
  static constexpr std::string_view kTerms =
      "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution."
      "nodeSelectorTerms";
  std::string_view affinity;
  if (Status s = TakeBytes(f, "spec.affinity", &affinity); !s.ok()) return s;
  return ForEachField(affinity, "spec.affinity", [&](const Field& a) -> Status {
    std::string_view node;
    if (a.number != 1) return {};
    if (Status s = TakeBytes(a, kNode, &node); !s.ok()) return s;
    return ForEachField(node, kNode, [&](const Field& n) -> Status {
      std::string_view required;
      if (n.number != 1) return {};
      if (Status s = TakeBytes(n, kRequired, &required); !s.ok()) return s;
      return ForEachField(required, kRequired, [&](const Field& t) -> Status {
        std::string_view term_message;
        if (t.number != 1) return {};
        const FieldPath tpath(kTerms, terms->size());
        if (Status s = TakeBytes(t, tpath, &term_message); !s.ok()) return s;
        NodeSelectorTerm term;
        Status s = ForEachField(term_message, tpath, [&](const Field& m) -> Status {
          if (m.number == 1) {
            return ReadRequirement(
                m, FieldPath(FieldPath(tpath, ".matchExpressions"), term.match_expressions.size()),
                &term.match_expressions);
          }
          if (m.number == 2) {
            return ReadRequirement(
                m, FieldPath(FieldPath(tpath, ".matchFields"), term.match_fields.size()),
                &term.match_fields);
          }
          return {};
        });
        terms->push_back(std::move(term));
        return s;
      });
    });
  });
}

// Toleration {key = 1, operator = 2, value = 3, effect = 4}.
Status ReadToleration(const Field& f, std::vector<Toleration>* out) {
  const FieldPath path("spec.tolerations", out->size());
  std::string_view message;
  if (Status s = TakeBytes(f, path, &message); !s.ok()) return s;
  Toleration tol;
  Status s = ForEachField(message, path, [&](const Field& t) -> Status {
    switch (t.number) {
      case 1:
        return TakeString(t, FieldPath(path, ".key"), &tol.key);
      case 2:
        return TakeString(t, FieldPath(path, ".operator"), &tol.op);
      case 3:
        return TakeString(t, FieldPath(path, ".value"), &tol.value);
      case 4:
        return TakeString(t, FieldPath(path, ".effect"), &tol.effect);
      default:
        return {};
    }
  });
  out->push_back(std::move(tol));
  return s;
}

// Container {resources = 8 (ResourceRequirements {requests = 2}), restartPolicy = 24}.
Status ReadContainer(const Field& f, std::string_view list_path,
                     std::vector<ContainerRequests>* out, Status* content) {
  const FieldPath path(list_path, out->size());
  std::string_view message;
  if (Status s = TakeBytes(f, path, &message); !s.ok()) return s;
  ContainerRequests container;
  std::string restart_policy;
  Status s = ForEachField(message, path, [&](const Field& c) -> Status {
    if (c.number == 24) return TakeString(c, FieldPath(path, ".restartPolicy"), &restart_policy);
    if (c.number != 8) return {};
    const FieldPath rpath(path, ".resources");
    std::string_view resources;
    if (Status r = TakeBytes(c, rpath, &resources); !r.ok()) return r;
    const FieldPath qpath(rpath, ".requests");
    return ForEachField(resources, rpath, [&](const Field& r) -> Status {
      if (r.number != 2) return {};
      return TakeQuantityEntry(r, qpath, false, &container.requests, content);
    });
  });
  container.restartable = restart_policy == "Always";
  out->push_back(std::move(container));
  return s;
}

// spec.schedulingGates[] {name = 1}, and our gate's first position.
Status ReadSchedulingGate(const Field& f, PodWorkloadText* workload) {
  const FieldPath path("spec.schedulingGates", workload->gates.size());
  std::string_view message;
  if (Status s = TakeBytes(f, path, &message); !s.ok()) return s;
  std::string name;
  Status s = ForEachField(message, path, [&](const Field& g) -> Status {
    if (g.number == 1) return TakeString(g, FieldPath(path, ".name"), &name);
    return {};
  });
  if (name == kQuotaGate && workload->quota_gate_index < 0) {
    workload->quota_gate_index = static_cast<int32_t>(workload->gates.size());
  }
  workload->gates.push_back(std::move(name));
  return s;
}

// spec.workloadRef {name = 1, podGroup = 2, podGroupReplicaKey = 3} (1.35, see the file comment).
Status ReadWorkloadRef(const Field& f, PodWorkloadText* workload) {
  std::string_view message;
  if (Status s = TakeBytes(f, "spec.workloadRef", &message); !s.ok()) return s;
  return ForEachField(message, "spec.workloadRef", [&](const Field& w) -> Status {
    switch (w.number) {
      case 1:
        return TakeString(w, "spec.workloadRef.name", &workload->workload_name);
      case 2:
        return TakeString(w, "spec.workloadRef.podGroup", &workload->workload_pod_group);
      case 3:
        return TakeString(w, "spec.workloadRef.podGroupReplicaKey",
                          &workload->workload_replica_key);
      default:
        return {};
    }
  });
}

// spec.resourceClaims[] {name = 1, resourceClaimName = 3, resourceClaimTemplateName = 4}.
Status ReadResourceClaim(const Field& f, std::vector<PodClaimRef>* out) {
  const FieldPath path("spec.resourceClaims", out->size());
  std::string_view message;
  if (Status s = TakeBytes(f, path, &message); !s.ok()) return s;
  PodClaimRef ref;
  Status s = ForEachField(message, path, [&](const Field& c) -> Status {
    switch (c.number) {
      case 1:
        return TakeString(c, FieldPath(path, ".name"), &ref.name);
      case 3:
        return TakeString(c, FieldPath(path, ".resourceClaimName"), &ref.claim_name);
      case 4:
        return TakeString(c, FieldPath(path, ".resourceClaimTemplateName"), &ref.template_name);
      default:
        return {};
    }
  });
  out->push_back(std::move(ref));
  return s;
}

Status ReadSpec(std::string_view message, PodParts* p) {
  return ForEachField(message, "spec", [&](const Field& f) -> Status {
    switch (f.number) {
      case kSpecContainers:
        return ReadContainer(f, "spec.containers", &p->containers, &p->containers_content);
      case kSpecInitContainers:
        return ReadContainer(f, "spec.initContainers", &p->init_containers, &p->init_content);
      case kSpecNodeSelector:
        return TakeStringMapEntry(f, "spec.nodeSelector", &p->node_selector);
      case kSpecNodeName:
        return TakeString(f, "spec.nodeName", &p->node_name);
      case kSpecAffinity:
        return ReadAffinity(f, &p->affinity);
      case kSpecSchedulerName:
        return TakeString(f, "spec.schedulerName", &p->scheduler_name);
      case kSpecTolerations:
        return ReadToleration(f, &p->tolerations);
      case kSpecPriorityClassName:
        return TakeString(f, "spec.priorityClassName", &p->priority_class_name);
      case kSpecPriority: {
        int32_t value = 0;
        if (Status s = TakeInt32(f, "spec.priority", &value); !s.ok()) return s;
        p->priority = value;
        return {};
      }
      case kSpecPreemptionPolicy:
        return TakeString(f, "spec.preemptionPolicy", &p->preemption_text);
      case kSpecOverhead:
        return TakeQuantityEntry(f, "spec.overhead", false, &p->overhead, &p->overhead_content);
      case kSpecSchedulingGates:
        return ReadSchedulingGate(f, &p->workload);
      case kSpecResourceClaims:
        return ReadResourceClaim(f, &p->claims);
      case kSpecWorkloadRef:
        return ReadWorkloadRef(f, &p->workload);
      default:
        return {};
    }
  });
}

// status.conditions[] {type = 1, status = 2, reason = 5}: PodScheduled=False Unschedulable.
Status ReadCondition(const Field& f, size_t index, bool* unschedulable) {
  const FieldPath path("status.conditions", index);
  std::string_view message;
  if (Status s = TakeBytes(f, path, &message); !s.ok()) return s;
  std::string type, status, reason;
  Status s = ForEachField(message, path, [&](const Field& c) -> Status {
    switch (c.number) {
      case 1:
        return TakeString(c, FieldPath(path, ".type"), &type);
      case 2:
        return TakeString(c, FieldPath(path, ".status"), &status);
      case 5:
        return TakeString(c, FieldPath(path, ".reason"), &reason);
      default:
        return {};
    }
  });
  if (s.ok() && type == "PodScheduled" && status == "False" && reason == "Unschedulable") {
    *unschedulable = true;
  }
  return s;
}

// status.resourceClaimStatuses[] {name = 1, resourceClaimName = 2}.
Status ReadClaimStatus(const Field& f, PodParts* p) {
  const FieldPath path("status.resourceClaimStatuses", p->claim_statuses.size());
  std::string_view message;
  if (Status s = TakeBytes(f, path, &message); !s.ok()) return s;
  std::string name, claim;
  Status s = ForEachField(message, path, [&](const Field& c) -> Status {
    if (c.number == 1) return TakeString(c, FieldPath(path, ".name"), &name);
    if (c.number == 2) return TakeString(c, FieldPath(path, ".resourceClaimName"), &claim);
    return {};
  });
  p->claim_statuses.emplace_back(std::move(name), std::move(claim));
  return s;
}

Status ReadStatus(std::string_view message, PodParts* p) {
  size_t conditions = 0;
  return ForEachField(message, "status", [&](const Field& f) -> Status {
    switch (f.number) {
      case kStatusPhase:
        return TakeString(f, "status.phase", &p->phase);
      case kStatusConditions:
        return ReadCondition(f, conditions++, &p->unschedulable);
      case kStatusStartTime:
        return TakeTime(f, "status.startTime", &p->start_ms, &p->start_content);
      case kStatusNominatedNodeName:
        return TakeString(f, "status.nominatedNodeName", &p->nominated);
      case kStatusResourceClaimStatuses:
        return ReadClaimStatus(f, p);
      default:
        return {};
    }
  });
}

// The content errors in the JSON path's order of checks, and the preemption policy.
Status ContentVerdict(const PodParts& p, std::optional<PreemptionPolicy>* policy) {
  Status out = p.creation_content;
  KeepFirst(&out, p.deletion_content);
  if (out.ok()) out = ParsePreemptionPolicy(p.preemption_text, policy);
  for (const Status* s :
       {&p.containers_content, &p.init_content, &p.overhead_content, &p.start_content}) {
    KeepFirst(&out, *s);
  }
  return out;
}

}  // namespace

Status DecodePodProtobuf(std::string_view message, const DecodeOptions& options, Pod* out) {
  PodParts parts;
  Status wire = ForEachField(message, "Pod", [&](const Field& f) -> Status {
    std::string_view body;
    switch (f.number) {
      case 1:
        if (Status s = TakeBytes(f, "metadata", &body); !s.ok()) return s;
        parts.meta_present = true;
        return ReadMetadata(body, options, &parts);
      case 2:
        if (Status s = TakeBytes(f, "spec", &body); !s.ok()) return s;
        return ReadSpec(body, &parts);
      case 3:
        if (Status s = TakeBytes(f, "status", &body); !s.ok()) return s;
        return ReadStatus(body, &parts);
      default:
        return {};
    }
  });
  if (!wire.ok()) return wire;
  if (!parts.meta_present) return Status::Error("metadata: missing");
  if (Status content = ContentVerdict(parts, &parts.preemption_policy); !content.ok()) {
    return content;
  }
  parts.accelerator_model = std::move(parts.model.value);
  parts.reclaim_record = std::move(parts.record.value);
  parts.workload.min_member = std::move(parts.min_member.value);
  parts.workload.admitted_at = std::move(parts.admitted.value);
  for (const auto& [name, claim] : parts.claim_statuses)
    JoinPodClaimStatus(name, claim, &parts.claims);
  *out = BuildPodRecord(std::move(static_cast<PodRecordParts&>(parts)));
  return {};
}

}  // namespace capext
