// QuotaSet: the ElasticQuota objects of the cluster state, one per namespace (capacity-semantics
// 0: a second quota in a namespace is recorded as a duplicate and not used; when the quota in
// use goes, the oldest duplicate takes over).
// Thread-safety: none; ClusterState serialises writers and readers.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/elastic_quota.h"

namespace capext {

class QuotaSet {
 public:
  // Adds or replaces the quota of quota.ns. A second quota in a namespace that already has one
  // (a different name) is not used: it is recorded in duplicates() and false is returned.
  bool Upsert(const ElasticQuota& quota);
  // Removes the quota; if a duplicate waited for that namespace, the oldest one takes over.
  // Returns true when the quota in use for the namespace changed.
  bool Delete(std::string_view ns, std::string_view name);

  // The quota governing `ns`, or nullptr.
  const ElasticQuota* QuotaFor(std::string_view ns) const {
    auto it = quotas_.find(ns);
    return it == quotas_.end() ? nullptr : &it->second;
  }
  // The quotas in use, by namespace.
  const std::map<std::string, ElasticQuota, std::less<>>& quotas() const { return quotas_; }
  const std::vector<ElasticQuota>& duplicates() const { return duplicates_; }

 private:
  std::map<std::string, ElasticQuota, std::less<>> quotas_;  // by namespace
  std::vector<ElasticQuota> duplicates_;
};

}  // namespace capext
