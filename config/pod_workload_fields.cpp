#include "config/pod_workload_fields.h"

#include <charconv>
#include <utility>

#include <fmt/format.h>

#include "config/json_fields.h"

namespace capext {
namespace {

// A positive decimal int32 ("3"), else 0.
int32_t PositiveInt(const std::string& text) {
  int32_t value = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  return ec == std::errc() && ptr == end && value > 0 ? value : 0;
}

}  // namespace

void ApplyWorkloadFields(const PodWorkloadText& text, Pod* pod) {
  // docs/workloads.md#membership: the coscheduling label first, else spec.workloadRef.
  GroupRef group;
  if (auto it = pod->labels.find(kPodGroupLabel);
      it != pod->labels.end() && !std::string_view((*it).second).empty()) {
    group.api_group = kCoschedulingApiGroup;
    group.name = std::string((*it).second);
  } else if (!text.workload_name.empty()) {
    group.api_group = kWorkloadApiGroup;
    group.name = text.workload_name;
    group.pod_group = text.workload_pod_group;
    group.replica_key = text.workload_replica_key;
  }
  pod->group = std::move(group);
  pod->min_member_annotation = PositiveInt(text.min_member);
  pod->admitted_ms = 0;
  if (!text.admitted_at.empty() && !json::ParseRfc3339(text.admitted_at, &pod->admitted_ms))
    pod->admitted_ms = 0;
  pod->quota_gated = false;
  pod->other_gates = false;
  for (const auto& gate : text.gates) {
    if (gate == kQuotaGate) {
      pod->quota_gated = true;
    } else {
      pod->other_gates = true;
    }
  }
  pod->has_controller = text.has_controller;
  pod->patch_basis.quota_gate_index = text.quota_gate_index;
}

using json::Member;

#define CE_RETURN_IF_ERROR(expr)  \
  do {                            \
    ::capext::Status _s = (expr); \
    if (!_s.ok()) return _s;      \
  } while (0)

// metadata.ownerReferences: whether one has controller: true (non-objects are skipped).
Status ReadOwnerReferences(const rapidjson::Value& meta, bool* has_controller) {
  const rapidjson::Value* list = Member(meta, "ownerReferences");
  if (list == nullptr) return {};
  CE_RETURN_IF_ERROR(json::ExpectArray(*list, "metadata.ownerReferences"));
  for (rapidjson::SizeType i = 0; i < list->Size(); ++i) {
    if (!(*list)[i].IsObject()) continue;
    bool controller = false;
    CE_RETURN_IF_ERROR(json::ReadBool((*list)[i], "controller",
                                      fmt::format("metadata.ownerReferences[{}].controller", i),
                                      &controller));
    if (controller) *has_controller = true;
  }
  return {};
}

// spec.schedulingGates[].name (non-objects are skipped) and our gate's position.
Status ReadSchedulingGates(const rapidjson::Value& spec, PodWorkloadText* out) {
  const rapidjson::Value* list = Member(spec, "schedulingGates");
  if (list == nullptr) return {};
  CE_RETURN_IF_ERROR(json::ExpectArray(*list, "spec.schedulingGates"));
  for (rapidjson::SizeType i = 0; i < list->Size(); ++i) {
    if (!(*list)[i].IsObject()) continue;
    std::string name;
    CE_RETURN_IF_ERROR(json::ReadString((*list)[i], "name",
                                        fmt::format("spec.schedulingGates[{}].name", i), &name));
    if (name == kQuotaGate && out->quota_gate_index < 0)
      out->quota_gate_index = static_cast<int32_t>(i);
    out->gates.push_back(std::move(name));
  }
  return {};
}

// spec.workloadRef {name, podGroup, podGroupReplicaKey} (the Workload API, 1.35).
Status ReadWorkloadRef(const rapidjson::Value& spec, PodWorkloadText* out) {
  const rapidjson::Value* ref = Member(spec, "workloadRef");
  if (ref == nullptr) return {};
  CE_RETURN_IF_ERROR(json::ExpectObject(*ref, "spec.workloadRef"));
  CE_RETURN_IF_ERROR(json::ReadString(*ref, "name", "spec.workloadRef.name", &out->workload_name));
  CE_RETURN_IF_ERROR(
      json::ReadString(*ref, "podGroup", "spec.workloadRef.podGroup", &out->workload_pod_group));
  CE_RETURN_IF_ERROR(json::ReadString(*ref, "podGroupReplicaKey",
                                      "spec.workloadRef.podGroupReplicaKey",
                                      &out->workload_replica_key));
  return {};
}

}  // namespace capext
