#include "bench/report/sim_summary.h"

#include <algorithm>
#include <cmath>

namespace capext {
namespace {

constexpr double kMsPerHour = 3'600'000.0;

double ToDouble(__int128 v) {
  return static_cast<double>(v);
}

}  // namespace

double QuantileSeconds(const std::vector<int64_t>& values_ms, double q) {
  if (values_ms.empty()) return 0;
  const double rank = std::ceil(q * static_cast<double>(values_ms.size()));
  std::size_t index = rank < 1 ? 0 : static_cast<std::size_t>(rank) - 1;
  index = std::min(index, values_ms.size() - 1);
  return static_cast<double>(values_ms[index]) / 1000.0;
}

WaitStats WaitStatsOf(const std::vector<int64_t>& w) {
  WaitStats s;
  s.count = static_cast<int64_t>(w.size());
  if (w.empty()) return s;
  __int128 sum = 0;
  for (int64_t v : w)
    sum += v;
  s.mean_s = ToDouble(sum) / static_cast<double>(w.size()) / 1000.0;
  s.p50_s = QuantileSeconds(w, 0.50);
  s.p95_s = QuantileSeconds(w, 0.95);
  s.p99_s = QuantileSeconds(w, 0.99);
  s.max_s = static_cast<double>(w.back()) / 1000.0;
  return s;
}

std::vector<int64_t> AllWaits(const SimulationResult& r) {
  std::vector<int64_t> all;
  for (const auto& c : r.metrics.counters())
    all.insert(all.end(), c.waits_ms.begin(), c.waits_ms.end());
  std::sort(all.begin(), all.end());
  return all;
}

namespace {

GroupSummary GroupSummaryOf(const GroupCounters& c, int64_t gpu_scale) {
  GroupSummary g;
  g.submitted = c.submitted;
  g.started = c.started;
  g.partial_at_end = c.partial_now;
  g.ever_partial = c.ever_partial;
  g.member_evictions = c.member_evictions;
  g.partial_core_hours = ToDouble(c.partial_cpu_milli_ms) / 1000.0 / kMsPerHour;
  g.partial_gpu_hours = ToDouble(c.partial_gpu_ms) / static_cast<double>(gpu_scale) / kMsPerHour;
  g.time_to_start = WaitStatsOf(c.start_waits_ms);
  return g;
}

}  // namespace

std::vector<TenantSummary> Summarize(const SimulationResult& r) {
  std::vector<TenantSummary> out;
  TenantSummary total;
  total.name = "(all tenants)";
  const auto& counters = r.metrics.counters();
  for (std::size_t i = 0; i < r.tenants.size() && i < counters.size(); ++i) {
    const TenantCounters& c = counters[i];
    TenantSummary s;
    s.name = r.tenants[i].name;
    s.submitted = c.submitted;
    s.run = c.run;
    s.pending = i < r.pending_at_end.size() ? r.pending_at_end[i] : 0;
    s.rejected_by_quota = c.rejected_by_quota;
    s.rejected_by_nodes = c.rejected_by_nodes;
    s.rejected = c.rejected_by_quota + c.rejected_by_nodes;
    s.completed = c.completed;
    s.running_at_end = i < r.running_at_end.size() ? r.running_at_end[i] : 0;
    s.requeued_at_end = i < r.requeued_at_end.size() ? r.requeued_at_end[i] : 0;
    s.evicted_pods = c.evicted_pods;
    s.resubmitted = c.resubmitted;
    s.evictions_suffered = c.evictions_suffered;
    s.evictions_caused = c.evictions_caused;
    s.wait = WaitStatsOf(c.waits_ms);
    s.below_guarantee_with_pending_s = static_cast<double>(c.below_min_with_pending_ms) / 1000.0;
    s.borrowed_core_hours = ToDouble(c.borrowed_cpu_milli_ms) / 1000.0 / kMsPerHour;
    s.used_core_hours = ToDouble(c.used_cpu_milli_ms) / 1000.0 / kMsPerHour;
    s.used_gpu_hours = ToDouble(c.used_gpu_ms) / static_cast<double>(r.gpu_scale) / kMsPerHour;
    for (auto [field, value] : {std::pair{&TenantSummary::submitted, s.submitted},
                                {&TenantSummary::run, s.run},
                                {&TenantSummary::pending, s.pending},
                                {&TenantSummary::rejected, s.rejected},
                                {&TenantSummary::rejected_by_quota, s.rejected_by_quota},
                                {&TenantSummary::rejected_by_nodes, s.rejected_by_nodes},
                                {&TenantSummary::completed, s.completed},
                                {&TenantSummary::running_at_end, s.running_at_end},
                                {&TenantSummary::evicted_pods, s.evicted_pods},
                                {&TenantSummary::requeued_at_end, s.requeued_at_end},
                                {&TenantSummary::resubmitted, s.resubmitted},
                                {&TenantSummary::evictions_suffered, s.evictions_suffered},
                                {&TenantSummary::evictions_caused, s.evictions_caused}}) {
      total.*field += value;
    }
    total.below_guarantee_with_pending_s += s.below_guarantee_with_pending_s;
    total.borrowed_core_hours += s.borrowed_core_hours;
    total.used_core_hours += s.used_core_hours;
    total.used_gpu_hours += s.used_gpu_hours;
    if (i < r.groups.size()) {
      s.groups = GroupSummaryOf(r.groups[i], r.gpu_scale);
      if (s.groups.started > 0)
        s.groups.evictions_per_start =
            static_cast<double>(s.groups.member_evictions) / static_cast<double>(s.groups.started);
    }
    out.push_back(std::move(s));
  }
  total.wait = WaitStatsOf(AllWaits(r));
  // The groups of every tenant together.
  GroupCounters all;
  for (const auto& c : r.groups) {
    all.submitted += c.submitted;
    all.started += c.started;
    all.partial_now += c.partial_now;
    all.ever_partial += c.ever_partial;
    all.member_evictions += c.member_evictions;
    all.partial_cpu_milli_ms += c.partial_cpu_milli_ms;
    all.partial_gpu_ms += c.partial_gpu_ms;
    all.start_waits_ms.insert(all.start_waits_ms.end(), c.start_waits_ms.begin(),
                              c.start_waits_ms.end());
  }
  std::sort(all.start_waits_ms.begin(), all.start_waits_ms.end());
  total.groups = GroupSummaryOf(all, r.gpu_scale);
  if (total.groups.started > 0)
    total.groups.evictions_per_start = static_cast<double>(total.groups.member_evictions) /
                                       static_cast<double>(total.groups.started);
  out.push_back(std::move(total));
  return out;
}

std::vector<std::pair<double, double>> WaitCdf(const std::vector<int64_t>& w) {
  std::vector<std::pair<double, double>> out;
  if (w.empty()) return out;
  for (int i = 0; i <= 100; ++i) {
    const double q = i / 100.0;
    out.emplace_back(QuantileSeconds(w, q), q);
  }
  return out;
}

}  // namespace capext
