// report.json's "hierarchy" member (and each result's in compare.json), written only for a
// quota plan with parents, so a flat plan's report stays byte for byte what it was:
//
//   "hierarchy": {"definitions": {...}, "levels": 2, "quotas": [
//     {"name", "parent" ("" for a root), "level", "children": [names], "min", "max",
//      "used": {"cpu_cores"|"memory_gib"|"gpus": {"peak", "mean", "samples_above_min",
//               "samples_above_max"}},
//      "timeline": {"cpu_cores": [...], "memory_gib": [...], "gpus": [...]}}, ...]}
//
// Quotas come depth first from the roots (sim_quota_tree.h), used is the subtree's; the timeline
// arrays follow cluster.utilisation.timeline.t_seconds and are written only when
// `with_timeline` (report.json, not compare.json). "gpus" only when the cluster has GPUs.
// Thread-safety: pure function on the caller's writer.
#pragma once

#include "bench/report/report_json_writer.h"
#include "bench/report/sim_quota_tree.h"
#include "bench/sim/simulation.h"

namespace capext {

// REQUIRES: `tree` was built from `result` and is not empty.
void QuotaTreeJson(report_json::Writer& w, const SimulationResult& result, const PlanTreeView& tree,
                   bool with_timeline);

}  // namespace capext
