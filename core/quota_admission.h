// The admission check of capacity-semantics 1.1: does pod p fit its namespace's ElasticQuota?
//   inEQ = request(p) + requests of pods nominated in p's namespace with priority >= p's;
//   all  = inEQ + requests of nominated pods of other quota namespaces not borrowing.
//   1. used(q) + inEQ exceeds max(q)      -> Unschedulable (UnschedulableAndUnresolvable when
//                                            request(p) alone exceeds max(q));
//   2. Σused + all exceeds Σmin            -> Unschedulable;
//   3. otherwise pass. A namespace without a quota always passes.
// Reasons name every term: "cpu used 0 + nominated 2 + request 3 > max 4".
// Thread-safety: pure functions over a ClusterState the caller keeps still.
#pragma once

#include "core/cluster_state.h"
#include "core/status.h"

namespace capext {

// The nominated sums of 1.1 for `pod`, each including the pod's own quota request.
struct NominatedSums {
  ResourceList in_eq;
  ResourceList all;
};
NominatedSums ComputeNominatedSums(const ClusterState& state, const NormalizedPod& pod);

// 1.1 against the state's usage (bound + reserved) and nominations.
Status CheckQuota(const ClusterState& state, const NormalizedPod& pod);

// 1.1 with explicit inputs, for what-if evaluation. `used` is the usage of the pod's quota,
// `totals` the cluster-wide sums; `sums` as ComputeNominatedSums.
Status CheckQuotaWith(QuotaSemantics semantics, const NormalizedPod& pod, const ElasticQuota& quota,
                      const ResourceList& used, const AggregateTotals& totals,
                      const NominatedSums& sums);

// CheckQuotaWith(...).ok(), without building the reason (for what-if loops).
bool QuotaCheckPasses(QuotaSemantics semantics, const ElasticQuota& quota, const ResourceList& used,
                      const AggregateTotals& totals, const ResourceList& in_eq,
                      const ResourceList& all);

}  // namespace capext
