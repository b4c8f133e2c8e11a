// AdmissionPath: what admission checks a demand against, computed once per demand
// (docs/quota-hierarchy.md#admission-filter-and-the-bind-check): the levels from its quota up to
// its root, the nominated sums r_x of each level, and the pod's own hold (quota_admission.h
// builds it; every admission rule, admission_rule.h, reads it).
// Thread-safety: a value type.
#pragma once

#include <cstddef>
#include <vector>

#include "core/elastic_quota.h"
#include "core/resource_list.h"

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
  // The pod's own hold (docs/workloads.md#2-holds-quota-without-a-node), left out of used at every
  // level and of the cluster-wide sums: an admitted pod is never counted against itself. Empty: no
  // hold.
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

}  // namespace capext
