#include "bench/sim/sim_metrics.h"

#include <algorithm>

namespace capext {

SimMetrics::SimMetrics(std::vector<std::vector<int64_t>> min_per_dim, std::size_t dims, int cpu_dim,
                       int memory_dim, int gpu_dim, int64_t sample_interval_ms)
    : min_(std::move(min_per_dim)),
      dims_(dims),
      cpu_dim_(cpu_dim),
      memory_dim_(memory_dim),
      gpu_dim_(gpu_dim),
      interval_(std::max<int64_t>(1, sample_interval_ms)) {
  levels_.resize(min_.size());
  for (auto& l : levels_) {
    l.used.assign(dims_, 0);
    l.pending_demand.assign(dims_, 0);
  }
  counters_.resize(min_.size());
  settled_ms_.assign(min_.size(), 0);
  cluster_used_.assign(dims_, 0);
  cluster_peak_.assign(dims_, 0);
  cluster_used_ms_.assign(dims_, 0);
}

void SimMetrics::Sample(int64_t t) {
  TimelinePoint p;
  p.t_ms = t;
  p.tenants.reserve(levels_.size());
  auto get = [](const std::vector<int64_t>& v, int d) { return d >= 0 ? v[d] : 0; };
  for (const auto& l : levels_) {
    p.tenants.push_back({get(l.used, cpu_dim_), get(l.used, memory_dim_), get(l.used, gpu_dim_),
                         l.pending, l.running});
  }
  p.cluster_cpu = get(cluster_used_, cpu_dim_);
  p.cluster_memory = get(cluster_used_, memory_dim_);
  p.cluster_gpu = get(cluster_used_, gpu_dim_);
  timeline_.push_back(std::move(p));
}

void SimMetrics::AdvanceTo(int64_t t) {
  while (next_sample_ < t) {
    // Levels are constant over [now_, t): a sample inside it sees the current levels.
    Sample(next_sample_);
    next_sample_ += interval_;
  }
  if (t <= now_) return;
  const int64_t dt = t - now_;
  for (std::size_t d = 0; d < dims_; ++d)
    cluster_used_ms_[d] += static_cast<__int128>(cluster_used_[d]) * dt;
  now_ = t;
}

void SimMetrics::Settle(int tenant) {
  const auto i = static_cast<std::size_t>(tenant);
  const int64_t dt = now_ - settled_ms_[i];
  if (dt <= 0) return;
  settled_ms_[i] = now_;
  const TenantLevels& l = levels_[i];
  TenantCounters& c = counters_[i];
  const std::vector<int64_t>& min = min_[i];
  if (cpu_dim_ >= 0) {
    const int64_t cpu = l.used[cpu_dim_];
    c.used_cpu_milli_ms += static_cast<__int128>(cpu) * dt;
    if (!min.empty() && cpu > min[cpu_dim_]) {
      c.borrowed_cpu_milli_ms += static_cast<__int128>(cpu - min[cpu_dim_]) * dt;
    }
  }
  if (gpu_dim_ >= 0) c.used_gpu_ms += static_cast<__int128>(l.used[gpu_dim_]) * dt;
  if (l.pending > 0 && !min.empty()) {
    for (std::size_t d = 0; d < dims_; ++d) {
      if (l.pending_demand[d] > 0 && l.used[d] < min[d]) {
        c.below_min_with_pending_ms += dt;
        break;
      }
    }
  }
}

void SimMetrics::Submitted(int tenant, const DenseRequest& r, bool resubmission) {
  Settle(tenant);
  TenantLevels& l = levels_[tenant];
  ++l.pending;
  for (const auto& [d, amount] : r.dims)
    l.pending_demand[d] += amount;
  if (resubmission) {
    ++counters_[tenant].resubmitted;
  } else {
    ++counters_[tenant].submitted;
  }
}

void SimMetrics::Rejected(int tenant, const DenseRequest& r, bool by_quota) {
  Settle(tenant);
  TenantLevels& l = levels_[tenant];
  --l.pending;
  for (const auto& [d, amount] : r.dims)
    l.pending_demand[d] -= amount;
  ++(by_quota ? counters_[tenant].rejected_by_quota : counters_[tenant].rejected_by_nodes);
}

void SimMetrics::Withdrawn(int tenant, const DenseRequest& r) {
  Settle(tenant);
  TenantLevels& l = levels_[tenant];
  --l.pending;
  for (const auto& [d, amount] : r.dims)
    l.pending_demand[d] -= amount;
}

void SimMetrics::ChangeUsed(int tenant, const DenseRequest& r, int sign) {
  Settle(tenant);
  TenantLevels& l = levels_[tenant];
  for (const auto& [d, amount] : r.dims) {
    l.used[d] += sign * amount;
    cluster_used_[d] += sign * amount;
    cluster_peak_[d] = std::max(cluster_peak_[d], cluster_used_[d]);
  }
  l.running += sign;
}

void SimMetrics::Started(int tenant, const DenseRequest& r, int64_t wait_ms, bool first_start) {
  Settle(tenant);
  TenantLevels& l = levels_[tenant];
  --l.pending;
  for (const auto& [d, amount] : r.dims)
    l.pending_demand[d] -= amount;
  ChangeUsed(tenant, r, +1);
  if (first_start) {
    ++counters_[tenant].run;
    counters_[tenant].waits_ms.push_back(wait_ms);
  }
}

void SimMetrics::Stopped(int tenant, const DenseRequest& r, bool completed) {
  ChangeUsed(tenant, r, -1);
  if (completed) ++counters_[tenant].completed;
}

void SimMetrics::Background(int tenant, const DenseRequest& r) {
  ChangeUsed(tenant, r, +1);
}

void SimMetrics::Evicted(int victim_tenant, int preemptor_tenant, bool first_eviction) {
  ++counters_[victim_tenant].evictions_suffered;
  if (first_eviction) ++counters_[victim_tenant].evicted_pods;
  ++counters_[preemptor_tenant].evictions_caused;
}

void SimMetrics::Finish(int64_t end_ms) {
  AdvanceTo(end_ms);
  for (std::size_t i = 0; i < levels_.size(); ++i)
    Settle(static_cast<int>(i));
  while (next_sample_ <= end_ms) {
    Sample(next_sample_);
    next_sample_ += interval_;
  }
  if (timeline_.empty() || timeline_.back().t_ms != end_ms) Sample(end_ms);
  for (auto& c : counters_)
    std::sort(c.waits_ms.begin(), c.waits_ms.end());
}

}  // namespace capext
