#include "config/object_stream_decoder.h"

#include <array>
#include <optional>
#include <vector>

#include "config/json_fields.h"
#include "config/object_stream_parts.h"
#include "config/pod_record_parts.h"
#include "config/pod_workload_fields.h"

namespace capext {
namespace {

using namespace stream_decoding;  // NOLINT: the decoder's own toolkit

struct PodMetadata {
  bool present = false;
  std::string ns, name, uid, resource_version;
  bool has_annotations = false;
  int64_t creation_ms = 0, deletion_ms = 0;
  Labels labels;
  std::string accelerator_model, reclaim_record;
  PodWorkloadText workload;
  MemberSlot ns_slot, name_slot, uid_slot, creation_slot, labels_slot, deletion_slot,
      annotations_slot, owners_slot, version_slot;
  Status object_status;
  Status Verdict() const {
    Status s = object_status;
    for (const MemberSlot* slot :
         {&ns_slot, &name_slot, &uid_slot, &creation_slot, &labels_slot, &deletion_slot,
          &annotations_slot, &owners_slot, &version_slot}) {
      KeepFirst(&s, slot->status);
    }
    return s;
  }
};

// metadata.ownerReferences: whether one has controller: true (non-objects are skipped).
Status ReadOwnerReferences(JsonPullReader& r, bool* has_controller) {
  if (r.token() == Token::kNull) return {};
  if (r.token() != Token::kStartArray) {
    return json::WrongTypeSkip(r, "metadata.ownerReferences", "array");
  }
  Status first;
  ForEachElement(r, [&](size_t i) {
    if (r.token() != Token::kStartObject) return r.SkipValue();
    const json::FieldPath path("metadata.ownerReferences", i);
    MemberSlot slot;
    bool controller = false;
    ForEachMember(r, [&](std::string_view key) {
      if (!slot.Take(key, "controller")) return r.SkipValue();
      controller = false;
      slot.Keep(json::PullBool(r, json::FieldPath(path, ".controller"), &controller));
      return true;
    });
    KeepFirst(&first, slot.status);
    if (slot.status.ok() && controller) *has_controller = true;
    return true;
  });
  return first;
}

// spec.schedulingGates[].name (non-objects are skipped) and our gate's position.
Status ReadSchedulingGates(JsonPullReader& r, std::vector<std::string>* gates,
                           int32_t* quota_index) {
  if (r.token() == Token::kNull) return {};
  if (r.token() != Token::kStartArray) {
    return json::WrongTypeSkip(r, "spec.schedulingGates", "array");
  }
  Status first;
  ForEachElement(r, [&](size_t i) {
    if (r.token() != Token::kStartObject) return r.SkipValue();
    const json::FieldPath path("spec.schedulingGates", i);
    MemberSlot slot;
    std::string name;
    ForEachMember(r, [&](std::string_view key) {
      if (!slot.Take(key, "name")) return r.SkipValue();
      name.clear();
      slot.Keep(json::PullString(r, json::FieldPath(path, ".name"), &name));
      return true;
    });
    KeepFirst(&first, slot.status);
    if (name == kQuotaGate && *quota_index < 0) *quota_index = static_cast<int32_t>(i);
    gates->push_back(std::move(name));
    return true;
  });
  return first;
}

// spec.workloadRef {name, podGroup, podGroupReplicaKey}.
Status ReadWorkloadRef(JsonPullReader& r, PodWorkloadText* out) {
  bool present = false;
  Status object = ObjectOrAbsent(r, "spec.workloadRef", &present);
  if (!present) return object;
  static constexpr std::array<std::string_view, 3> kNames = {"name", "podGroup",
                                                             "podGroupReplicaKey"};
  return json::PullStringFields<3>(
      r, "spec.workloadRef", kNames,
      {&out->workload_name, &out->workload_pod_group, &out->workload_replica_key});
}

bool ReadPodMetadata(JsonPullReader& r, const DecodeOptions& options, PodMetadata* m) {
  *m = PodMetadata{};
  m->object_status = ObjectOrAbsent(r, "metadata", &m->present);
  if (!m->present) return true;
  return ForEachMember(r, [&](std::string_view key) {
    if (m->ns_slot.Take(key, "namespace")) {
      m->ns.clear();
      m->ns_slot.Keep(json::PullString(r, "metadata.namespace", &m->ns));
      return true;
    }
    if (m->name_slot.Take(key, "name")) {
      m->name.clear();
      m->name_slot.Keep(json::PullString(r, "metadata.name", &m->name));
      return true;
    }
    if (m->uid_slot.Take(key, "uid")) {
      m->uid.clear();
      m->uid_slot.Keep(json::PullString(r, "metadata.uid", &m->uid));
      return true;
    }
    if (m->version_slot.Take(key, "resourceVersion")) {
      m->resource_version.clear();
      m->version_slot.Keep(json::PullString(r, "metadata.resourceVersion", &m->resource_version));
      return true;
    }
    if (m->creation_slot.Take(key, "creationTimestamp")) {
      m->creation_ms = 0;
      m->creation_slot.Keep(json::PullTime(r, "metadata.creationTimestamp", &m->creation_ms));
      return true;
    }
    if (m->labels_slot.Take(key, "labels")) {
      m->labels = Labels{};
      m->labels_slot.Keep(json::PullStringMap(r, "metadata.labels", &m->labels));
      return true;
    }
    if (m->deletion_slot.Take(key, "deletionTimestamp")) {
      m->deletion_ms = 0;
      m->deletion_slot.Keep(json::PullTime(r, "metadata.deletionTimestamp", &m->deletion_ms));
      return true;
    }
    if (m->annotations_slot.Take(key, "annotations")) {
      m->accelerator_model.clear();
      m->reclaim_record.clear();
      m->workload.min_member.clear();
      m->workload.admitted_at.clear();
      bool present = false;
      m->annotations_slot.Keep(ObjectOrAbsent(r, "metadata.annotations", &present));
      m->has_annotations = present;
      if (!present) return true;
      MemberSlot model_slot, record_slot, min_slot, admitted_slot;
      bool ok = ForEachMember(r, [&](std::string_view annotation) {
        // One value may match several names (case-insensitively): read it into each.
        std::string value;
        Status value_status;
        bool read = false;
        auto take = [&](MemberSlot& slot, std::string_view name, std::string* out) {
          if (name.empty() || !slot.Take(annotation, name)) return;
          if (!read) {
            read = true;
            value_status = json::PullString(r, "metadata.annotations", &value);
          }
          out->clear();
          KeepFirst(&slot.status, value_status);
          if (value_status.ok()) *out = value;
        };
        take(model_slot, options.accelerator_model_annotation, &m->accelerator_model);
        take(record_slot, kReclaimRecordAnnotation, &m->reclaim_record);
        take(min_slot, kMinMemberAnnotation, &m->workload.min_member);
        take(admitted_slot, kAdmittedAtAnnotation, &m->workload.admitted_at);
        return read || r.SkipValue();
      });
      KeepFirst(&m->annotations_slot.status, model_slot.status);
      KeepFirst(&m->annotations_slot.status, record_slot.status);
      KeepFirst(&m->annotations_slot.status, min_slot.status);
      KeepFirst(&m->annotations_slot.status, admitted_slot.status);
      return ok;
    }
    if (m->owners_slot.Take(key, "ownerReferences")) {
      m->workload.has_controller = false;
      m->owners_slot.Keep(ReadOwnerReferences(r, &m->workload.has_controller));
      return true;
    }
    return r.SkipValue();
  });
}

struct PodSpec {
  bool present = false;
  std::string node_name, scheduler_name, priority_class_name, preemption_text;
  std::optional<int32_t> priority;
  Labels node_selector;
  std::vector<Toleration> tolerations;
  std::vector<NodeSelectorTerm> affinity;
  std::vector<ContainerRequests> containers, init_containers;
  std::optional<ResourceList> overhead;
  bool names_claims = false;  // spec.resourceClaims is present: decoded by the DOM path
  std::vector<std::string> gates;
  int32_t quota_gate_index = -1;
  PodWorkloadText workload_ref;
  Status object_status;
  // In the DOM path's order of checks.
  MemberSlot node_name_slot, scheduler_slot, priority_slot, class_slot, preemption_slot,
      selector_slot, tolerations_slot, affinity_slot, containers_slot, init_slot, overhead_slot,
      gates_slot, workload_slot;
};

bool ReadPodSpec(JsonPullReader& r, PodSpec* spec) {
  *spec = PodSpec{};
  spec->object_status = ObjectOrAbsent(r, "spec", &spec->present);
  if (!spec->present) return true;
  return ForEachMember(r, [&](std::string_view key) {
    PodSpec& s = *spec;
    if (s.node_name_slot.Take(key, "nodeName")) {
      s.node_name.clear();
      s.node_name_slot.Keep(json::PullString(r, "spec.nodeName", &s.node_name));
      return true;
    }
    if (s.scheduler_slot.Take(key, "schedulerName")) {
      s.scheduler_name.clear();
      s.scheduler_slot.Keep(json::PullString(r, "spec.schedulerName", &s.scheduler_name));
      return true;
    }
    if (s.priority_slot.Take(key, "priority")) {
      s.priority.reset();
      s.priority_slot.Keep(json::PullInt32(r, "spec.priority", &s.priority));
      return true;
    }
    if (s.class_slot.Take(key, "priorityClassName")) {
      s.priority_class_name.clear();
      s.class_slot.Keep(json::PullString(r, "spec.priorityClassName", &s.priority_class_name));
      return true;
    }
    if (s.preemption_slot.Take(key, "preemptionPolicy")) {
      s.preemption_text.clear();
      s.preemption_slot.Keep(json::PullString(r, "spec.preemptionPolicy", &s.preemption_text));
      return true;
    }
    if (s.selector_slot.Take(key, "nodeSelector")) {
      s.node_selector = Labels{};
      s.selector_slot.Keep(json::PullStringMap(r, "spec.nodeSelector", &s.node_selector));
      return true;
    }
    if (s.tolerations_slot.Take(key, "tolerations")) {
      s.tolerations.clear();
      s.tolerations_slot.Keep(stream_decoding::ReadTolerations(r, &s.tolerations));
      return true;
    }
    if (s.affinity_slot.Take(key, "affinity")) {
      s.affinity.clear();
      s.affinity_slot.Keep(stream_decoding::ReadAffinity(r, &s.affinity));
      return true;
    }
    if (s.containers_slot.Take(key, "containers")) {
      s.containers.clear();
      s.containers_slot.Keep(stream_decoding::ReadContainers(r, "spec.containers", &s.containers));
      return true;
    }
    if (s.init_slot.Take(key, "initContainers")) {
      s.init_containers.clear();
      s.init_slot.Keep(
          stream_decoding::ReadContainers(r, "spec.initContainers", &s.init_containers));
      return true;
    }
    if (s.overhead_slot.Take(key, "overhead")) {
      s.overhead.reset();
      s.overhead_slot.Keep(json::PullResourceList(r, "spec.overhead", false, &s.overhead));
      return true;
    }
    if (json::EqualFold(key, "resourceClaims")) s.names_claims = true;
    if (s.gates_slot.Take(key, "schedulingGates")) {
      s.gates.clear();
      s.quota_gate_index = -1;
      s.gates_slot.Keep(ReadSchedulingGates(r, &s.gates, &s.quota_gate_index));
      return true;
    }
    if (s.workload_slot.Take(key, "workloadRef")) {
      s.workload_ref = PodWorkloadText{};
      s.workload_slot.Keep(ReadWorkloadRef(r, &s.workload_ref));
      return true;
    }
    return r.SkipValue();
  });
}

Status SpecVerdict(const PodSpec& s, std::optional<PreemptionPolicy>* policy) {
  Status out = s.object_status;
  for (const MemberSlot* slot :
       {&s.node_name_slot, &s.scheduler_slot, &s.priority_slot, &s.class_slot}) {
    KeepFirst(&out, slot->status);
  }
  KeepFirst(&out, s.preemption_slot.status);
  if (out.ok()) out = ParsePreemptionPolicy(s.preemption_text, policy);
  for (const MemberSlot* slot :
       {&s.selector_slot, &s.tolerations_slot, &s.affinity_slot, &s.containers_slot, &s.init_slot,
        &s.overhead_slot, &s.gates_slot, &s.workload_slot}) {
    KeepFirst(&out, slot->status);
  }
  return out;
}

struct PodStatusFields {
  bool present = false;
  std::string phase, nominated;
  int64_t start_ms = 0;
  bool unschedulable = false;
  bool names_claims = false;  // status.resourceClaimStatuses is present
  Status object_status;
  MemberSlot phase_slot, nominated_slot, start_slot, conditions_slot;
};

Status ReadConditions(JsonPullReader& r, bool* unschedulable) {
  if (r.token() == Token::kNull) return {};
  if (r.token() != Token::kStartArray) {
    return json::WrongTypeSkip(r, "status.conditions", "array");
  }
  Status first;
  ForEachElement(r, [&](size_t i) {
    if (r.token() != Token::kStartObject) return r.SkipValue();  // skipped, as the DOM path does
    const json::FieldPath path("status.conditions", i);
    std::string values[3];
    MemberSlot slots[3];
    static constexpr std::string_view kNames[3] = {"type", "status", "reason"};
    ForEachMember(r, [&](std::string_view key) {
      for (int f = 0; f < 3; ++f) {
        if (slots[f].Take(key, kNames[f])) {
          values[f].clear();
          slots[f].Keep(json::PullString(r, json::FieldPath(path, json::FieldPath(".", kNames[f])),
                                         &values[f]));
          return true;
        }
      }
      return r.SkipValue();
    });
    Status element;
    for (const auto& slot : slots)
      KeepFirst(&element, slot.status);
    KeepFirst(&first, element);
    if (element.ok() && values[0] == "PodScheduled" && values[1] == "False" &&
        values[2] == "Unschedulable") {
      *unschedulable = true;
    }
    return true;
  });
  return first;
}

bool ReadPodStatus(JsonPullReader& r, PodStatusFields* st) {
  *st = PodStatusFields{};
  st->object_status = ObjectOrAbsent(r, "status", &st->present);
  if (!st->present) return true;
  return ForEachMember(r, [&](std::string_view key) {
    if (st->phase_slot.Take(key, "phase")) {
      st->phase.clear();
      st->phase_slot.Keep(json::PullString(r, "status.phase", &st->phase));
      return true;
    }
    if (st->nominated_slot.Take(key, "nominatedNodeName")) {
      st->nominated.clear();
      st->nominated_slot.Keep(json::PullString(r, "status.nominatedNodeName", &st->nominated));
      return true;
    }
    if (st->start_slot.Take(key, "startTime")) {
      st->start_ms = 0;
      st->start_slot.Keep(json::PullTime(r, "status.startTime", &st->start_ms));
      return true;
    }
    if (st->conditions_slot.Take(key, "conditions")) {
      st->unschedulable = false;
      st->conditions_slot.Keep(ReadConditions(r, &st->unschedulable));
      return true;
    }
    if (json::EqualFold(key, "resourceClaimStatuses")) st->names_claims = true;
    return r.SkipValue();
  });
}

}  // namespace

Status DecodePodJson(std::string_view json, const DecodeOptions& options, Pod* out,
                     std::string* kind) {
  JsonPullReader r(json, /*may_reuse=*/true);  // a watch event's object: parsed already
  RootFields root;
  root.kind = "Pod";
  PodMetadata meta;
  PodSpec spec;
  PodStatusFields status;
  MemberSlot meta_slot, spec_slot, status_slot;
  Status s = ReadRoot(r, &root, [&](std::string_view key) {
    if (meta_slot.Take(key, "metadata")) return ReadPodMetadata(r, options, &meta);
    if (spec_slot.Take(key, "spec")) return ReadPodSpec(r, &spec);
    if (status_slot.Take(key, "status")) return ReadPodStatus(r, &status);
    return r.SkipValue();
  });
  *kind = root.kind;
  if (!s.ok()) return s;
  if (spec.names_claims || status.names_claims) {
    // A pod naming ResourceClaims (docs/devices.md) is rare: the DOM path decodes it, so that
    // pods without claims pay nothing for them and both paths agree by construction.
    rapidjson::Document doc;
    doc.Parse(json.data(), json.size());
    if (doc.HasParseError() || !doc.IsObject()) return Status::Error("invalid JSON");
    return DecodePod(doc, options, out);
  }
  if (!meta.present) {
    return meta.object_status.ok() ? Status::Error("metadata: missing") : meta.object_status;
  }
  if (Status m = meta.Verdict(); !m.ok()) return m;
  std::optional<PreemptionPolicy> policy;
  if (Status sp = SpecVerdict(spec, &policy); !sp.ok()) return sp;
  Status st = status.object_status;
  for (const MemberSlot* slot :
       {&status.phase_slot, &status.nominated_slot, &status.start_slot, &status.conditions_slot}) {
    KeepFirst(&st, slot->status);
  }
  if (!st.ok()) return st;

  PodRecordParts parts;
  parts.ns = std::move(meta.ns);
  parts.name = std::move(meta.name);
  parts.uid = std::move(meta.uid);
  parts.resource_version = std::move(meta.resource_version);
  parts.creation_ms = meta.creation_ms;
  parts.deletion_ms = meta.deletion_ms;
  parts.labels = std::move(meta.labels);
  parts.has_annotations = meta.has_annotations;
  parts.accelerator_model = std::move(meta.accelerator_model);
  parts.reclaim_record = std::move(meta.reclaim_record);
  parts.node_name = std::move(spec.node_name);
  parts.scheduler_name = std::move(spec.scheduler_name);
  parts.priority_class_name = std::move(spec.priority_class_name);
  parts.priority = spec.priority;
  parts.preemption_policy = policy;
  parts.node_selector = std::move(spec.node_selector);
  parts.tolerations = std::move(spec.tolerations);
  parts.affinity = std::move(spec.affinity);
  parts.containers = std::move(spec.containers);
  parts.init_containers = std::move(spec.init_containers);
  parts.overhead = std::move(spec.overhead).value_or(ResourceList{});
  parts.phase = std::move(status.phase);
  parts.nominated = std::move(status.nominated);
  parts.start_ms = status.start_ms;
  parts.unschedulable = status.unschedulable;
  parts.workload = std::move(meta.workload);
  parts.workload.gates = std::move(spec.gates);
  parts.workload.quota_gate_index = spec.quota_gate_index;
  parts.workload.workload_name = std::move(spec.workload_ref.workload_name);
  parts.workload.workload_pod_group = std::move(spec.workload_ref.workload_pod_group);
  parts.workload.workload_replica_key = std::move(spec.workload_ref.workload_replica_key);
  *out = BuildPodRecord(std::move(parts));
  return {};
}

}  // namespace capext
