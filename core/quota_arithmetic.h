// QuotaArithmetic: the quota-arithmetic extension point (docs/architecture.md#extension-points).
// A plugin says what a pod adds to its quota (its quota request), which resources a quota governs,
// and when "used + add" exceeds a quota's max, its min, or the sum of mins over the roots
// (docs/capacity-semantics.md#2-which-resources-a-quota-governs-two-semantics). Every decision of
// core/ asks the plugin its profile chose, through a QuotaSemantics handle (quota_semantics.h);
// the plugins are registered by name in policies/ (docs/architecture.md#registry-and-profiles).
// "x exceeds L" = any single compared dimension is strictly greater.
// Contract for every plugin: pure, deterministic, stateless (one instance serves every thread).
#pragma once

#include <cstdint>
#include <vector>

#include "core/elastic_quota.h"
#include "core/pod.h"
#include "core/resource_list.h"

namespace capext {

// One dimension in which `used + add > limit`.
struct Excess {
  ResourceName resource;
  int64_t used = 0;
  int64_t add = 0;
  int64_t limit = 0;
};

// Cluster-wide sums over every root quota for the aggregated-min check
// (docs/capacity-semantics.md#32-the-sum-of-mins-check): `used` sums what each plugin counts
// (CountsInTotals), `min` is the sum of mins, `checked` lists the resources the check compares for
// any pod when the plugin keeps such a list.
struct AggregateTotals {
  ResourceList used;
  ResourceList min;
  std::vector<ResourceName> checked;  // in name order
};

class QuotaArithmetic {
 public:
  virtual ~QuotaArithmetic() = default;

  // What a pod adds to its quota's usage, from its own fields (the built-in contributors:
  // docs/capacity-semantics.md#9-gpu-model-quotas-and-object-counts).
  virtual ResourceList QuotaRequestOf(const Pod& pod) const = 0;
  // Whether the device demand of a pod's ResourceClaims is part of its quota request
  // (docs/devices.md).
  virtual bool ChargesDeviceClaims() const = 0;
  // Which resources `quota` governs.
  virtual bool Governs(const ElasticQuota& quota, ResourceName resource) const = 0;
  // Whether a change of `quota`'s usage of `resource` changes AggregateTotals::used.
  virtual bool CountsInTotals(const ElasticQuota& quota, ResourceName resource) const = 0;
  // used + add against max (docs/capacity-semantics.md#31-the-max-check). Empty when within.
  virtual std::vector<Excess> ExceedsMax(const ElasticQuota& quota, const ResourceList& used,
                                         const ResourceList& add) const = 0;
  // used + add against min ("moreThanMin" of victim selection). Empty when within.
  virtual std::vector<Excess> ExceedsMin(const ElasticQuota& quota, const ResourceList& used,
                                         const ResourceList& add) const = 0;
  // True when `quota` uses more than its min ("borrowing", docs/capacity-semantics.md#1-words).
  virtual bool IsBorrowing(const ElasticQuota& quota, const ResourceList& used) const = 0;
  // Adds one root quota and its usage to `totals` (AggregateTotals::checked unsorted).
  virtual void AddToTotals(const ElasticQuota& quota, const ResourceList& used,
                           AggregateTotals* totals) const = 0;
  // totals.used + add against totals.min, for a pod of `quota` (the sum-of-mins check).
  virtual std::vector<Excess> ExceedsAggregateMin(const ElasticQuota& quota,
                                                  const AggregateTotals& totals,
                                                  const ResourceList& add) const = 0;
  // Resources compared for every quota whether it names them or not (shown by /quotas).
  virtual std::vector<ResourceName> AlwaysCompared() const = 0;
};

// Whether used + add (saturating) passes `limit`; an unbounded limit (INT64_MAX) never does.
bool Exceeds(int64_t used, int64_t add, int64_t limit);
// Appends {resource, used, add, limit} to `out` when Exceeds(used, add, limit).
void AppendIfExceeds(ResourceName resource, int64_t used, int64_t add, int64_t limit,
                     std::vector<Excess>* out);

}  // namespace capext
