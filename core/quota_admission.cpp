#include "core/quota_admission.h"

#include "core/reasons.h"

namespace capext {

NominatedSums ComputeNominatedSums(const ClusterState& state, const Pod& pod) {
  const QuotaBook& book = state.quotas();
  NominatedSums sums;
  sums.in_eq = state.QuotaRequest(pod);
  ResourceList others;
  const std::string self = pod.uid.empty() ? pod.Key() : pod.uid;
  state.ForEachNomination([&](const Nomination& n) {
    if (n.uid == self) return;
    const ElasticQuota* quota = book.QuotaFor(n.ns);
    if (quota == nullptr) return;
    if (n.ns == pod.ns) {
      if (n.priority >= pod.priority) sums.in_eq.Add(n.quota_request);
    } else if (!IsBorrowing(book.semantics(), *quota, book.Used(n.ns))) {
      others.Add(n.quota_request);
    }
  });
  sums.all = sums.in_eq + others;
  return sums;
}

AdmissionResult CheckQuotaWith(QuotaSemantics semantics, const Pod& pod, const ElasticQuota& quota,
                               const ResourceList& used, const AggregateTotals& totals,
                               const ResourceList& in_eq, const ResourceList& all,
                               const ResourceList& request) {
  auto over_max = ExceedsMax(semantics, quota, used, in_eq);
  if (!over_max.empty()) {
    auto alone = ExceedsMax(semantics, quota, ResourceList{}, request);
    if (!alone.empty()) {
      return {FitCode::kUnschedulableAndUnresolvable,
              reasons::QuotaRequestAboveMax(pod.Key(), quota.Key(),
                                            DescribeRequestExcesses(alone, "max"))};
    }
    return {FitCode::kUnschedulable,
            reasons::QuotaMaxExceeded(pod.Key(), quota.Key(),
                                      DescribeExcesses(over_max, "request", "max"))};
  }
  auto over_min = ExceedsAggregateMin(semantics, quota, totals, all);
  if (!over_min.empty()) {
    return {FitCode::kUnschedulable,
            reasons::AggregateMinExceeded(pod.Key(), DescribeExcesses(over_min, "request", "min"))};
  }
  return {};
}

bool QuotaCheckPasses(QuotaSemantics semantics, const ElasticQuota& quota, const ResourceList& used,
                      const AggregateTotals& totals, const ResourceList& in_eq,
                      const ResourceList& all) {
  return ExceedsMax(semantics, quota, used, in_eq).empty() &&
         ExceedsAggregateMin(semantics, quota, totals, all).empty();
}

AdmissionResult CheckQuota(const ClusterState& state, const Pod& pod) {
  const QuotaBook& book = state.quotas();
  const ElasticQuota* quota = book.QuotaFor(pod.ns);
  if (quota == nullptr) return {};
  NominatedSums sums = ComputeNominatedSums(state, pod);
  return CheckQuotaWith(book.semantics(), pod, *quota, book.Used(pod.ns), book.totals(), sums.in_eq,
                        sums.all, state.QuotaRequest(pod));
}

}  // namespace capext
