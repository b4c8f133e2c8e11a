#include "bench/sim/synthetic_workload.h"

#include <algorithm>
#include <charconv>
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

// The largest replica count of an elastic group: floor(size * factor), at least size.
int32_t ElasticMax(int32_t size, double factor) {
  const double top = std::floor(static_cast<double>(size) * std::max(1.0, factor));
  return static_cast<int32_t>(std::min<double>(top, INT32_MAX));
}

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
  // Groups: the size weights and the mean replicas per arrival.
  const bool groups = o.group_fraction > 0 && !o.group_sizes.empty();
  std::vector<int> size_weights;
  int size_total = 0;
  double mean_replicas = 0;
  for (const auto& [size, weight] : o.group_sizes) {
    size_weights.push_back(weight);
    size_total += weight;
    const int32_t elastic_max = ElasticMax(size, o.elastic_factor);
    mean_replicas += weight * ((1.0 - o.elastic_fraction) * size +
                               o.elastic_fraction * (size + elastic_max) / 2.0);
  }
  if (size_total > 0) mean_replicas /= size_total;
  const double group_fraction = groups ? std::clamp(o.group_fraction, 0.0, 1.0) : 0.0;
  const double pods_per_arrival = (1.0 - group_fraction) + group_fraction * mean_replicas;
  const double rate_per_ms = o.load * static_cast<double>(cluster_cpu_milli) /
                             (mean_cpu_milli * pods_per_arrival * o.mean_duration_s * 1000.0);
  const double mean_gap_ms = rate_per_ms > 0 ? 1.0 / rate_per_ms : 1000.0;
  const double mean_duration_ms = o.mean_duration_s * 1000.0;
  const int width = static_cast<int>(std::to_string(std::max<int64_t>(o.pods - 1, 1)).size());
  double t = 0;
  std::vector<double> tenant_weight(tenants);
  w.pods.reserve(static_cast<std::size_t>(std::max<int64_t>(o.pods, 0)));
  int64_t produced = 0, jobs = 0, elastic_jobs = 0;
  for (int64_t i = 0; produced < o.pods; ++i) {
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
    if (groups && rng.Uniform() < group_fraction) {
      // A job: minMember from the size distribution, elastic replicas above it.
      const int32_t min_member = o.group_sizes[rng.Pick(size_weights, size_total)].first;
      int32_t replicas = min_member;
      if (rng.Uniform() < o.elastic_fraction) {
        const int32_t extra = ElasticMax(min_member, o.elastic_factor) - min_member;
        replicas += static_cast<int32_t>(rng.Next() % static_cast<uint64_t>(extra + 1));
        ++elastic_jobs;
      }
      ++jobs;
      pod.group = pod.name;
      pod.min_member = min_member;
      for (int32_t k = 0; k < replicas; ++k) {
        WorkloadPod member = pod;
        member.name = fmt::format("{}-{}", pod.name, k);
        w.pods.push_back(std::move(member));
      }
      produced += replicas;
      continue;
    }
    w.pods.push_back(std::move(pod));
    ++produced;
  }
  w.notes.push_back(fmt::format(
      "{} pods, {} tenants, offered cpu load {:.2f}, mean duration {:.0f} s, arrival rate {:.3f}/s",
      produced, tenants, o.load, o.mean_duration_s, rate_per_ms * 1000.0));
  if (groups) {
    w.notes.push_back(fmt::format(
        "{} pod groups ({} elastic up to {:.1f}x minMember), {:.0f}% of arrivals, {:.2f} replicas "
        "per job on average",
        jobs, elastic_jobs, o.elastic_factor, group_fraction * 100.0, mean_replicas));
  }
  SortByArrival(&w.pods);
  return w;
}

bool ParseGroupSizes(const std::string& text, std::vector<std::pair<int32_t, int>>* out) {
  std::vector<std::pair<int32_t, int>> sizes;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t comma = text.find(',', start);
    const std::string part =
        text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    const std::size_t colon = part.find(':');
    if (colon == std::string::npos) return false;
    int32_t size = 0;
    int weight = 0;
    const char* a = part.data();
    auto r1 = std::from_chars(a, a + colon, size);
    auto r2 = std::from_chars(a + colon + 1, a + part.size(), weight);
    if (r1.ec != std::errc() || r1.ptr != a + colon || r2.ec != std::errc() ||
        r2.ptr != a + part.size() || size < 2 || weight < 1 || weight > 1'000'000) {
      return false;
    }
    sizes.emplace_back(size, weight);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (sizes.empty()) return false;
  *out = std::move(sizes);
  return true;
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
