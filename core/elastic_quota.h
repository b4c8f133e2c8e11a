// ElasticQuota (scheduling.x-k8s.io/v1alpha1, also read as scheduling.sigs.k8s.io/v1alpha1).
// One per namespace: metadata.namespace is the namespace it governs.
// Thread-safety: a value type.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "core/resource_list.h"

namespace capext {

// The annotation naming a parent quota ("<namespace>/<name>"), docs/quota-hierarchy.md#the-tree.
inline constexpr const char* kParentQuotaAnnotation = "scheduling.capacity-extender.io/parent";

struct ElasticQuota {
  std::string ns;
  std::string name;
  std::string uid;
  std::string api_group;  // scheduling.x-k8s.io or scheduling.sigs.k8s.io
  // spec.min / spec.max; nullopt when the field is absent (the reference treats an absent list
  // differently from a present list that omits a resource).
  std::optional<ResourceList> min;
  std::optional<ResourceList> max;
  std::string parent;  // kParentQuotaAnnotation's value, empty for a root quota
  // The fair-share weight in thousandths (core/fair_share_weight.h,
  // docs/fair-sharing.md#1-weights): 1000 when the annotation is absent or invalid; weight_problem
  // says why when invalid.
  int64_t weight_milli = 1000;
  std::string weight_problem;
  // status.used as last written to the API server (by us or anyone), to decide whether it needs
  // writing again; nullopt when absent.
  std::optional<ResourceList> status_used;
  int64_t creation_ms = 0;
  std::string resource_version;

  std::string Key() const { return ns + "/" + name; }
};

}  // namespace capext
