// The report files: report.json is valid JSON with the documented members and identical for
// identical runs; timeline.csv has one row per sample and tenant; the HTML pages are
// self-contained (no scripts, no external resources) and carry their charts.
#include <rapidjson/document.h>

#include <catch2/catch.hpp>
#include <regex>
#include <sstream>

#include "bench/report/sim_report_html.h"
#include "bench/report/sim_report_json.h"
#include "bench/report/sim_timeline_csv.h"
#include "bench/sim/synthetic_workload.h"

namespace capext {
namespace {

SimulationInput SmallSynthetic(uint64_t seed) {
  SimulationInput in;
  in.nodes = GenerateSyntheticNodes(20);
  SyntheticOptions o;
  o.seed = seed;
  o.pods = 3000;
  o.tenants = 3;
  o.load = 1.3;
  o.mean_duration_s = 120;
  o.demand_period_s = 900;
  int64_t cpu = 0;
  for (const auto& n : in.nodes) cpu += n.allocatable.Get("cpu");
  in.workload = GenerateSyntheticWorkload(o, cpu);
  in.plan = SyntheticQuotaPlan({"tenant-0", "tenant-1", "tenant-2"}, in.nodes);
  return in;
}

SimulationResult RunPolicy(const SimulationInput& in, SimPolicy policy) {
  SimulationOptions o;
  o.policy = policy;
  o.samples = 50;
  SimulationResult r;
  REQUIRE(RunSimulation(in, o, &r).ok());
  return r;
}

ReportContext Context(const SimulationInput& in) {
  return ReportContext{in.workload.source, static_cast<int64_t>(in.workload.pods.size()), {{"synthetic", "true"}}, false};
}

std::size_t Count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t pos = text.find(what); pos != std::string::npos; pos = text.find(what, pos + 1)) ++n;
  return n;
}

void CheckSelfContained(const std::string& html) {
  CHECK(html.rfind("<!DOCTYPE html>", 0) == 0);
  CHECK(Count(html, "<svg") == Count(html, "</svg>"));
  CHECK(Count(html, "<svg") > 0);
  CHECK(Count(html, "<script") == 0);
  CHECK(Count(html, "<link") == 0);
  CHECK(Count(html, "<img") == 0);
  CHECK(Count(html, "http://") == Count(html, "xmlns=\"http://www.w3.org/2000/svg\""));
  CHECK(Count(html, "https://") == 0);
  CHECK_FALSE(std::regex_search(html, std::regex("[^a-z](nan|inf)[^a-z]")));
}

TEST_CASE("a small run gives byte-identical reports twice", "[sim][report]") {
  const SimulationInput in = SmallSynthetic(5);
  const SimulationResult a = RunPolicy(in, SimPolicy::kCapacity);
  const SimulationResult b = RunPolicy(in, SimPolicy::kCapacity);
  CHECK(ReportJson(a, Context(in)) == ReportJson(b, Context(in)));
  CHECK(TimelineCsv(a) == TimelineCsv(b));
  CHECK(ReportHtml(a, Context(in)) == ReportHtml(b, Context(in)));
  const SimulationInput again = SmallSynthetic(5);  // regenerated input, same seed
  CHECK(ReportJson(RunPolicy(again, SimPolicy::kCapacity), Context(again)) == ReportJson(a, Context(in)));
}

TEST_CASE("report.json has the documented members", "[sim][report]") {
  const SimulationInput in = SmallSynthetic(6);
  const SimulationResult r = RunPolicy(in, SimPolicy::kCapacity);
  const std::string json = ReportJson(r, Context(in));
  rapidjson::Document doc;
  doc.Parse(json.c_str());
  REQUIRE_FALSE(doc.HasParseError());
  CHECK(std::string(doc["schema"].GetString()) == "capacity-sim/report/v1");
  CHECK(std::string(doc["policy"].GetString()) == "capacity");
  CHECK(doc["workload"]["pods"].GetInt64() == 3000);
  CHECK(doc["cluster"]["nodes"].GetInt() == 20);
  CHECK(doc["cluster"]["utilisation"]["timeline"]["t_seconds"].Size() ==
        doc["cluster"]["utilisation"]["timeline"]["cpu"].Size());
  CHECK_FALSE(doc.HasMember("timing"));
  CHECK(doc["engine"]["decisions"].GetInt64() >= 3000);
  REQUIRE(doc["tenants"].Size() == 3);
  int64_t submitted = 0;
  for (const auto& t : doc["tenants"].GetArray()) {
    const auto& pods = t["pods"];
    CHECK(pods["run"].GetInt64() + pods["pending"].GetInt64() + pods["rejected"].GetInt64() ==
          pods["submitted"].GetInt64());
    submitted += pods["submitted"].GetInt64();
    for (const char* k : {"p50", "p95", "p99", "mean", "max"}) CHECK(t["wait_seconds"].HasMember(k));
    CHECK(t["quota"]["enforced"].GetBool());
    CHECK(t.HasMember("borrowed_core_hours"));
    CHECK(t.HasMember("below_guarantee_with_pending_seconds"));
    CHECK(t["evictions"].HasMember("suffered"));
  }
  CHECK(doc["totals"]["pods"]["submitted"].GetInt64() == submitted);
  CHECK(doc["invariants"]["run_plus_pending_plus_rejected_equals_submitted"].GetBool());

  ReportContext timed = Context(in);
  timed.include_timing = true;
  rapidjson::Document with;
  with.Parse(ReportJson(r, timed).c_str());
  CHECK(with.HasMember("timing"));
}

TEST_CASE("timeline.csv has a row per sample and tenant plus the cluster", "[sim][report]") {
  const SimulationInput in = SmallSynthetic(7);
  const SimulationResult r = RunPolicy(in, SimPolicy::kCapacity);
  const std::string csv = TimelineCsv(r);
  std::istringstream lines(csv);
  std::string header;
  std::getline(lines, header);
  CHECK(header ==
        "time_s,tenant,used_cpu,min_cpu,max_cpu,used_memory_gib,min_memory_gib,max_memory_gib,used_gpu,min_gpu,"
        "max_gpu,pending,running");
  std::size_t rows = 0, cluster_rows = 0;
  for (std::string line; std::getline(lines, line);) {
    ++rows;
    CHECK(Count(line, ",") == 12);
    if (line.find(",(cluster),") != std::string::npos) ++cluster_rows;
  }
  CHECK(cluster_rows == r.metrics.timeline().size());
  CHECK(rows == r.metrics.timeline().size() * 4);
}

TEST_CASE("the HTML pages are self-contained and carry their charts", "[sim][report]") {
  const SimulationInput in = SmallSynthetic(8);
  std::vector<SimulationResult> results;
  for (SimPolicy p : {SimPolicy::kCapacity, SimPolicy::kStatic}) results.push_back(RunPolicy(in, p));
  const std::string report = ReportHtml(results[0], Context(in));
  CheckSelfContained(report);
  CHECK(report.find("tenant-0: cpu cores used vs min and max") != std::string::npos);
  CHECK(report.find("Cluster utilisation") != std::string::npos);
  CHECK(report.find("Wait-time distribution per tenant") != std::string::npos);
  CHECK(report.find("GPUs used vs min and max") != std::string::npos);
  const std::string compare = CompareHtml(results, Context(in));
  CheckSelfContained(compare);
  CHECK(compare.find("Wait-time distribution per policy") != std::string::npos);
  CHECK(compare.find("tenant-2 under static: cpu cores") != std::string::npos);
  CHECK(compare.find("BROKEN") == std::string::npos);

  rapidjson::Document doc;
  doc.Parse(CompareJson(results, Context(in)).c_str());
  REQUIRE_FALSE(doc.HasParseError());
  CHECK(doc["results"].Size() == 2);
  CHECK(std::string(doc["results"][1]["policy"].GetString()) == "static");
}

}  // namespace
}  // namespace capext
