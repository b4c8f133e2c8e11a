// compare's invariants, on a small synthetic workload and on the real Alibaba trace:
//  - every policy: run + pending + rejected = submitted, per tenant and in total;
//  - static: no tenant ever borrows (borrowed core-hours 0);
//  - none: no quota rejections;
//  - and borrowing does happen under capacity (the plan is not trivially loose).
#include <catch2/catch.hpp>

#include "bench/report/sim_summary.h"
#include "bench/sim/sim_cli.h"
#include "bench/sim/synthetic_workload.h"
#include "tests/support/test_paths.h"

namespace capext {
namespace compare_test {
namespace {

std::vector<SimulationResult> RunAll(const SimulationInput& in) {
  std::vector<SimulationResult> out;
  for (std::string p : {"capacity", "scheduler-plugins", "static", "none"}) {
    SimulationOptions o;
    o.policy = p;
    SimulationResult r;
    REQUIRE(RunSimulation(in, o, &r).ok());
    out.push_back(std::move(r));
  }
  return out;
}

void CheckInvariants(const std::vector<SimulationResult>& results) {
  REQUIRE(results.size() == 4);
  for (const auto& r : results) {
    INFO("policy " << r.policy);
    const auto summary = Summarize(r);
    int64_t submitted = 0, run = 0, pending = 0, rejected = 0;
    for (std::size_t i = 0; i < summary.size(); ++i) {
      const TenantSummary& s = summary[i];
      INFO("tenant " << s.name);
      CHECK(s.run + s.pending + s.rejected == s.submitted);
      CHECK(s.rejected == s.rejected_by_quota + s.rejected_by_nodes);
      if (i + 1 < summary.size()) {
        submitted += s.submitted;
        run += s.run;
        pending += s.pending;
        rejected += s.rejected;
        if (r.policy == "static") CHECK(s.borrowed_core_hours == 0);
        if (r.policy == "none") CHECK(s.rejected_by_quota == 0);
      }
    }
    CHECK(summary.back().submitted == submitted);
    CHECK(run + pending + rejected == submitted);
    CHECK(summary.back().run + summary.back().pending + summary.back().rejected ==
          summary.back().submitted);
  }
  double borrowed = 0;
  for (const auto& s : Summarize(results[0]))
    borrowed += s.borrowed_core_hours;
  CHECK(borrowed > 0);
}

TEST_CASE("compare invariants on a synthetic workload", "[sim][compare]") {
  SimulationInput in;
  in.nodes = GenerateSyntheticNodes(30);
  SyntheticOptions o;
  o.pods = 6000;
  o.tenants = 4;
  o.load = 1.2;
  o.mean_duration_s = 300;
  o.demand_period_s = 1200;
  int64_t cpu = 0;
  for (const auto& n : in.nodes)
    cpu += n.allocatable.Get("cpu");
  in.workload = GenerateSyntheticWorkload(o, cpu);
  in.plan = SyntheticQuotaPlan({"tenant-0", "tenant-1", "tenant-2", "tenant-3"}, in.nodes);
  CheckInvariants(RunAll(in));
}

TEST_CASE("compare invariants on the Alibaba trace with the shipped quota plan",
          "[sim][compare][trace]") {
  const std::string data = capext::test::SourcePath("bench/data/alibaba-gpu-v2023/");
  SimCliConfig config;
  bool help = false;
  REQUIRE(ParseSimFlags(
              {"--trace", data + "openb_pod_list_default.csv", "--nodes",
               data + "openb_node_list_all_node.csv", "--tenants", "qos", "--quotas",
               capext::test::SourcePath("bench/examples/alibaba-quotas.yaml"), "--out", "unused"},
              true, &config, &help)
              .ok());
  SimulationInput in;
  REQUIRE(LoadSimInput(config, &in).ok());
  CHECK(in.workload.pods.size() == 8151);
  CHECK(in.nodes.size() == 1523);
  const auto results = RunAll(in);
  CheckInvariants(results);
  // The plan binds: under static the tenants wait far longer than with borrowing.
  CHECK(Summarize(results[2]).back().wait.p95_s > Summarize(results[0]).back().wait.p95_s);
}

}  // namespace
}  // namespace compare_test
}  // namespace capext
