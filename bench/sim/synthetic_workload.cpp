#include "bench/sim/synthetic_workload.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "bench/sim/trace_reader.h"

namespace capext {
namespace {

constexpr int64_t kGi = int64_t{1} << 30;

// splitmix64 (Steele, Lea, Flood 2014): tiny, fast, and fully specified.
class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}
  uint64_t Next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  // Uniform in [0, 1) with 53 random bits.
  double Uniform() { return static_cast<double>(Next() >> 11) * 0x1.0p-53; }
  // Exponential with the given mean.
  double Exponential(double mean) { return -mean * std::log1p(-Uniform()); }
  // An index drawn with the given integer weights.
  std::size_t Pick(const std::vector<int>& weights, int total) {
    int x = static_cast<int>(Next() % static_cast<uint64_t>(total));
    for (std::size_t i = 0; i < weights.size(); ++i) {
      if (x < weights[i]) return i;
      x -= weights[i];
    }
    return weights.size() - 1;
  }

 private:
  uint64_t state_;
};

struct Shape {
  int64_t cpu_milli;
  int64_t memory_gi;
  int64_t gpus;
  int weight;
};
constexpr Shape kShapes[] = {{500, 1, 0, 60},   {1000, 4, 0, 50}, {2000, 8, 0, 40},
                             {4000, 16, 0, 30}, {8000, 32, 1, 6}, {16000, 64, 2, 3},
                             {32000, 128, 8, 1}};

double Triangle(double x) {
  const double frac = x - std::floor(x);
  return 1.0 - 4.0 * std::fabs(frac - 0.5);
}

}  // namespace

Workload GenerateSyntheticWorkload(const SyntheticOptions& o, int64_t cluster_cpu_milli) {
  Workload w;
  w.source = fmt::format("synthetic seed {}", o.seed);
  SplitMix64 rng(o.seed);
  std::vector<int> shape_weights;
  int shape_total = 0;
  double mean_cpu_milli = 0;
  for (const auto& s : kShapes) {
    shape_weights.push_back(s.weight);
    shape_total += s.weight;
    mean_cpu_milli += static_cast<double>(s.cpu_milli * s.weight);
  }
  mean_cpu_milli /= shape_total;
  const int tenants = std::max(1, o.tenants);
  const double rate_per_ms = o.load * static_cast<double>(cluster_cpu_milli) /
                             (mean_cpu_milli * o.mean_duration_s * 1000.0);
  const double mean_gap_ms = rate_per_ms > 0 ? 1.0 / rate_per_ms : 1000.0;
  const double mean_duration_ms = o.mean_duration_s * 1000.0;
  const int width = static_cast<int>(std::to_string(std::max<int64_t>(o.pods - 1, 1)).size());
  double t = 0;
  std::vector<double> tenant_weight(tenants);
  w.pods.reserve(static_cast<std::size_t>(std::max<int64_t>(o.pods, 0)));
  for (int64_t i = 0; i < o.pods; ++i) {
    t += rng.Exponential(mean_gap_ms);
    WorkloadPod pod;
    pod.name = fmt::format("syn-{:0{}}", i, width);
    pod.arrival_ms = static_cast<int64_t>(t);
    // Tenant: weights oscillating out of phase.
    double total = 0;
    for (int k = 0; k < tenants; ++k) {
      tenant_weight[k] =
          1.0 + 0.8 * Triangle(t / (o.demand_period_s * 1000.0) + static_cast<double>(k) / tenants);
      total += tenant_weight[k];
    }
    double x = rng.Uniform() * total;
    int tenant = tenants - 1;
    for (int k = 0; k < tenants; ++k) {
      if (x < tenant_weight[k]) {
        tenant = k;
        break;
      }
      x -= tenant_weight[k];
    }
    pod.tenant = fmt::format("tenant-{}", tenant);
    const Shape& s = kShapes[rng.Pick(shape_weights, shape_total)];
    pod.requests.Set("cpu", s.cpu_milli);
    pod.requests.Set("memory", s.memory_gi * kGi);
    if (s.gpus > 0) pod.requests.Set(kGpuResource, s.gpus);
    const uint64_t p = rng.Next() % 100;
    pod.priority = p < 70 ? 0 : p < 95 ? 100 : 1000;
    const double d = std::clamp(rng.Exponential(mean_duration_ms), 1000.0, 20.0 * mean_duration_ms);
    pod.duration_ms = static_cast<int64_t>(d);
    w.pods.push_back(std::move(pod));
  }
  w.notes.push_back(fmt::format(
      "{} pods, {} tenants, offered cpu load {:.2f}, mean duration {:.0f} s, arrival rate {:.3f}/s",
      o.pods, tenants, o.load, o.mean_duration_s, rate_per_ms * 1000.0));
  SortByArrival(&w.pods);
  return w;
}

std::vector<Node> GenerateSyntheticNodes(int count) {
  std::vector<Node> nodes;
  const int width = std::max(5, static_cast<int>(std::to_string(std::max(count - 1, 1)).size()));
  for (int i = 0; i < count; ++i) {
    Node n;
    n.name = fmt::format("node-{:0{}}", i, width);
    const bool gpu = i % 10 >= 7;  // 3 of every 10
    n.allocatable.Set("cpu", gpu ? 96'000 : 64'000);
    n.allocatable.Set("memory", (gpu ? 768 : 256) * kGi);
    n.allocatable.Set("pods", 110);
    if (gpu) {
      n.allocatable.Set(kGpuResource, 8);
      n.labels[kGpuModelLabel] = "SYN";
    }
    n.labels["kubernetes.io/hostname"] = n.name;
    nodes.push_back(std::move(n));
  }
  return nodes;
}

QuotaPlan SyntheticQuotaPlan(const std::vector<std::string>& tenants,
                             const std::vector<Node>& nodes) {
  ResourceList cluster;
  for (const auto& n : nodes) {
    for (const char* r : {"cpu", "memory", kGpuResource})
      cluster.AddTo(ResourceName::Of(r), n.allocatable.Get(r));
  }
  QuotaPlan plan;
  const int64_t k = std::max<int64_t>(1, static_cast<int64_t>(tenants.size()));
  for (const auto& t : tenants) {
    ResourceList min, max;
    for (const auto& [name, total] : cluster.entries()) {
      const int64_t m = total * 9 / (10 * k);
      min.Set(name, m);
      max.Set(name, std::min(total, m * 5 / 2));
    }
    plan.tenants[t] = TenantQuota{min, max, std::nullopt};
  }
  return plan;
}

}  // namespace capext
