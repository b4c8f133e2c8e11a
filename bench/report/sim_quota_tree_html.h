// report.html's "Quota tree" section, for a quota plan with parents: a table of every quota of
// the plan by level (indented under its parent) with its min, max and its subtree's peak and
// mean used, and per parent one chart of used over time at its level and at its children's,
// against the parent's min and max (cpu, and GPUs when the cluster has any). Self-contained SVG.
// Thread-safety: pure function.
#pragma once

#include <string>

#include "bench/report/sim_quota_tree.h"
#include "bench/sim/simulation.h"

namespace capext {

// REQUIRES: `tree` was built from `result` and is not empty.
std::string QuotaTreeSection(const SimulationResult& result, const PlanTreeView& tree);

}  // namespace capext
