// A generated workload and cluster for `capacity-sim run --synthetic`, deterministic for a seed.
//
// Arrivals are a Poisson process (exponential inter-arrival times, whole milliseconds) whose rate
// makes the offered cpu load `load` times the cluster's cpu:
//   rate = load * cluster_cpu / (mean pod cpu * mean_duration).
// Each arrival goes to tenant i of K with weight 1 + 0.8 * tri(t / demand_period + i / K), tri a
// triangle wave in [-1, 1]: the total rate is constant but each tenant's share rises and falls
// out of phase with the others, so quotas alternately lend and borrow and reclaim happens.
// Durations are exponential with mean `mean_duration_s` (at least 1 s, at most 20x the mean).
// Request shapes (cpu, memory, GPUs; weight out of 190):
//   500m/1Gi 60, 1/4Gi 50, 2/8Gi 40, 4/16Gi 30, 8/32Gi/1 GPU 6, 16/64Gi/2 GPU 3, 32/128Gi/8 GPU 1.
// Priorities: 0 (70%), 100 (25%), 1000 (5%).
// Pod groups (docs/workloads.md), when `group_fraction` > 0: that fraction of arrivals is a job
// whose pods arrive together (one arrival, one tenant, shape, priority and duration for all) as a
// group syn-N with members syn-N-0, syn-N-1, ...; its minMember is drawn from `group_sizes`
// (size:weight); a fraction `elastic_fraction` of jobs is elastic, with a replica count uniform
// in [minMember, floor(minMember * elastic_factor)] (3-6 for minMember 3 and factor 2), the
// others run exactly minMember replicas. The arrival rate counts a job's replicas, so the
// offered load stays `load`. With group_fraction 0 the generator draws exactly what it drew
// before groups existed: the same seed gives the same workload.
// The generator is splitmix64 with inverse-CDF transforms of its own (std:: distributions are
// implementation-defined): the same seed gives the same workload with the same C library.
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "bench/sim/quota_plan.h"
#include "bench/sim/workload.h"
#include "core/node.h"

namespace capext {

struct SyntheticOptions {
  uint64_t seed = 1;
  int64_t pods = 10000;
  int tenants = 4;  // named tenant-0 .. tenant-(K-1)
  double load = 1.0;
  double mean_duration_s = 600;
  double demand_period_s = 3600;
  // Pod groups (see above).
  double group_fraction = 0;
  std::vector<std::pair<int32_t, int>> group_sizes = {{2, 30}, {4, 40}, {8, 20}, {16, 10}};
  double elastic_fraction = 0.5;
  double elastic_factor = 2.0;
};

// "2:30,4:40,8:20" -> {{2, 30}, {4, 40}, {8, 20}}; sizes >= 2, weights >= 1.
bool ParseGroupSizes(const std::string& text, std::vector<std::pair<int32_t, int>>* out);

// `cluster_cpu_milli` (the sum of node cpu) sets the arrival rate.
Workload GenerateSyntheticWorkload(const SyntheticOptions& options, int64_t cluster_cpu_milli);

// `count` nodes named node-00000...: 70% cpu nodes (64 cpu, 256Gi), 30% GPU nodes (96 cpu,
// 768Gi, 8 nvidia.com/gpu, label alibaba.com/gpu-model=SYN), interleaved; pods 110.
std::vector<Node> GenerateSyntheticNodes(int count);

// A plan for tenants without one: each tenant's min is 90%/K of the cluster's cpu, memory and
// GPUs, its max 2.5 times its min (at most the whole cluster).
QuotaPlan SyntheticQuotaPlan(const std::vector<std::string>& tenants,
                             const std::vector<Node>& nodes);

}  // namespace capext
