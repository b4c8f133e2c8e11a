// The quota plan's hierarchy as the reports show it (docs/quota-hierarchy.md): per quota of the
// plan its parent, level and children, and its used at every timeline sample, where a quota's
// used is its own namespace's usage plus its children's used (its whole subtree's usage). Derived
// from the per-tenant timeline the simulation keeps, so it describes what happened, whether or
// not the policy enforced the tree.
// Thread-safety: pure functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "bench/sim/simulation.h"

namespace capext {

struct QuotaTreeNode {
  std::size_t tenant = 0;             // index into SimulationResult::tenants
  std::optional<std::size_t> parent;  // index into PlanTreeView::nodes; none for a root
  int level = 0;                      // 0 for a root
  std::vector<std::size_t> children;  // indices into PlanTreeView::nodes, by name
  // Subtree used at each timeline sample (SimMetrics::timeline), in decision units: millicores,
  // bytes and the gpu dimension's units.
  std::vector<int64_t> cpu, memory, gpu;
};

struct PlanTreeView {
  std::vector<QuotaTreeNode> nodes;  // depth first from the roots; roots and siblings by name
  int levels = 0;                    // 1 + the deepest level

  bool empty() const { return nodes.empty(); }
};

// Empty when no tenant of `result` names a parent (a flat plan). Tenants outside the plan are
// not part of it; a parent that is not a tenant of the result, or a cycle (both refused when
// the plan is loaded), leaves the quota out.
PlanTreeView BuildQuotaTree(const SimulationResult& result);

// What one level's used did against its min and max, for one resource ("cpu", "memory" or the
// result's gpu resource).
struct LevelUsage {
  double peak = 0;  // in reporting units: cores, GiB, GPUs
  double mean = 0;  // over the timeline samples
  // Samples at which used exceeded the quota's max / was above its min (when it names them).
  int64_t samples_above_max = 0;
  int64_t samples_above_min = 0;
};
LevelUsage UsageOf(const SimulationResult& result, const QuotaTreeNode& node,
                   const std::string& which);

// The node's used series for `which` ("cpu", "memory" or "gpu").
const std::vector<int64_t>& UsedSeries(const QuotaTreeNode& node, const std::string& which);

// Reporting scale of `which` ("cpu", "memory", "gpu"): decision units per reported unit.
double ReportScale(const SimulationResult& result, const std::string& which);

}  // namespace capext
