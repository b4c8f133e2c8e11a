// The report files: report.json is valid JSON with the documented members and identical for
// identical runs; timeline.csv has one row per sample and tenant; the HTML pages are
// self-contained (no scripts, no external resources) and carry their charts.
#include <rapidjson/document.h>

#include <catch2/catch.hpp>
#include <regex>
#include <sstream>

#include "bench/report/sim_quota_tree.h"
#include "bench/report/sim_report_html.h"
#include "bench/report/sim_report_json.h"
#include "bench/report/sim_timeline_csv.h"
#include "bench/sim/synthetic_workload.h"

namespace capext {
namespace report_test {
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
  for (const auto& n : in.nodes)
    cpu += n.allocatable.Get("cpu");
  in.workload = GenerateSyntheticWorkload(o, cpu);
  in.plan = SyntheticQuotaPlan({"tenant-0", "tenant-1", "tenant-2"}, in.nodes);
  return in;
}

SimulationResult RunPolicy(const SimulationInput& in, const std::string& policy) {
  SimulationOptions o;
  o.policy = policy;
  o.samples = 50;
  SimulationResult r;
  REQUIRE(RunSimulation(in, o, &r).ok());
  return r;
}

ReportContext Context(const SimulationInput& in) {
  return ReportContext{in.workload.source,
                       static_cast<int64_t>(in.workload.pods.size()),
                       {{"synthetic", "true"}},
                       false};
}

std::size_t Count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t pos = text.find(what); pos != std::string::npos; pos = text.find(what, pos + 1))
    ++n;
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
  const SimulationResult a = RunPolicy(in, "capacity");
  const SimulationResult b = RunPolicy(in, "capacity");
  CHECK(ReportJson(a, Context(in)) == ReportJson(b, Context(in)));
  CHECK(TimelineCsv(a) == TimelineCsv(b));
  CHECK(ReportHtml(a, Context(in)) == ReportHtml(b, Context(in)));
  const SimulationInput again = SmallSynthetic(5);  // regenerated input, same seed
  CHECK(ReportJson(RunPolicy(again, "capacity"), Context(again)) == ReportJson(a, Context(in)));
}

TEST_CASE("report.json has the documented members", "[sim][report]") {
  const SimulationInput in = SmallSynthetic(6);
  const SimulationResult r = RunPolicy(in, "capacity");
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
    for (const char* k : {"p50", "p95", "p99", "mean", "max"})
      CHECK(t["wait_seconds"].HasMember(k));
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
  const SimulationResult r = RunPolicy(in, "capacity");
  const std::string csv = TimelineCsv(r);
  std::istringstream lines(csv);
  std::string header;
  std::getline(lines, header);
  CHECK(header ==
        "time_s,tenant,used_cpu,min_cpu,max_cpu,used_memory_gib,min_memory_gib,max_memory_gib,used_"
        "gpu,min_gpu,"
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
  for (std::string p : {"capacity", "static"})
    results.push_back(RunPolicy(in, p));
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

// SmallSynthetic's three tenants under a two-level tree of grouping quotas (no pods of their
// own): org -> {team -> tenant-1, tenant-0}; tenant-2 a root. Each parent's min is its
// children's.
SimulationInput SmallTree(uint64_t seed) {
  SimulationInput in = SmallSynthetic(seed);
  TenantQuota& t0 = in.plan.tenants.at("tenant-0");
  TenantQuota& t1 = in.plan.tenants.at("tenant-1");
  TenantQuota team{*t1.min, *t1.max, std::nullopt};
  team.parent = "org";
  ResourceList org_min = *t0.min, org_max = *t0.max;
  org_min.Add(*t1.min);
  org_max.Add(*t1.max);
  t0.parent = "org";
  t1.parent = "team";
  in.plan.tenants["team"] = team;
  in.plan.tenants["org"] = TenantQuota{org_min, org_max, std::nullopt};
  REQUIRE(CheckQuotaPlanHierarchy("tree", &in.plan).ok());
  REQUIRE(in.plan.warnings.empty());
  return in;
}

TEST_CASE("the quota tree: levels depth first, a parent's used is its subtree's at every sample",
          "[sim][report][hierarchy]") {
  const SimulationInput in = SmallTree(9);
  const SimulationResult r = RunPolicy(in, "capacity");
  const PlanTreeView tree = BuildQuotaTree(r);
  REQUIRE(tree.nodes.size() == 5);
  CHECK(tree.levels == 3);
  std::vector<std::string> names;
  for (const auto& node : tree.nodes)
    names.push_back(r.tenants[node.tenant].name);
  CHECK(names == std::vector<std::string>{"org", "team", "tenant-1", "tenant-0", "tenant-2"});
  CHECK(tree.nodes[0].children == std::vector<std::size_t>{1, 3});
  CHECK(tree.nodes[1].children == std::vector<std::size_t>{2});
  CHECK(tree.nodes[2].parent == std::optional<std::size_t>(1));
  CHECK_FALSE(tree.nodes[4].parent.has_value());
  CHECK(tree.nodes[2].level == 2);

  const auto& timeline = r.metrics.timeline();
  REQUIRE(tree.nodes[0].cpu.size() == timeline.size());
  int64_t busy = 0;
  for (std::size_t s = 0; s < timeline.size(); ++s) {
    const auto own = [&](std::size_t node) { return timeline[s].tenants[tree.nodes[node].tenant]; };
    CHECK(tree.nodes[1].cpu[s] == own(1).cpu + own(2).cpu);  // team: its own (none) + tenant-1
    CHECK(tree.nodes[0].cpu[s] == own(0).cpu + own(1).cpu + own(2).cpu + own(3).cpu);
    CHECK(tree.nodes[0].memory[s] == own(2).memory + own(3).memory);
    CHECK(tree.nodes[4].gpu[s] == own(4).gpu);
    busy += tree.nodes[0].cpu[s] > 0;
  }
  CHECK(busy > 0);
  const LevelUsage org = UsageOf(r, tree.nodes[0], "cpu");
  CHECK(org.peak >= UsageOf(r, tree.nodes[3], "cpu").peak);
  CHECK(org.peak > 0);

  // A flat plan has no tree.
  CHECK(BuildQuotaTree(RunPolicy(SmallSynthetic(9), "capacity")).empty());
}

TEST_CASE("report.json: per quota its parent and per level used, min and max; flat plans unchanged",
          "[sim][report][hierarchy]") {
  const SimulationInput in = SmallTree(10);
  const SimulationResult r = RunPolicy(in, "capacity");
  rapidjson::Document doc;
  doc.Parse(ReportJson(r, Context(in)).c_str());
  REQUIRE_FALSE(doc.HasParseError());
  REQUIRE(doc.HasMember("hierarchy"));
  const auto& h = doc["hierarchy"];
  CHECK(h["levels"].GetInt() == 3);
  REQUIRE(h["quotas"].Size() == 5);
  const auto& org = h["quotas"][0];
  CHECK(std::string(org["name"].GetString()) == "org");
  CHECK(std::string(org["parent"].GetString()) == "");
  CHECK(org["level"].GetInt() == 0);
  REQUIRE(org["children"].Size() == 2);
  CHECK(std::string(org["children"][0].GetString()) == "team");
  CHECK(org["min"].HasMember("cpu"));
  CHECK(org["max"].HasMember("cpu"));
  for (const char* k : {"cpu_cores", "memory_gib", "gpus"}) {
    INFO(k);
    REQUIRE(org["used"].HasMember(k));
    for (const char* f : {"peak", "mean", "samples_above_min", "samples_above_max"})
      CHECK(org["used"][k].HasMember(f));
  }
  CHECK(org["timeline"]["cpu_cores"].Size() ==
        doc["cluster"]["utilisation"]["timeline"]["t_seconds"].Size());
  const auto& leaf = h["quotas"][2];
  CHECK(std::string(leaf["name"].GetString()) == "tenant-1");
  CHECK(std::string(leaf["parent"].GetString()) == "team");
  CHECK(leaf["level"].GetInt() == 2);
  // The tenants list says each quota's parent too.
  for (const auto& t : doc["tenants"].GetArray()) {
    const std::string name = t["name"].GetString();
    const std::string parent =
        t["quota"].HasMember("parent") ? t["quota"]["parent"].GetString() : "";
    CHECK(parent == (name == "tenant-0" || name == "team" ? "org"
                     : name == "tenant-1"                 ? "team"
                                                          : ""));
  }
  // compare.json carries the levels without their timelines.
  rapidjson::Document cmp;
  cmp.Parse(CompareJson({r}, Context(in)).c_str());
  REQUIRE(cmp["results"][0].HasMember("hierarchy"));
  CHECK_FALSE(cmp["results"][0]["hierarchy"]["quotas"][0].HasMember("timeline"));

  // A flat plan: no hierarchy member, no parent, anywhere.
  const SimulationInput flat_in = SmallSynthetic(10);
  const std::string flat = ReportJson(RunPolicy(flat_in, "capacity"), Context(flat_in));
  CHECK(flat.find("\"hierarchy\"") == std::string::npos);
  CHECK(flat.find("\"parent\"") == std::string::npos);
}

TEST_CASE("report.html shows used, min and max per level for a plan with parents",
          "[sim][report][hierarchy]") {
  const SimulationInput in = SmallTree(11);
  const std::string html = ReportHtml(RunPolicy(in, "capacity"), Context(in));
  CheckSelfContained(html);
  CHECK(html.find("Quota tree: used vs min vs max per level") != std::string::npos);
  CHECK(html.find("5 quotas on 3 levels") != std::string::npos);
  CHECK(html.find("org (level 0) and its children: cpu cores used vs org's min and max") !=
        std::string::npos);
  CHECK(html.find("team (level 1) and its children") != std::string::npos);
  CHECK(html.find("org (subtree)") != std::string::npos);
  // Pure grouping quotas are charted per level, not as tenants of their own.
  CHECK(html.find("org: cpu cores used vs min and max") == std::string::npos);
  CHECK(html.find("tenant-1: cpu cores used vs min and max") != std::string::npos);

  const SimulationInput flat = SmallSynthetic(11);
  CHECK(ReportHtml(RunPolicy(flat, "capacity"), Context(flat)).find("Quota tree") ==
        std::string::npos);
}

}  // namespace
}  // namespace report_test
}  // namespace capext
