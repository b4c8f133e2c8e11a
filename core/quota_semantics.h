// The resource arithmetic of ElasticQuota decisions, in the two semantics of
// docs/capacity-semantics.md#2-which-resources-a-quota-governs-two-semantics (chosen by name
// through the `quotaSemantics` policy):
//  - kCapacityExtender (default): a quota governs exactly the resources named in its min or max;
//    missing from max = unbounded, missing from min = 0; `pods` counts pods; the aggregated-min
//    check covers only resources that some quota names in min.
//  - kSchedulerPlugins: the reference plugin's arithmetic bit for bit (cpu, memory,
//    ephemeral-storage always compared; absent lists defaulted; scalars compared only for names
//    in the left operand; `pods` never counted; unknown names ignored).
// "x exceeds L" = any single compared dimension is strictly greater.
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/elastic_quota.h"
#include "core/pod.h"
#include "core/resource_list.h"

namespace capext {

enum class QuotaSemantics { kCapacityExtender, kSchedulerPlugins };

// One dimension in which `used + add > limit`.
struct Excess {
  ResourceName resource;
  int64_t used = 0;
  int64_t add = 0;
  int64_t limit = 0;
};

// Renders "cpu used 9 + nominated 2 + request 3 > max 14; memory used ..." : `add` of each
// excess is split into the pod's own `request` and the rest, the requests of nominated pods (a
// term printed only when not zero). `limit_word` names the limit ("max", "min").
std::string DescribeExcesses(const std::vector<Excess>& excesses, const ResourceList& request,
                             std::string_view limit_word);

// Kubernetes' scalar resource names (extended, hugepages-*, attachable-volumes-*,
// kubernetes.io/-prefixed): the only non-native names the reference counts.
bool IsScalarResourceName(std::string_view name);

// What a pod adds to its quota's usage. kCapacityExtender: its request plus `pods: 1`, and when the
// pod carries an accelerator model every extended resource is also counted under "<name>.<model>"
// (docs/capacity-semantics.md#9-gpu-model-quotas-and-object-counts). kSchedulerPlugins: its request
// restricted to the names the reference counts, without pods.
ResourceList QuotaRequestOf(QuotaSemantics semantics, const Pod& pod);

// used + add against max (the max check, docs/capacity-semantics.md#31-the-max-check). Empty when
// within max.
std::vector<Excess> ExceedsMax(QuotaSemantics semantics, const ElasticQuota& quota,
                               const ResourceList& used, const ResourceList& add);

// used + add against min ("moreThanMin" of victim selection). kSchedulerPlugins compares scalars
// named in `add` only (usedOverMinWith), so "is borrowing" is IsBorrowing, not an empty `add`.
std::vector<Excess> ExceedsMin(QuotaSemantics semantics, const ElasticQuota& quota,
                               const ResourceList& used, const ResourceList& add);

// Renders "cpu request 11 > max 10; ..." for a request compared alone (no usage involved).
std::string DescribeRequestExcesses(const std::vector<Excess>& excesses,
                                    std::string_view limit_word);

// True when `quota` is using more than its min ("borrowing", docs/capacity-semantics.md#1-words).
bool IsBorrowing(QuotaSemantics semantics, const ElasticQuota& quota, const ResourceList& used);

// Which resources the quota governs (kCapacityExtender: names in min or max).
bool Governs(QuotaSemantics semantics, const ElasticQuota& quota, ResourceName resource);

// Cluster-wide sums over every quota for the aggregated-min check
// (docs/capacity-semantics.md#32-the-sum-of-mins-check). `used` sums a resource only over quotas
// that govern it (kCapacityExtender) or over all (kSchedulerPlugins); `min` is the sum of mins;
// `checked` lists the resources the check compares for any pod (kCapacityExtender: those named in
// some min).
struct AggregateTotals {
  ResourceList used;
  ResourceList min;
  std::vector<ResourceName> checked;  // in name order
};

class AggregateBuilder {
 public:
  explicit AggregateBuilder(QuotaSemantics semantics) : semantics_(semantics) {}
  void AddQuota(const ElasticQuota& quota, const ResourceList& used);
  AggregateTotals Build() &&;

 private:
  QuotaSemantics semantics_;
  AggregateTotals totals_;
};

// Whether a change of `quota`'s usage of `resource` changes totals.used (AggregateBuilder's rule).
inline bool CountsInTotals(QuotaSemantics semantics, const ElasticQuota& quota,
                           ResourceName resource) {
  return semantics == QuotaSemantics::kSchedulerPlugins || Governs(semantics, quota, resource);
}

// Adds `delta` (a change of `quota`'s usage) to `totals.used` the way AggregateBuilder counts it.
void ApplyUsageDelta(QuotaSemantics semantics, const ElasticQuota& quota, const ResourceList& delta,
                     AggregateTotals* totals);

// totals.used + add against totals.min, for a pod of `quota` (the sum-of-mins check). Empty when
// within.
std::vector<Excess> ExceedsAggregateMin(QuotaSemantics semantics, const ElasticQuota& quota,
                                        const AggregateTotals& totals, const ResourceList& add);

}  // namespace capext
