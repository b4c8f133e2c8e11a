// The checks of `validate` that compare ElasticQuotas with nodes and pods (from the inputs or a
// --cluster snapshot); see quota_manifest_validator.h.
// Thread-safety: stateless.
#pragma once

#include <string>
#include <vector>

#include "config/manifest_reader.h"
#include "core/elastic_quota.h"

namespace capext {

// Every quota of the checked set, and where it came from.
struct QuotaSetMember {
  ElasticQuota quota;
  const LocatedQuota* located = nullptr;  // null for a quota taken from the cluster snapshot
};

struct ClusterInputs {
  std::vector<Node> nodes;
  std::vector<LocatedPod> pods;
  std::string nodes_file;      // where the nodes came from, for the findings about all of them
  bool from_snapshot = false;  // --cluster given: the sum of mins above allocatable is an error
};

// Appends the findings to *report.
void CheckQuotasAgainstCluster(const std::vector<QuotaSetMember>& quotas,
                               const ClusterInputs& cluster, ValidateReport* report);

}  // namespace capext
