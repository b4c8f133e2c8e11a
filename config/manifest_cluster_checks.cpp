#include "config/manifest_cluster_checks.h"

#include <map>
#include <set>

#include <fmt/format.h>

#include "config/quota_set_checks.h"

namespace capext {
namespace {

void CheckNodes(const std::vector<QuotaSetMember>& quotas, const ClusterInputs& cluster,
                ValidateReport* report) {
  ResourceList total;
  for (const auto& node : cluster.nodes)
    total.Add(node.allocatable);
  for (const auto& member : quotas) {
    if (member.located == nullptr || !member.quota.min) continue;
    for (const auto& [resource, amount] : member.quota.min->entries()) {
      if (amount <= 0 || total.Get(resource) > 0) continue;
      const std::string field = fmt::format("spec.min.{}", resource);
      report->entries.push_back(
          {Severity::kWarning, member.located->checked.LineOf(field), field,
           fmt::format("no node has allocatable {}: this guarantee can never be met", resource),
           member.located->file, DescribeQuota(member.quota)});
    }
  }
  std::vector<ElasticQuota> all;
  for (const auto& member : quotas)
    all.push_back(member.quota);
  for (auto& [resource, message] : CheckMinsFitAllocatable(all, total)) {
    report->entries.push_back({cluster.from_snapshot ? Severity::kError : Severity::kWarning, 0,
                               "spec.min." + resource, std::move(message), cluster.nodes_file,
                               "ElasticQuotas"});
  }
}

// Under scheduler-plugins semantics a resource no quota names in min has a cluster-wide min of
// 0, so every pod of a quota namespace that requests it fails the aggregated check.
void CheckPodRequests(const std::vector<QuotaSetMember>& quotas, const ClusterInputs& cluster,
                      ValidateReport* report) {
  std::set<std::string> namespaces;
  std::set<ResourceName> named_in_min;
  for (const auto& member : quotas) {
    namespaces.insert(member.quota.ns);
    if (!member.quota.min) continue;
    for (const auto& entry : member.quota.min->entries())
      named_in_min.insert(entry.first);
  }
  std::map<ResourceName, const LocatedPod*> first_requester;
  for (const auto& located : cluster.pods) {
    const Pod& pod = located.pod;
    if (pod.IsTerminal() || !namespaces.contains(pod.ns)) continue;
    for (const auto& [resource, amount] : pod.requests.entries()) {
      if (amount > 0 && resource != kPodsName && !named_in_min.contains(resource)) {
        first_requester.emplace(resource, &located);
      }
    }
  }
  for (const auto& [resource, located] : first_requester) {
    report->entries.push_back(
        {Severity::kWarning, located->line, "",
         fmt::format("requests {}, which no ElasticQuota names in min: under scheduler-plugins "
                     "semantics the cluster-wide min {} is 0 and such pods of quota namespaces "
                     "are rejected; under capacity-extender semantics {} is not checked "
                     "cluster-wide",
                     resource, resource, resource),
         located->file, fmt::format("Pod {}", located->pod.Key())});
  }
}

}  // namespace

void CheckQuotasAgainstCluster(const std::vector<QuotaSetMember>& quotas,
                               const ClusterInputs& cluster, ValidateReport* report) {
  if (!cluster.nodes.empty()) CheckNodes(quotas, cluster, report);
  CheckPodRequests(quotas, cluster, report);
}

}  // namespace capext
