// QuotaBook: the ElasticQuotas and the usage of every namespace (capacity-semantics 2).
// used(ns) = requests of the namespace's bound, non-terminal pods + its reservations. Usage is
// tracked for every namespace, with or without a quota, so a quota created later is right at once.
// ClusterState is the only writer; it keeps the book in step with pods and reservations.
// Thread-safety: none; callers serialise writers and readers (see ClusterState).
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/elastic_quota.h"
#include "core/quota_semantics.h"
#include "core/resource_list.h"

namespace capext {

class QuotaBook {
 public:
  explicit QuotaBook(QuotaSemantics semantics = QuotaSemantics::kCapacityExtender)
      : semantics_(semantics) {}

  QuotaSemantics semantics() const { return semantics_; }

  // Adds or replaces the quota of quota.ns. A second quota in a namespace that already has one
  // (a different name) is not used: it is recorded in duplicates() and false is returned.
  bool UpsertQuota(const ElasticQuota& quota);
  // Removes the quota; if a duplicate waited for that namespace, the oldest one takes over.
  void DeleteQuota(std::string_view ns, std::string_view name);

  // The quota governing `ns`, or nullptr.
  const ElasticQuota* QuotaFor(std::string_view ns) const;
  const std::map<std::string, ElasticQuota, std::less<>>& quotas() const { return quotas_; }
  const std::vector<ElasticQuota>& duplicates() const { return duplicates_; }

  // Usage changes. `quota_request` is QuotaRequestOf(pod).
  void AddBound(std::string_view ns, const ResourceList& quota_request);
  void RemoveBound(std::string_view ns, const ResourceList& quota_request);
  void AddReserved(std::string_view ns, const ResourceList& quota_request);
  void RemoveReserved(std::string_view ns, const ResourceList& quota_request);

  // bound + reserved.
  ResourceList Used(std::string_view ns) const;
  ResourceList Bound(std::string_view ns) const;
  ResourceList Reserved(std::string_view ns) const;

  // Cluster-wide sums for the aggregated-min check, kept up to date incrementally.
  const AggregateTotals& totals() const { return totals_; }

 private:
  struct Usage {
    ResourceList bound;
    ResourceList reserved;
  };
  void ChangeUsage(std::string_view ns, const ResourceList& delta, bool reserved);
  void RebuildTotals();

  QuotaSemantics semantics_;
  std::map<std::string, ElasticQuota, std::less<>> quotas_;  // by namespace
  std::vector<ElasticQuota> duplicates_;
  std::map<std::string, Usage, std::less<>> usage_;  // by namespace
  AggregateTotals totals_;
};

}  // namespace capext
