// Test support for workloads (docs/workloads.md): pods of a group, gated, admitted, with a
// controller, built on tests/support/builders.h's PodBuilder.
#pragma once

#include <string>

#include "core/pod.h"
#include "core/pod_group.h"
#include "tests/support/builders.h"

namespace capext::testing {

// A member of the coscheduling group `group` of its namespace.
inline Pod Member(Pod pod, const std::string& group, int32_t min_member_annotation = 0) {
  pod.group = GroupRef{kCoschedulingApiGroup, group, "", ""};
  pod.min_member_annotation = min_member_annotation;
  pod.has_controller = true;
  return pod;
}

inline Pod Gated(Pod pod) {
  pod.quota_gated = true;
  return pod;
}

inline Pod AdmittedAt(Pod pod, int64_t ms) {
  pod.quota_gated = false;
  pod.admitted_ms = ms;
  return pod;
}

inline GroupKey CoschedulingKey(const std::string& ns, const std::string& name) {
  return GroupKey{kCoschedulingApiGroup, ns, name};
}

inline PodGroupSpec PodGroupOf(const std::string& ns, const std::string& name, int32_t min_member,
                               int64_t timeout_ms = 0) {
  return PodGroupSpec{CoschedulingKey(ns, name), min_member, timeout_ms};
}

}  // namespace capext::testing
