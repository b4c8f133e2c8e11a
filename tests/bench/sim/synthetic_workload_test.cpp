// The synthetic workload generator: deterministic for a seed, the documented shapes and rates.
#include "bench/sim/synthetic_workload.h"

#include <catch2/catch.hpp>
#include <set>

#include "bench/sim/trace_reader.h"

namespace capext {
namespace synthetic_workload_test {
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
  for (const auto& n : nodes)
    cpu += n.allocatable.Get("cpu");
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
  for (const auto& n : nodes)
    gpu_nodes += n.allocatable.Has(kGpuResource) ? 1 : 0;
  CHECK(gpu_nodes == 6);
  const QuotaPlan plan = SyntheticQuotaPlan({"a", "b"}, nodes);
  REQUIRE(plan.tenants.size() == 2);
  const int64_t cluster_cpu = 14 * 64'000 + 6 * 96'000;
  CHECK(plan.tenants.at("a").min->Get("cpu") == cluster_cpu * 9 / 20);
  CHECK(plan.tenants.at("a").max->Get("cpu") ==
        std::min(cluster_cpu, cluster_cpu * 9 / 20 * 5 / 2));
}

}  // namespace
}  // namespace synthetic_workload_test
}  // namespace capext

namespace capext {
namespace synthetic_workload_test {
namespace {

TEST_CASE("synthetic pod groups: sizes, elastic ranges, one arrival per job", "[sim][synthetic]") {
  SyntheticOptions o;
  o.pods = 20000;
  o.seed = 7;
  o.group_fraction = 0.5;
  o.group_sizes = {{3, 1}, {8, 1}};
  o.elastic_fraction = 0.5;
  o.elastic_factor = 2.0;
  const Workload w = GenerateSyntheticWorkload(o, 640'000);
  CHECK(w.pods.size() >= 20000);
  const std::vector<WorkloadGroup> groups = GroupsOf(w);
  REQUIRE_FALSE(groups.empty());
  int64_t grouped = 0, elastic = 0, exact = 0;
  for (const auto& g : groups) {
    INFO("group " << g.name);
    CHECK((g.min_member == 3 || g.min_member == 8));
    const auto n = static_cast<int32_t>(g.members.size());
    CHECK(n >= g.min_member);
    CHECK(n <= 2 * g.min_member);
    (n > g.min_member ? elastic : exact) += 1;
    grouped += n;
    const WorkloadPod& first = w.pods[g.members.front()];
    for (uint32_t id : g.members) {
      const WorkloadPod& p = w.pods[id];
      CHECK(p.group == g.name);
      CHECK(p.tenant == first.tenant);
      CHECK(p.arrival_ms == first.arrival_ms);
      CHECK(p.duration_ms == first.duration_ms);
      CHECK(p.priority == first.priority);
      CHECK(p.requests == first.requests);
    }
  }
  // Half the arrivals are jobs; an elastic job runs min + U{0..min} replicas (mean 1.5 min),
  // half the jobs are elastic with a chance 1/(min+1) of drawing no extra replica.
  const double singles = static_cast<double>(w.pods.size()) - static_cast<double>(grouped);
  CHECK(static_cast<double>(groups.size()) / (singles + static_cast<double>(groups.size())) ==
        Approx(0.5).epsilon(0.05));
  CHECK(static_cast<double>(elastic) / static_cast<double>(groups.size()) ==
        Approx(0.5 * (1 - 0.5 * (1.0 / 4 + 1.0 / 9))).epsilon(0.08));
  CHECK(exact > 0);
}

TEST_CASE("synthetic groups keep the offered load", "[sim][synthetic]") {
  SyntheticOptions o;
  o.pods = 20000;
  o.mean_duration_s = 100;
  o.group_fraction = 0.3;
  const Workload w = GenerateSyntheticWorkload(o, 640'000);
  double cpu_ms = 0;
  for (const auto& p : w.pods)
    cpu_ms += static_cast<double>(p.requests.Get("cpu")) * static_cast<double>(p.duration_ms);
  const double span_ms = static_cast<double>(w.pods.back().arrival_ms);
  CHECK(cpu_ms / span_ms == Approx(640'000.0).epsilon(0.1));
}

TEST_CASE("without groups the generator draws what it drew before", "[sim][synthetic]") {
  SyntheticOptions a;
  a.pods = 500;
  SyntheticOptions b = a;
  b.group_fraction = 0;
  b.group_sizes = {{5, 1}};
  const Workload x = GenerateSyntheticWorkload(a, 640'000);
  const Workload y = GenerateSyntheticWorkload(b, 640'000);
  CHECK(SamePods(x, y));
  for (const auto& p : x.pods)
    CHECK(p.group.empty());
}

TEST_CASE("group sizes parse as size:weight lists", "[sim][synthetic]") {
  std::vector<std::pair<int32_t, int>> sizes;
  REQUIRE(ParseGroupSizes("2:30,4:40", &sizes));
  CHECK(sizes == std::vector<std::pair<int32_t, int>>{{2, 30}, {4, 40}});
  for (const char* bad : {"", "2", "1:5", "2:0", "2:5,", "x:1", "2:5;3:1"}) {
    INFO(bad);
    CHECK_FALSE(ParseGroupSizes(bad, &sizes));
  }
}

}  // namespace
}  // namespace synthetic_workload_test
}  // namespace capext
