// SimMetrics: what a simulation measures, per tenant and for the cluster, as the events happen:
// counters, waits, time integrals and a timeline sampled every `sample_interval_ms`.
//
// Definitions (also in the report's README section, sim_report_json.h):
//  - wait: first start - arrival, in ms, for every pod that started;
//  - below guarantee with pending demand: time during which the tenant had pending pods and, in
//    some resource its pending pods request, used < min (the plan's min, whether or not the
//    policy enforces it);
//  - borrowed cpu: the integral of max(0, used cpu - min cpu) over time for tenants the plan
//    names (0 for tenants without a plan entry).
// Time moves forward only (AdvanceTo); every level change applies at the current time. A
// tenant's time integrals are brought up to date when its levels change and at Finish, not on
// every step of time (with hundreds of tenants, integrating each at every event was a tenth of
// the simulator's time): counters() is complete after Finish.
// Thread-safety: none.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/dense_nodes.h"

namespace capext {

struct TenantLevels {
  std::vector<int64_t> used;            // per dimension
  std::vector<int64_t> pending_demand;  // per dimension
  int64_t pending = 0;
  int64_t running = 0;
};

struct TenantCounters {
  int64_t submitted = 0;
  int64_t run = 0;  // started at least once
  int64_t rejected_by_quota = 0;
  int64_t rejected_by_nodes = 0;
  int64_t completed = 0;
  int64_t evicted_pods = 0;  // pods evicted at least once
  int64_t evictions_suffered = 0;
  int64_t evictions_caused = 0;
  int64_t resubmitted = 0;
  int64_t below_min_with_pending_ms = 0;
  __int128 borrowed_cpu_milli_ms = 0;
  __int128 used_cpu_milli_ms = 0;
  __int128 used_gpu_ms = 0;       // in the gpu dimension's units
  std::vector<int64_t> waits_ms;  // sorted by Finish()
};

struct TimelinePoint {
  int64_t t_ms = 0;
  struct Tenant {
    int64_t cpu = 0, memory = 0, gpu = 0;  // used, decision units
    int64_t pending = 0, running = 0;
  };
  std::vector<Tenant> tenants;
  int64_t cluster_cpu = 0, cluster_memory = 0, cluster_gpu = 0;
};

class SimMetrics {
 public:
  // `min_per_dim[t]` is tenant t's plan min per dimension (empty = no plan entry). cpu_dim,
  // memory_dim and gpu_dim index the dimensions (-1 when absent).
  SimMetrics(std::vector<std::vector<int64_t>> min_per_dim, std::size_t dims, int cpu_dim,
             int memory_dim, int gpu_dim, int64_t sample_interval_ms);

  // Integrates levels over [now, t) and emits the samples that fall in it. REQUIRES: t >= now.
  void AdvanceTo(int64_t t);
  int64_t now() const { return now_; }

  void Submitted(int tenant, const DenseRequest& r, bool resubmission);
  void Rejected(int tenant, const DenseRequest& r, bool by_quota);  // leaves the queue
  void Withdrawn(int tenant, const DenseRequest& r);  // deleted while pending: leaves the queue
  void Started(int tenant, const DenseRequest& r, int64_t wait_ms, bool first_start);
  void Stopped(int tenant, const DenseRequest& r, bool completed);
  // A pod running before the simulation starts (a snapshot's bound pod).
  void Background(int tenant, const DenseRequest& r);
  void Evicted(int victim_tenant, int preemptor_tenant, bool first_eviction);

  // Emits the final samples up to `end_ms` (and one at end_ms) and sorts the waits.
  void Finish(int64_t end_ms);

  // Complete after Finish (their integrals are brought up to date lazily).
  const std::vector<TenantCounters>& counters() const { return counters_; }
  const std::vector<TenantLevels>& levels() const { return levels_; }
  const std::vector<TimelinePoint>& timeline() const { return timeline_; }
  int64_t sample_interval_ms() const { return interval_; }
  // Cluster-wide integral of used per dimension (decision units x ms).
  const std::vector<__int128>& cluster_used_ms() const { return cluster_used_ms_; }
  const std::vector<int64_t>& cluster_peak() const { return cluster_peak_; }

 private:
  void Sample(int64_t t);
  // Adds tenant's integrals over [settled_ms_[tenant], now_), its levels constant there.
  void Settle(int tenant);
  void ChangeUsed(int tenant, const DenseRequest& r, int sign);

  std::vector<std::vector<int64_t>> min_;
  std::size_t dims_;
  int cpu_dim_, memory_dim_, gpu_dim_;
  int64_t interval_;
  int64_t now_ = 0;
  int64_t next_sample_ = 0;
  std::vector<TenantLevels> levels_;
  std::vector<TenantCounters> counters_;
  std::vector<int64_t> settled_ms_;  // per tenant: its counters' integrals cover [0, this)
  std::vector<int64_t> cluster_used_;
  std::vector<int64_t> cluster_peak_;
  std::vector<__int128> cluster_used_ms_;
  std::vector<TimelinePoint> timeline_;
};

}  // namespace capext
