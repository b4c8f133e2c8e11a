#include "config/pod_workload_fields.h"

#include <charconv>

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
  pod->group = GroupRef{};
  // docs/workloads.md, "Membership": the coscheduling label first, else spec.workloadRef.
  if (auto it = pod->labels.find(kPodGroupLabel);
      it != pod->labels.end() && !std::string_view((*it).second).empty()) {
    pod->group.api_group = kCoschedulingApiGroup;
    pod->group.name = std::string((*it).second);
  } else if (!text.workload_name.empty()) {
    pod->group.api_group = kWorkloadApiGroup;
    pod->group.name = text.workload_name;
    pod->group.pod_group = text.workload_pod_group;
    pod->group.replica_key = text.workload_replica_key;
  }
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
}

}  // namespace capext
