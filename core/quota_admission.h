// The admission check of capacity-semantics 1.1: does pod p fit its namespace's ElasticQuota?
//   inEQ = request(p) + requests of pods nominated in p's namespace with priority >= p's;
//   all  = inEQ + requests of nominated pods of other quota namespaces not borrowing.
//   1. used(q) + inEQ exceeds max(q)      -> Unschedulable (UnschedulableAndUnresolvable when
//                                            request(p) alone exceeds max(q));
//   2. Σused + all exceeds Σmin            -> Unschedulable;
//   3. otherwise pass. A namespace without a quota always passes.
// Thread-safety: pure functions over a ClusterState the caller keeps still.
#pragma once

#include <string>

#include "core/cluster_state.h"

namespace capext {

enum class FitCode { kPass, kUnschedulable, kUnschedulableAndUnresolvable };

struct AdmissionResult {
  FitCode code = FitCode::kPass;
  std::string reason;  // empty on pass
  bool ok() const { return code == FitCode::kPass; }
};

// The nominated sums of 1.1 for `pod`, each including the pod's own quota request.
struct NominatedSums {
  ResourceList in_eq;
  ResourceList all;
};
NominatedSums ComputeNominatedSums(const ClusterState& state, const Pod& pod);

// 1.1 against the state's usage (bound + reserved) and nominations.
AdmissionResult CheckQuota(const ClusterState& state, const Pod& pod);

// 1.1 with explicit inputs, for what-if evaluation (victim selection, reservations).
// `used` is the usage of the pod's quota, `totals` the cluster-wide sums.
AdmissionResult CheckQuotaWith(QuotaSemantics semantics, const Pod& pod, const ElasticQuota& quota,
                               const ResourceList& used, const AggregateTotals& totals,
                               const ResourceList& in_eq, const ResourceList& all,
                               const ResourceList& request);

// CheckQuotaWith(...).ok(), without building the reason (for what-if loops).
bool QuotaCheckPasses(QuotaSemantics semantics, const ElasticQuota& quota, const ResourceList& used,
                      const AggregateTotals& totals, const ResourceList& in_eq,
                      const ResourceList& all);

}  // namespace capext
