// QuotaSemantics: the handle on the quota-arithmetic plugin a profile chose
// (core/quota_arithmetic.h, docs/architecture.md#extension-points), and the free functions every
// decision calls, each asking that plugin. The two built-in plugins
// (docs/capacity-semantics.md#2-which-resources-a-quota-governs-two-semantics), one file each:
//  - capacity-extender (default, core/named_resources_arithmetic.cpp): a quota governs exactly the
//    resources named in its min or max; missing from max = unbounded, missing from min = 0;
//    `pods` counts pods; the aggregated-min check covers only resources that some quota names in
//    min.
//  - scheduler-plugins (core/reference_arithmetic.cpp): the reference plugin's arithmetic bit for
//    bit (cpu, memory, ephemeral-storage always compared; absent lists defaulted; scalars compared
//    only for names in the left operand; `pods` never counted; unknown names ignored).
// They are chosen by name through the registry in policies/; the named constants below serve code
// and tests that want one without a name.
// Thread-safety: a handle is a pointer to an immutable plugin; the functions are pure.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/elastic_quota.h"
#include "core/pod.h"
#include "core/quota_arithmetic.h"
#include "core/resource_list.h"

namespace capext {

class AdmissionRule;  // core/admission_rule.h
// The admission rules a profile runs after the built-in ones (core/admission_rule.h), in order.
using AdmissionRules = std::vector<const AdmissionRule*>;

class QuotaSemantics {
 public:
  // The built-in plugins (defined beside each plugin; constant-initialised, usable at any time).
  static const QuotaSemantics kCapacityExtender;
  static const QuotaSemantics kSchedulerPlugins;

  // The default plugin: capacity-extender, no extra admission rule.
  QuotaSemantics() : QuotaSemantics(kCapacityExtender) {}
  // REQUIRES: `arithmetic` and `extra_rules` (nullptr: none) live for the program (plugins are
  // static objects; policies/ keeps the rule lists it makes).
  explicit constexpr QuotaSemantics(const QuotaArithmetic* arithmetic,
                                    const AdmissionRules* extra_rules = nullptr)
      : arithmetic_(arithmetic), extra_rules_(extra_rules) {}

  const QuotaArithmetic& arithmetic() const { return *arithmetic_; }
  const QuotaArithmetic* operator->() const { return arithmetic_; }
  // The admission rules run after the built-in ones.
  const AdmissionRules& extra_rules() const {
    return extra_rules_ != nullptr ? *extra_rules_ : kNoRules;
  }
  bool has_extra_rules() const { return extra_rules_ != nullptr && !extra_rules_->empty(); }
  // The same arithmetic with `rules` as the extra admission rules (same REQUIRES).
  QuotaSemantics WithExtraRules(const AdmissionRules* rules) const {
    return QuotaSemantics(arithmetic_, rules);
  }
  bool operator==(const QuotaSemantics&) const = default;

 private:
  static const AdmissionRules kNoRules;
  const QuotaArithmetic* arithmetic_;
  const AdmissionRules* extra_rules_;
};

// Renders "cpu used 9 + nominated 2 + request 3 > max 14; memory used ..." : `add` of each
// excess is split into the pod's own `request` and the rest, the requests of nominated pods (a
// term printed only when not zero). `limit_word` names the limit ("max", "min").
std::string DescribeExcesses(const std::vector<Excess>& excesses, const ResourceList& request,
                             std::string_view limit_word);

// Kubernetes' scalar resource names (extended, hugepages-*, attachable-volumes-*,
// kubernetes.io/-prefixed): the only non-native names the reference counts.
bool IsScalarResourceName(std::string_view name);

// What a pod adds to its quota's usage (QuotaArithmetic::QuotaRequestOf).
inline ResourceList QuotaRequestOf(QuotaSemantics semantics, const Pod& pod) {
  return semantics->QuotaRequestOf(pod);
}

// used + add against max (the max check, docs/capacity-semantics.md#31-the-max-check). Empty when
// within max.
inline std::vector<Excess> ExceedsMax(QuotaSemantics semantics, const ElasticQuota& quota,
                                      const ResourceList& used, const ResourceList& add) {
  return semantics->ExceedsMax(quota, used, add);
}

// used + add against min ("moreThanMin" of victim selection). scheduler-plugins compares scalars
// named in `add` only (usedOverMinWith), so "is borrowing" is IsBorrowing, not an empty `add`.
inline std::vector<Excess> ExceedsMin(QuotaSemantics semantics, const ElasticQuota& quota,
                                      const ResourceList& used, const ResourceList& add) {
  return semantics->ExceedsMin(quota, used, add);
}

// Renders "cpu request 11 > max 10; ..." for a request compared alone (no usage involved).
std::string DescribeRequestExcesses(const std::vector<Excess>& excesses,
                                    std::string_view limit_word);

// True when `quota` is using more than its min ("borrowing", docs/capacity-semantics.md#1-words).
inline bool IsBorrowing(QuotaSemantics semantics, const ElasticQuota& quota,
                        const ResourceList& used) {
  return semantics->IsBorrowing(quota, used);
}

// Which resources the quota governs (capacity-extender: names in min or max).
inline bool Governs(QuotaSemantics semantics, const ElasticQuota& quota, ResourceName resource) {
  return semantics->Governs(quota, resource);
}

// Builds the cluster-wide sums (AggregateTotals, core/quota_arithmetic.h) over the root quotas.
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
  return semantics->CountsInTotals(quota, resource);
}

// Adds `delta` (a change of `quota`'s usage) to `totals.used` the way AggregateBuilder counts it.
void ApplyUsageDelta(QuotaSemantics semantics, const ElasticQuota& quota, const ResourceList& delta,
                     AggregateTotals* totals);

// totals.used + add against totals.min, for a pod of `quota` (the sum-of-mins check). Empty when
// within.
inline std::vector<Excess> ExceedsAggregateMin(QuotaSemantics semantics, const ElasticQuota& quota,
                                               const AggregateTotals& totals,
                                               const ResourceList& add) {
  return semantics->ExceedsAggregateMin(quota, totals, add);
}

}  // namespace capext
