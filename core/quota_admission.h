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
// Thread-safety: pure functions over a ClusterState the caller keeps still.
#pragma once

#include <vector>

#include "core/cluster_state.h"
#include "core/status.h"

namespace capext {

// The nominated sums of the admission check for `pod`, each including the pod's own quota request.
struct NominatedSums {
  ResourceList in_eq;  // r at the pod's leaf (today's inEQ)
  ResourceList all;
};

// What admission checks a pod against, computed once per pod: the levels from its quota up to
// its root with their r_x, and the sums.
struct AdmissionPath {
  struct Level {
    int node = -1;                        // a quota node of the tree
    const ElasticQuota* quota = nullptr;  // its quota
    // Index into `extra_in_eq` of r at this level, or -1 when it is sums.in_eq (the level's
    // subtree holds only the pod's namespace).
    int in_eq = -1;
  };
  const ElasticQuota* quota = nullptr;  // the pod's quota; nullptr: no quota, always admitted
  int leaf = -1;                        // the pod's leaf in the tree
  std::vector<Level> levels;            // q's node first, then each ancestor up to the root
  const ElasticQuota* root = nullptr;   // the root quota over q (q itself when flat)
  NominatedSums sums;
  std::vector<ResourceList> extra_in_eq;
  // The pod's own hold (docs/workloads.md, "Holds"), left out of used at every level and of the
  // cluster-wide sums: an admitted pod is never counted against itself. Empty: no hold.
  ResourceList own_hold;
  // `used` with the own hold taken out (a copy only when there is one).
  ResourceList UsedWithoutOwnHold(const ResourceList& used) const {
    ResourceList out = used;
    out.Subtract(own_hold);
    return out;
  }
  const ResourceList& InEq(const Level& level) const {
    return level.in_eq < 0 ? sums.in_eq : extra_in_eq[static_cast<std::size_t>(level.in_eq)];
  }
};

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

// The admission check for a path, with the usage of each tree node from `used_of(node)` and the
// cluster-wide sums `totals` (a what-if of victim selection passes its own).
template <typename UsedOf>
bool QuotaPasses(QuotaSemantics semantics, const AdmissionPath& path, UsedOf&& used_of,
                 const AggregateTotals& totals) {
  if (path.quota == nullptr) return true;
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

// QuotaPasses with the reason: the first level or rule that fails.
Status CheckQuotaPath(const ClusterState& state, const NormalizedPod& pod,
                      const AdmissionPath& path);

// The admission check for `request`, the summed request of `pods` members of `group` (its
// Display()), admitted together in `pod`'s place (its namespace, priority, own hold and
// nomination): a group's need (docs/workloads.md). The reason names the group and the resources
// that block: "gang eq1/a: 4 pods need cpu 16: ElasticQuota eq1/eq1 would exceed max: cpu used 0 +
// request 16 > max 10".
Status CheckGroupRequest(const ClusterState& state, const NormalizedPod& pod,
                         const ResourceList& request, std::string_view group, int pods);

}  // namespace capext
