#include "core/quota_admission.h"

#include "core/reasons.h"

namespace capext {

NominatedSums ComputeNominatedSums(const ClusterState& state, const NormalizedPod& pod) {
  NominatedSums sums;
  sums.in_eq = pod.quota_request();
  if (!state.HasNominations()) {
    sums.all = sums.in_eq;
    return sums;
  }
  ResourceList others;
  const std::string& self = pod.store_key();
  state.ForEachNomination([&](const Nomination& n) {
    if (n.uid == self) return;
    const ElasticQuota* quota = state.QuotaFor(n.ns);
    if (quota == nullptr) return;
    if (n.ns == pod.ns) {
      if (n.priority >= pod.priority) sums.in_eq.Add(n.quota_request);
    } else if (!IsBorrowing(state.semantics(), *quota, state.Used(n.ns))) {
      others.Add(n.quota_request);
    }
  });
  sums.all = sums.in_eq + others;
  return sums;
}

Status CheckQuotaWith(QuotaSemantics semantics, const NormalizedPod& pod, const ElasticQuota& quota,
                      const ResourceList& used, const AggregateTotals& totals,
                      const NominatedSums& sums) {
  const ResourceList& request = pod.quota_request();
  auto over_max = ExceedsMax(semantics, quota, used, sums.in_eq);
  if (!over_max.empty()) {
    auto alone = ExceedsMax(semantics, quota, ResourceList{}, request);
    if (!alone.empty()) {
      return Status::Unresolvable(reasons::QuotaRequestAboveMax(
          pod.Key(), quota.Key(), DescribeRequestExcesses(alone, "max")));
    }
    return Status::Unschedulable(reasons::QuotaMaxExceeded(
        pod.Key(), quota.Key(), DescribeExcesses(over_max, request, "max")));
  }
  auto over_min = ExceedsAggregateMin(semantics, quota, totals, sums.all);
  if (!over_min.empty()) {
    return Status::Unschedulable(
        reasons::AggregateMinExceeded(pod.Key(), DescribeExcesses(over_min, request, "min")));
  }
  return {};
}

bool QuotaCheckPasses(QuotaSemantics semantics, const ElasticQuota& quota, const ResourceList& used,
                      const AggregateTotals& totals, const ResourceList& in_eq,
                      const ResourceList& all) {
  return ExceedsMax(semantics, quota, used, in_eq).empty() &&
         ExceedsAggregateMin(semantics, quota, totals, all).empty();
}

Status CheckQuota(const ClusterState& state, const NormalizedPod& pod) {
  const ElasticQuota* quota = state.QuotaFor(pod.ns);
  if (quota == nullptr) return {};
  const NominatedSums sums = ComputeNominatedSums(state, pod);
  return CheckQuotaWith(state.semantics(), pod, *quota, state.Used(pod.ns), state.totals(), sums);
}

}  // namespace capext
