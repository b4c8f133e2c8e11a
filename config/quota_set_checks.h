// Checks across a set of ElasticQuotas that do not involve the hierarchy (see
// quota_hierarchy_check.h for those).
// Thread-safety: stateless.
#pragma once

#include <string>
#include <vector>

#include "config/quota_set_problem.h"
#include "core/elastic_quota.h"

namespace capext {

// One ElasticQuota per namespace (docs/capacity-semantics.md#1-words): every quota after the first
// in a namespace is a problem, reported on it with `other` = the first. Quotas with the same
// namespace AND name are the same object and are not compared here.
std::vector<QuotaSetProblem> CheckOneQuotaPerNamespace(const std::vector<ElasticQuota>& quotas);

struct MinsAboveAllocatable {
  std::string resource;
  std::string message;  // both numbers: the guarantees cannot all be met at once
};

// Each resource whose sum of mins over `quotas` is larger than the cluster's allocatable of it
// (absent = 0), in resource name order.
std::vector<MinsAboveAllocatable> CheckMinsFitAllocatable(const std::vector<ElasticQuota>& quotas,
                                                          const ResourceList& allocatable);

}  // namespace capext
