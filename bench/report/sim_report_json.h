// report.json (one policy) and compare.json (several), written with RapidJSON in a fixed member
// order, so the same simulation gives byte-identical files. Nothing measured with a clock goes
// in them unless `include_timing` is set; timing goes to perf.json (WritePerfJson).
//
// report.json members: schema, policy, workload {source, pods, notes}, options, definitions
// (what each metric means), cluster {nodes, allocatable, utilisation {mean, peak, timeline}},
// engine {decisions, binds, failed_attempts, reclaim_attempts, reclaims, evictions,
// end_seconds}, totals and tenants[] (each: quota, pods {submitted, run, pending, rejected, ...},
// wait_seconds {count, mean, p50, p95, p99, max}, evictions {suffered, caused},
// below_guarantee_with_pending_seconds, borrowed_core_hours, used_core_hours, used_gpu_hours;
// quota.parent for a child in a plan with parents), hierarchy (only for a plan with parents:
// sim_quota_tree_json.h), invariants {run_plus_pending_plus_rejected_equals_submitted}.
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <vector>

#include "bench/sim/simulation.h"

namespace capext {

// What the report echoes about how the run was asked for.
struct ReportContext {
  std::string workload_source;  // Workload::source
  int64_t workload_pods = 0;
  std::vector<std::pair<std::string, std::string>> options;  // flag -> value, in order
  bool include_timing = false;
};

std::string ReportJson(const SimulationResult& result, const ReportContext& context);
std::string CompareJson(const std::vector<SimulationResult>& results, const ReportContext& context);
// {"policy", "engine_wall_seconds", "decisions", "decisions_per_second", "pods", ...}
std::string PerfJson(const std::vector<SimulationResult>& results, double total_wall_seconds);

}  // namespace capext
