// Derived numbers of a SimulationResult shared by every report (JSON, CSV, HTML): per-tenant
// pod dispositions, wait quantiles, hours. One definition each, so the reports agree.
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "bench/sim/simulation.h"

namespace capext {

struct WaitStats {
  int64_t count = 0;
  double mean_s = 0, p50_s = 0, p95_s = 0, p99_s = 0, max_s = 0;
};

// Nearest-rank quantile q in [0, 1] of sorted `values_ms`, in seconds (0 when empty).
double QuantileSeconds(const std::vector<int64_t>& values_ms, double q);
WaitStats WaitStatsOf(const std::vector<int64_t>& sorted_waits_ms);

// Pod groups (group_metrics.h): groups with minMember >= 2.
struct GroupSummary {
  int64_t submitted = 0, started = 0, partial_at_end = 0, ever_partial = 0;
  int64_t member_evictions = 0;
  double evictions_per_start = 0;  // member evictions / groups started (0 when none started)
  double partial_core_hours = 0, partial_gpu_hours = 0;
  WaitStats time_to_start;  // started - arrival, over the groups started
};

struct TenantSummary {
  std::string name;
  // Every submitted pod is exactly one of: run (started at least once), pending (never started,
  // still waiting at the end), rejected (never started and never could: by quota or by nodes).
  int64_t submitted = 0, run = 0, pending = 0, rejected = 0;
  int64_t rejected_by_quota = 0, rejected_by_nodes = 0;
  int64_t completed = 0, running_at_end = 0, evicted_pods = 0, requeued_at_end = 0, resubmitted = 0;
  int64_t evictions_suffered = 0, evictions_caused = 0;
  WaitStats wait;
  double below_guarantee_with_pending_s = 0;
  double borrowed_core_hours = 0;
  double used_core_hours = 0;
  double used_gpu_hours = 0;
  GroupSummary groups;
};

// One entry per tenant, in the result's tenant order, plus the cluster-wide total last
// (name "(all tenants)"; its wait stats cover every pod).
std::vector<TenantSummary> Summarize(const SimulationResult& result);

// 100-point CDF of waits (seconds, fraction) over `sorted_waits_ms`.
std::vector<std::pair<double, double>> WaitCdf(const std::vector<int64_t>& sorted_waits_ms);

// All tenants' waits merged and sorted.
std::vector<int64_t> AllWaits(const SimulationResult& result);

}  // namespace capext
