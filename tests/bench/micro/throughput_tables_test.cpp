// The throughput benchmark's arithmetic on made-up runs: pairs are taken within a repetition
// only, and only when neither run collapsed; collapsed and failed runs are kept out of the healthy
// figures, API requests are grouped by verb and resource into writes and reads (the benchmark's own
// /metrics scrapes left out), and the per-kind tables take the median over the runs with a kind
// missing from a run counted 0.
#include "bench/micro/throughput_tables.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

namespace capext::bench {
namespace throughput_tables_test {
namespace {

ThroughputRun Run(const std::string& configuration, int repetition, double pods_per_s,
                  const std::string& metrics = "") {
  ThroughputRun r;
  r.configuration = configuration;
  r.repetition = repetition;
  r.ok = true;
  r.pods = 1000;
  r.pods_per_s = pods_per_s;
  r.apiserver = MetricSamples::Parse(metrics);
  return r;
}

const RunValue kPodsPerS = [](const ThroughputRun& r) { return r.pods_per_s; };

TEST_CASE("throughput tables: ratios are paired within a repetition", "[throughput]") {
  std::vector<ThroughputRun> runs = {Run("product", 1, 150), Run("noop", 1, 100),
                                     Run("product", 2, 120), Run("noop", 2, 120),
                                     Run("product", 3, 90)};  // repetition 3 has no noop run
  runs.push_back(Run("noop", 4, 50));
  runs.back().ok = false;  // a failed run pairs with nothing
  runs.push_back(Run("product", 4, 200));
  CHECK(Paired(runs, "product", "noop", kPodsPerS) == std::vector<double>{1.5, 1.0});
  CHECK(Paired(runs, "product", "noop", kPodsPerS, true) == std::vector<double>{50, 0});
  CHECK(Paired(runs, "noop", "absent", kPodsPerS).empty());
  CHECK(Median(Paired(runs, "product", "noop", kPodsPerS)) == Approx(1.25));
}

TEST_CASE("throughput tables: a repetition with a collapsed run pairs with nothing",
          "[throughput]") {
  // A collapsed baseline (kube-scheduler's bind retries) would make any ratio look like a win.
  std::vector<ThroughputRun> runs = {Run("product", 1, 150), Run("noop", 1, 25),
                                     Run("product", 2, 120), Run("noop", 2, 100),
                                     Run("product", 3, 20),  Run("noop", 3, 100)};
  runs[1].collapsed = true;
  runs[4].collapsed = true;
  CHECK(Paired(runs, "product", "noop", kPodsPerS) == std::vector<double>{1.2});
  CHECK(CollapsedPairs(runs, "product", "noop") == 2);
  CHECK(CollapsedPairs(runs, "product", "absent") == 0);
}

TEST_CASE("throughput tables: healthy runs leave out the collapsed ones", "[throughput]") {
  std::vector<ThroughputRun> runs = {Run("product", 1, 150), Run("product", 2, 30),
                                     Run("product", 3, 140)};
  runs[1].collapsed = true;
  CHECK(RunsOf(runs, "product").size() == 3);
  const auto healthy = RunsOf(runs, "product", true);
  REQUIRE(healthy.size() == 2);
  CHECK(ValuesOf(healthy, kPodsPerS) == std::vector<double>{150, 140});
  CHECK(Range(ValuesOf(RunsOf(runs, "product"), kPodsPerS), 0) == "30-150");
  CHECK(Range({1.25}, 1) == "1.2");
  CHECK(Range({}) == "-");
}

constexpr const char* kRequests =
    R"(apiserver_request_total{code="201",group="",resource="pods",subresource="binding",verb="POST"} 1000
apiserver_request_total{code="409",group="",resource="pods",subresource="binding",verb="POST"} 20
apiserver_request_total{code="200",group="scheduling.x-k8s.io",resource="elasticquotas",subresource="status",verb="PATCH"} 50
apiserver_request_total{code="201",group="events.k8s.io",resource="events",subresource="",verb="POST"} 1000
apiserver_request_total{code="200",group="",resource="pods",subresource="",verb="WATCH"} 2
apiserver_request_total{code="200",group="",resource="",subresource="",verb="GET"} 7
)";

TEST_CASE("throughput tables: API requests per pod by verb and resource", "[throughput]") {
  const ThroughputRun run = Run("product", 1, 100, kRequests);
  const auto writes = ApiRequestsPerPod(run, true);
  CHECK(writes == std::map<std::string, double>{
                      {"POST pods/binding", 1.02},  // every code counts: a refused bind is a write
                      {"PATCH scheduling.x-k8s.io/elasticquotas/status", 0.05},
                      {"POST events.k8s.io/events", 1.0}});
  // Reads: the watch; GET /metrics (no resource) is the benchmark's own and is left out.
  CHECK(ApiRequestsPerPod(run, false) == std::map<std::string, double>{{"WATCH pods", 0.002}});
}

TEST_CASE("throughput tables: per-kind medians, a missing kind counted 0, small rows dropped",
          "[throughput]") {
  std::vector<ThroughputRun> runs = {
      Run("product", 1, 100,
          R"(apiserver_request_total{resource="pods",subresource="binding",verb="POST"} 1000
apiserver_request_total{group="scheduling.x-k8s.io",resource="elasticquotas",subresource="status",verb="PATCH"} 60)"),
      Run("product", 2, 100,
          R"(apiserver_request_total{resource="pods",subresource="binding",verb="POST"} 1000
apiserver_request_total{resource="leases",group="coordination.k8s.io",verb="PUT"} 1)"),
      Run("product", 3, 100,
          R"(apiserver_request_total{resource="pods",subresource="binding",verb="POST"} 1200
apiserver_request_total{group="scheduling.x-k8s.io",resource="elasticquotas",subresource="status",verb="PATCH"} 40)")};
  const std::vector<ThroughputConfiguration> configurations = {
      {.name = "product", .title = "product", .kind = ExtenderKind::kProduct},
      {.name = "idle", .title = "never ran", .kind = ExtenderKind::kNone}};
  const auto medians = PrintKindTable("test", runs, configurations, [](const ThroughputRun& r) {
    return ApiRequestsPerPod(r, true);
  });
  REQUIRE(medians.size() == 1);  // "idle" has no run
  CHECK(medians.at("product") ==
        std::map<std::string, double>{{"POST pods/binding", 1.0},
                                      {"PATCH scheduling.x-k8s.io/elasticquotas/status", 0.04}});
  // The lease PUT (0.001 per pod in one run, median 0) is under the 0.005 floor.
}

}  // namespace
}  // namespace throughput_tables_test
}  // namespace capext::bench
