#include "config/quota_set_checks.h"

#include <map>

#include <fmt/format.h>

namespace capext {

std::vector<QuotaSetProblem> CheckOneQuotaPerNamespace(const std::vector<ElasticQuota>& quotas) {
  std::vector<QuotaSetProblem> problems;
  std::map<std::string, std::size_t> first_in_namespace;
  for (std::size_t i = 0; i < quotas.size(); ++i) {
    auto [it, inserted] = first_in_namespace.emplace(quotas[i].ns, i);
    if (inserted || quotas[it->second].name == quotas[i].name) continue;
    const ElasticQuota& first = quotas[it->second];
    problems.push_back(
        {i, it->second, "metadata.namespace",
         fmt::format("namespace {} already has ElasticQuota {}: one ElasticQuota per namespace "
                     "(the extender would use only one of them)",
                     quotas[i].ns, first.Key())});
  }
  return problems;
}

std::vector<MinsAboveAllocatable> CheckMinsFitAllocatable(const std::vector<ElasticQuota>& quotas,
                                                          const ResourceList& allocatable) {
  ResourceList mins;
  for (const auto& q : quotas) {
    if (q.min) mins.Add(*q.min);
  }
  std::vector<MinsAboveAllocatable> messages;
  for (const auto& [resource, sum] : mins.entries()) {
    const int64_t available = allocatable.Get(resource);
    if (sum <= available) continue;
    messages.push_back(
        {std::string(resource.str()),
         fmt::format(
             "the ElasticQuotas' min {} sums to {}, more than the cluster's allocatable {}: the "
             "guarantees cannot all be met at once",
             resource, FormatAmount(resource, sum), FormatAmount(resource, available))});
  }
  return messages;
}

}  // namespace capext
