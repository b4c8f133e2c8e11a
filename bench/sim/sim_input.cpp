// capacity-sim's input: the nodes (snapshot, node list or synthetic), the workload (trace or
// synthetic) and the quota plan (file, the snapshot's ElasticQuotas, or generated), as the flags
// parsed by sim_cli.cpp name them.
#include <map>
#include <set>

#include <fmt/format.h>

#include "bench/sim/quota_plan.h"
#include "bench/sim/sim_cli.h"
#include "bench/sim/synthetic_workload.h"
#include "config/snapshot.h"

namespace capext {

Status LoadSimInput(const SimCliConfig& c, SimulationInput* out) {
  if (!c.cluster_snapshot.empty()) {
    if (Status s = LoadSnapshotFile(c.cluster_snapshot, DecodeOptions{}, &out->background); !s.ok())
      return s;
    out->nodes = out->background.nodes;
    out->background.nodes.clear();
    for (const auto& n : out->background.notes)
      out->workload.notes.push_back(n);
  }
  if (!c.nodes_csv.empty()) {
    NodeListOptions options;
    options.gpu_sharing = c.trace_options.gpu_sharing;
    options.max_pods = c.max_pods;
    if (Status s = ReadAlibabaNodeList(c.nodes_csv, options, &out->nodes); !s.ok()) return s;
  }
  if (out->nodes.empty()) out->nodes = GenerateSyntheticNodes(c.synthetic_nodes);
  std::set<std::string> names;
  for (const auto& n : out->nodes) {
    if (!names.insert(n.name).second)
      return Status::Error("node '" + n.name + "' is defined twice");
  }

  std::vector<std::string> notes = std::move(out->workload.notes);
  if (c.synthetic) {
    int64_t cpu = 0;
    for (const auto& n : out->nodes)
      cpu += n.allocatable.Get("cpu");
    out->workload = GenerateSyntheticWorkload(c.synthetic_options, cpu);
  } else {
    out->workload = Workload{};
    if (Status s = ReadAlibabaPodList(c.trace, c.trace_options, &out->workload); !s.ok()) return s;
  }
  out->workload.notes.insert(out->workload.notes.begin(), notes.begin(), notes.end());

  if (!c.quotas.empty()) {
    if (Status s = LoadQuotaPlanFile(c.quotas, &out->plan); !s.ok()) return s;
    out->workload.notes.push_back("quotas: " + BaseName(c.quotas));
  } else if (!out->background.quotas.empty()) {
    // The plan names quotas after their namespace: a parent annotation "ns/name" naming a quota
    // of the snapshot becomes tenant ns.
    const std::string source = BaseName(c.cluster_snapshot);
    std::map<std::string, std::string> tenant_of_key;
    for (const auto& q : out->background.quotas)
      tenant_of_key.emplace(q.Key(), q.ns);
    for (const auto& q : out->background.quotas) {
      std::string parent;
      if (!q.parent.empty()) {
        auto it = tenant_of_key.find(q.parent);
        if (it == tenant_of_key.end()) {
          return Status::Error(fmt::format(
              "{}: ElasticQuota {}: the parent ElasticQuota {} is not defined in the snapshot",
              source, q.Key(), q.parent));
        }
        parent = it->second;
      }
      out->plan.tenants[q.ns] = TenantQuota{q.min, q.max, std::nullopt, parent};
    }
    if (Status s = CheckQuotaPlanHierarchy(source, &out->plan); !s.ok()) return s;
    out->workload.notes.push_back("quotas: the cluster snapshot's ElasticQuotas");
  } else if (c.synthetic) {
    std::set<std::string> tenants;
    for (const auto& p : out->workload.pods)
      tenants.insert(p.tenant);
    for (int k = 0; k < c.synthetic_options.tenants; ++k)
      tenants.insert(fmt::format("tenant-{}", k));
    out->plan =
        SyntheticQuotaPlan(std::vector<std::string>(tenants.begin(), tenants.end()), out->nodes);
    out->workload.notes.push_back(
        "quotas: generated (min = 90%/K of the cluster, max = 2.5 x min)");
  } else {
    out->workload.notes.push_back("quotas: none given (no tenant has a quota)");
  }
  for (const auto& warning : out->plan.warnings)
    out->workload.notes.push_back("warning: " + warning);
  return {};
}

}  // namespace capext
