// The synthetic workload generator: deterministic for a seed, the documented shapes and rates.
#include "bench/sim/synthetic_workload.h"

#include <catch2/catch.hpp>
#include <set>

#include "bench/sim/trace_reader.h"

namespace capext {
namespace {

bool SamePods(const Workload& a, const Workload& b) {
  if (a.pods.size() != b.pods.size()) return false;
  for (std::size_t i = 0; i < a.pods.size(); ++i) {
    const auto& x = a.pods[i];
    const auto& y = b.pods[i];
    if (x.name != y.name || x.tenant != y.tenant || x.arrival_ms != y.arrival_ms ||
        x.duration_ms != y.duration_ms || x.priority != y.priority || !(x.requests == y.requests)) {
      return false;
    }
  }
  return true;
}

TEST_CASE("the same seed gives the same workload", "[sim][synthetic]") {
  SyntheticOptions o;
  o.pods = 5000;
  o.seed = 42;
  const Workload a = GenerateSyntheticWorkload(o, 640'000);
  const Workload b = GenerateSyntheticWorkload(o, 640'000);
  CHECK(SamePods(a, b));
  CHECK(a.notes == b.notes);
  o.seed = 43;
  CHECK_FALSE(SamePods(a, GenerateSyntheticWorkload(o, 640'000)));
}

TEST_CASE("synthetic pods follow the documented distributions", "[sim][synthetic]") {
  SyntheticOptions o;
  o.pods = 20000;
  o.tenants = 3;
  o.mean_duration_s = 100;
  const std::vector<Node> nodes = GenerateSyntheticNodes(10);
  int64_t cpu = 0;
  for (const auto& n : nodes) cpu += n.allocatable.Get("cpu");
  const Workload w = GenerateSyntheticWorkload(o, cpu);
  REQUIRE(w.pods.size() == 20000);
  std::set<std::string> tenants, names;
  std::set<int32_t> priorities;
  double duration = 0;
  int gpu_pods = 0;
  for (std::size_t i = 0; i < w.pods.size(); ++i) {
    const auto& p = w.pods[i];
    if (i > 0) CHECK(w.pods[i - 1].arrival_ms <= p.arrival_ms);
    tenants.insert(p.tenant);
    names.insert(p.name);
    priorities.insert(*p.priority);
    CHECK(p.duration_ms >= 1000);
    CHECK(p.duration_ms <= 2'000'000);
    duration += static_cast<double>(p.duration_ms);
    if (p.requests.Has(kGpuResource)) ++gpu_pods;
  }
  CHECK(tenants == std::set<std::string>{"tenant-0", "tenant-1", "tenant-2"});
  CHECK(names.size() == w.pods.size());
  CHECK(priorities == std::set<int32_t>{0, 100, 1000});
  CHECK(duration / static_cast<double>(w.pods.size()) == Approx(100'000).epsilon(0.05));
  CHECK(gpu_pods == Approx(20000 * 10 / 190).epsilon(0.15));
  // Offered load 1.0: arrivals * mean cpu * mean duration over the span ~ cluster cpu.
  const double span_ms = static_cast<double>(w.pods.back().arrival_ms);
  const double rate = static_cast<double>(w.pods.size()) / span_ms;
  CHECK(rate * (408'000.0 / 190) * 100'000 == Approx(static_cast<double>(cpu)).epsilon(0.05));
}

TEST_CASE("synthetic nodes and quotas", "[sim][synthetic]") {
  const std::vector<Node> nodes = GenerateSyntheticNodes(20);
  REQUIRE(nodes.size() == 20);
  CHECK(nodes[0].name == "node-00000");
  int gpu_nodes = 0;
  for (const auto& n : nodes) gpu_nodes += n.allocatable.Has(kGpuResource) ? 1 : 0;
  CHECK(gpu_nodes == 6);
  const QuotaPlan plan = SyntheticQuotaPlan({"a", "b"}, nodes);
  REQUIRE(plan.tenants.size() == 2);
  const int64_t cluster_cpu = 14 * 64'000 + 6 * 96'000;
  CHECK(plan.tenants.at("a").min->Get("cpu") == cluster_cpu * 9 / 20);
  CHECK(plan.tenants.at("a").max->Get("cpu") == std::min(cluster_cpu, cluster_cpu * 9 / 20 * 5 / 2));
}

}  // namespace
}  // namespace capext
