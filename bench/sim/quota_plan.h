// The quota plan of a simulation (`--quotas FILE`): per tenant (namespace) a min, a max and
// optionally the priority of its pods. A small YAML map:
//
//   ls:                                   # tenant = namespace
//     min: {cpu: 300, memory: 1200Gi, nvidia.com/gpu: 30}
//     max: {cpu: 600, memory: 2400Gi, nvidia.com/gpu: 60}
//     priority: 1000                      # optional: pods without their own priority get it
//
// Amounts are Kubernetes quantities (strings or numbers). `min` and `max` are each optional, as
// in an ElasticQuota. The policy decides how the plan is enforced (sim_policy.h).
// Thread-safety: value types and stateless functions.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "core/elastic_quota.h"
#include "core/status.h"

namespace capext {

struct TenantQuota {
  std::optional<ResourceList> min;
  std::optional<ResourceList> max;
  std::optional<int32_t> priority;
};

struct QuotaPlan {
  std::map<std::string, TenantQuota> tenants;  // by namespace
};

// `source` names the input in errors ("alibaba-quotas.yaml: ls.max.cpu: ...").
Status ParseQuotaPlan(const std::string& text, const std::string& source, QuotaPlan* out);
Status LoadQuotaPlanFile(const std::string& path, QuotaPlan* out);

// The ElasticQuota of `tenant` (named after it, in namespace `tenant`). With
// `max_equals_min`, max is replaced by a copy of min (no borrowing; an absent min gives max 0
// for every resource the plan's max names).
ElasticQuota ElasticQuotaFor(const std::string& tenant, const TenantQuota& quota, bool max_equals_min);

}  // namespace capext
