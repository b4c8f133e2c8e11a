// Checks of the quota hierarchy (docs/quota-hierarchy.md, Validation): an ElasticQuota names its
// parent with the annotation scheduling.capacity-extender.io/parent: "<namespace>/<name>";
// quotas without it are roots. Errors: a parent that does not exist, a quota that is its own
// parent, a parent in the other API group (scheduling.x-k8s.io vs scheduling.sigs.k8s.io),
// cycles, and children whose min sum to more than the parent's min in some resource. A warning:
// a child whose max exceeds the parent's max in a resource both list (the parent caps the child
// anyway). At runtime a quota whose parent is invalid is a root, so an invalid link is not
// followed by the later checks. The tree is a Boost.Graph adjacency list; cycles are its strongly
// connected components with more than one quota.
// Thread-safety: stateless.
#pragma once

#include <string_view>
#include <vector>

#include "config/quota_set_problem.h"
#include "core/elastic_quota.h"

namespace capext {

// Checks `quotas` (keys ns/name unique; a repeated key resolves to its first occurrence).
// `scope` completes "the parent ... is not defined <scope>" ("in the given files", "in the
// cluster"). An empty api_group (unknown) matches either group. Problems come in a
// deterministic order, each with its severity.
std::vector<QuotaSetProblem> CheckQuotaHierarchy(const std::vector<ElasticQuota>& quotas,
                                                 std::string_view scope);

}  // namespace capext
