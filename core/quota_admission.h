// The admission check (docs/capacity-semantics.md#3-admission-may-this-pod-run-in-its-quota), over
// the quota tree (docs/quota-hierarchy.md#admission-filter-and-the-bind-check): does pod p fit its
// quota, every ancestor of it, and the cluster-wide rule?
//   r_x  = request(p) + requests of pods nominated in x's subtree with priority >= p's (p's
//          own nomination excluded); at p's leaf this is today's inEQ;
//   all  = r_q + requests of nominated pods of namespaces outside q's subtree whose own quota is
//          not borrowing;
//   1. used(x) + r_x exceeds max(x), for q and then each ancestor x -> Unschedulable, naming the
//      first quota that blocks (UnschedulableAndUnresolvable when request(p) alone exceeds the
//      max of q or of an ancestor: nothing can ever help);
//   2. Σused + all exceeds Σmin, both over the root quotas -> Unschedulable;
//   3. otherwise pass. A namespace without a quota always passes.
// With no parents, q is a root and its own leaf, and this is exactly the flat check.
// Reasons name every term: "cpu used 0 + nominated 2 + request 3 > max 4".
// Steps 1 and 2 are the built-in admission rules (admission_rule.h: QuotaMaxRule, SumOfMinsRule);
// a profile's extra rules run after them (QuotaSemantics::extra_rules).
// Thread-safety: pure functions over a ClusterState the caller keeps still.
#pragma once

#include <type_traits>
#include <vector>

#include "core/admission_path.h"
#include "core/admission_rule.h"
#include "core/cluster_state.h"
#include "core/status.h"

namespace capext {

// `request`: what to admit in the pod's place (a group's summed need), else the pod's own.
AdmissionPath MakeAdmissionPath(const ClusterState& state, const NormalizedPod& pod,
                                const ResourceList* request = nullptr);

// The nominated sums of the admission check for `pod` (MakeAdmissionPath's).
inline NominatedSums ComputeNominatedSums(const ClusterState& state, const NormalizedPod& pod) {
  return MakeAdmissionPath(state, pod).sums;
}

// The admission check against the state's usage (bound + reserved) and nominations.
Status CheckQuota(const ClusterState& state, const NormalizedPod& pod);

// The cluster-wide sums with the path's own hold taken out.
AggregateTotals TotalsWithoutOwnHold(QuotaSemantics semantics, const AdmissionPath& path,
                                     const AggregateTotals& totals);

// The built-in rules' fast form (the same verdicts as QuotaMaxRule and SumOfMinsRule without the
// reasons), with the usage of each tree node from `used_of(node)` and the cluster-wide sums
// `totals` (a what-if of victim selection passes its own).
template <typename UsedOf>
bool BuiltInRulesPass(QuotaSemantics semantics, const AdmissionPath& path, UsedOf&& used_of,
                      const AggregateTotals& totals) {
  if (!path.own_hold.empty()) {
    for (const auto& level : path.levels) {
      if (!ExceedsMax(semantics, *level.quota, path.UsedWithoutOwnHold(used_of(level.node)),
                      path.InEq(level))
               .empty())
        return false;
    }
    return ExceedsAggregateMin(semantics, *path.root, TotalsWithoutOwnHold(semantics, path, totals),
                               path.sums.all)
        .empty();
  }
  for (const auto& level : path.levels) {
    if (!ExceedsMax(semantics, *level.quota, used_of(level.node), path.InEq(level)).empty())
      return false;
  }
  return ExceedsAggregateMin(semantics, *path.root, totals, path.sums.all).empty();
}

// `used_of` and `totals` as the usage the rules read.
template <typename Fn>
class WhatIfUsage final : public AdmissionUsage {
 public:
  WhatIfUsage(Fn& used_of, const AggregateTotals& totals) : used_of_(used_of), totals_(totals) {}
  const ResourceList& UsedOf(int node) const override { return used_of_(node); }
  const AggregateTotals& Totals() const override { return totals_; }

 private:
  Fn& used_of_;
  const AggregateTotals& totals_;
};

// The admission check for a path (every rule of the profile, without the reasons), with the usage
// of each tree node from `used_of(node)` and the cluster-wide sums `totals`. The extra rules get
// a demand without names whose request is r at the pod's quota (their verdicts read the path).
template <typename UsedOf>
bool QuotaPasses(QuotaSemantics semantics, const AdmissionPath& path, UsedOf&& used_of,
                 const AggregateTotals& totals) {
  if (path.quota == nullptr) return true;
  if (!BuiltInRulesPass(semantics, path, used_of, totals)) return false;
  if (!semantics.has_extra_rules()) return true;
  const WhatIfUsage<std::remove_reference_t<UsedOf>> usage(used_of, totals);
  const Demand demand{path.sums.in_eq, 1, {}, {}};
  for (const AdmissionRule* rule : semantics.extra_rules()) {
    if (!rule->Check(semantics, path, usage, demand).ok()) return false;
  }
  return true;
}

// The verdict of admission and the rule that gave it: nullptr when it passed, or when it held the
// pod before any rule (devices that cannot be counted).
struct AdmissionVerdict {
  Status status;
  const AdmissionRule* blocking = nullptr;
};
// CheckQuotaPath with the rule that decided.
AdmissionVerdict DecideAdmissionPath(const ClusterState& state, const NormalizedPod& pod,
                                     const AdmissionPath& path);
// CheckQuota with the rule that decided.
AdmissionVerdict DecideAdmission(const ClusterState& state, const NormalizedPod& pod);

// QuotaPasses with the reason: the first level or rule that fails.
Status CheckQuotaPath(const ClusterState& state, const NormalizedPod& pod,
                      const AdmissionPath& path);

// The admission rule (docs/capacity-semantics.md#3-admission-may-this-pod-run-in-its-quota) for
// `request`, the summed request of `pods` members of `group` (its Display()), admitted together in
// `pod`'s place (its namespace, priority, own hold and nomination): a group's need
// (docs/workloads.md). The reason names the group and the resources that block: "gang eq1/a: 4
// pods need cpu 16: ElasticQuota eq1/eq1 would exceed max: cpu used 0 + request 16 > max 10".
Status CheckGroupRequest(const ClusterState& state, const NormalizedPod& pod,
                         const ResourceList& request, std::string_view group, int pods);

}  // namespace capext
