// The quota plan of a simulation (`--quotas FILE`): per tenant (namespace) a min, a max,
// optionally the priority of its pods and a parent. A small YAML map:
//
//   ls:                                   # tenant = namespace
//     min: {cpu: 300, memory: 1200Gi, nvidia.com/gpu: 30}
//     max: {cpu: 600, memory: 2400Gi, nvidia.com/gpu: 60}
//     priority: 1000                      # optional: pods without their own priority get it
//     parent: online                      # optional: another tenant of the plan
//     weight: 2                           # optional: the fair-share weight (default 1)
//
// Amounts are Kubernetes quantities (strings or numbers). `min` and `max` are each optional, as
// in an ElasticQuota. A parent makes the tenant's ElasticQuota a child of the parent's
// (docs/quota-hierarchy.md); a parent may be a pure grouping entry that no pod belongs to. The
// plan's hierarchy gets the checks `capacity-extender validate` runs (quota_hierarchy_check.h):
// a missing parent, a cycle or children's mins above their parent's min are errors; a child's
// max above its parent's max is a warning (QuotaPlan::warnings). The policy decides how the plan
// is enforced (the simulator profiles of policies/policies.h).
// Thread-safety: value types and stateless functions.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/elastic_quota.h"
#include "core/status.h"

namespace capext {

struct TenantQuota {
  std::optional<ResourceList> min;
  std::optional<ResourceList> max;
  std::optional<int32_t> priority;
  std::string parent = {};  // the parent tenant, "" for a root
  // The fair-share weight in thousandths (docs/fair-sharing.md#1-weights).
  int64_t weight_milli = 1000;
};

struct QuotaPlan {
  std::map<std::string, TenantQuota> tenants;  // by namespace
  std::vector<std::string> warnings;           // "source: tenant.field: message"
  // True when some tenant names a parent.
  bool HasHierarchy() const;
};

// `source` names the input in errors ("alibaba-quotas.yaml: ls.max.cpu: ..."). Checks the
// hierarchy (CheckQuotaPlanHierarchy).
Status ParseQuotaPlan(const std::string& text, const std::string& source, QuotaPlan* out);
Status LoadQuotaPlanFile(const std::string& path, QuotaPlan* out);

// The hierarchy checks of `plan`: the first error (all of them, joined with "; ") as the status,
// warnings appended to plan->warnings. Messages name the plan's ElasticQuotas (tenant/tenant).
Status CheckQuotaPlanHierarchy(const std::string& source, QuotaPlan* plan);

// The ElasticQuota of `tenant` (named after it, in namespace `tenant`; a parent tenant p becomes
// the annotation "p/p"). With `max_equals_min`, max is replaced by a copy of min (no borrowing;
// an absent min gives max 0 for every resource the plan's max names).
ElasticQuota ElasticQuotaFor(const std::string& tenant, const TenantQuota& quota,
                             bool max_equals_min);

}  // namespace capext
