// The run/compare command lines: flag parsing and its errors, --config files, and the commands
// end to end (files written, byte-identical report.json for the same command twice).
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "bench/sim/sim_cli.h"
#include "bench/sim/sim_run_commands.h"
#include "core/admission_rule.h"
#include "tests/support/temp_dir.h"
#include "tests/support/test_paths.h"

namespace capext {
namespace cli_test {
namespace {

std::string Slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

Status Parse(const std::vector<std::string>& args, SimCliConfig* c, bool compare = false) {
  bool help = false;
  return ParseSimFlags(args, compare, c, &help);
}

TEST_CASE("run flags parse into options", "[sim][cli]") {
  SimCliConfig c;
  REQUIRE(Parse({"--synthetic", "--pods=500", "--seed", "9", "--policy", "static",
                 "--node-sampling", "all", "--resubmit-evicted", "--until", "3600", "--out", "o"},
                &c)
              .ok());
  CHECK(c.synthetic);
  CHECK(c.synthetic_options.pods == 500);
  CHECK(c.synthetic_options.seed == 9);
  CHECK(c.policies == std::vector<std::string>{"static"});
  CHECK(c.sim.sampling == NodeSampling::kAll);
  CHECK(c.sim.resubmit_evicted);
  CHECK(c.sim.until_ms == 3'600'000);
  CHECK(c.out_dir == "o");
  CHECK(c.echo.front() == std::make_pair(std::string("synthetic"), std::string("true")));
}

TEST_CASE("a run policy is a registry profile plus admission rules (--policy capacity+RULE)",
          "[sim][cli]") {
  // The test rule of tests/plugins/at_most_pods_rule.cpp, registered by its own file.
  SimCliConfig c;
  REQUIRE(
      Parse({"--synthetic", "--policy", "capacity+test-at-most-2-pods", "--out", "o"}, &c).ok());
  CHECK(c.policies == std::vector<std::string>{"capacity+test-at-most-2-pods"});
  SimProfile profile;
  REQUIRE(ResolveSimProfile(c.policies.front(), &profile).ok());
  REQUIRE(profile.semantics.extra_rules().size() == 1);
  CHECK(profile.semantics.extra_rules()[0]->name() == "test-at-most-2-pods");
  CHECK(&profile.semantics.arithmetic() == &QuotaSemantics::kCapacityExtender.arithmetic());
  SimCliConfig bad;
  const Status unknown = Parse({"--synthetic", "--policy", "capacity+nope", "--out", "o"}, &bad);
  CHECK(unknown.message().find("unknown admission rule \"nope\"") != std::string::npos);
}

TEST_CASE("run and compare take --victim-order, an order of the registry by name",
          "[sim][cli][plugins]") {
  // The test order of tests/plugins/oldest_first_order.cpp, registered by its own file.
  SimCliConfig c;
  CHECK(c.sim.victim_order == "priority-then-start-time");  // the table's default
  REQUIRE(Parse({"--synthetic", "--victim-order", "test-oldest-first", "--out", "o"}, &c).ok());
  CHECK(c.sim.victim_order == "test-oldest-first");
  SimCliConfig bad;
  const Status unknown = Parse({"--synthetic", "--victim-order", "nope", "--out", "o"}, &bad);
  CHECK_FALSE(unknown.ok());
  CHECK(unknown.message().find("test-oldest-first") != std::string::npos);
}

TEST_CASE("flag errors are clear", "[sim][cli]") {
  SimCliConfig c;
  CHECK(Parse({"--out", "o"}, &c).message() ==
        "give exactly one workload: --trace FILE or --synthetic");
  CHECK(Parse({"--synthetic"}, &c).message() == "--out DIR is required");
  CHECK(Parse({"--synthetic", "--out", "o", "--bogus"}, &c).message() ==
        "unknown flag --bogus (see --help)");
  CHECK(Parse({"--trace", "t.csv", "--out", "o"}, &c).message() ==
        "a trace needs a cluster: --nodes FILE or --cluster FILE");
  SimCliConfig d;
  CHECK(Parse({"--synthetic", "--out", "o", "--policy", "fastest"}, &d)
            .message()
            .find("unknown policy 'fastest'") == 0);
  SimCliConfig e;
  CHECK(Parse({"--synthetic", "--out", "o", "--policies", "none"}, &e).message() ==
        "unknown flag --policies (see --help)");
  SimCliConfig f;
  CHECK(Parse({"--synthetic", "--out", "o", "--pods", "-3"}, &f).message() ==
        "--pods: expected an integer >= 0, got '-3'");
  SimCliConfig g;
  CHECK(Parse({"--synthetic", "--out"}, &g).message() == "--out needs a value (DIR)");
}

TEST_CASE("a --config file supplies flags; the command line wins", "[sim][cli]") {
  testing::TempDir dir;
  const std::string cfg = dir.Write(
      "sim.yaml", "synthetic: true\npods: 700\nseed: 3\nout: from-file\npolicies: static,none\n");
  SimCliConfig c;
  REQUIRE(Parse({"--config", cfg, "--seed", "4"}, &c, true).ok());
  CHECK(c.synthetic_options.pods == 700);
  CHECK(c.synthetic_options.seed == 4);
  CHECK(c.out_dir == "from-file");
  CHECK(c.policies == std::vector<std::string>{"static", "none"});
  const std::string bad = dir.Write("bad.yaml", "pods: 7\nspeed: 11\n");
  SimCliConfig d;
  CHECK(Parse({"--config", bad}, &d, true).message() == bad + ": unknown flag 'speed'");
}

TEST_CASE("a snapshot's quota tree becomes the plan's, by namespace", "[sim][cli][hierarchy]") {
  testing::TempDir dir;
  const std::string node =
      "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus: {allocatable: {cpu: \"8\", "
      "memory: 32Gi, pods: \"110\"}}\n---\n";
  const auto quota = [](const std::string& ns, const std::string& name, const std::string& parent) {
    return "apiVersion: scheduling.x-k8s.io/v1alpha1\nkind: ElasticQuota\nmetadata:\n  name: " +
           name + "\n  namespace: " + ns +
           (parent.empty()
                ? ""
                : "\n  annotations: {scheduling.capacity-extender.io/parent: " + parent + "}") +
           "\nspec: {min: {cpu: \"2\"}, max: {cpu: \"4\"}}\n---\n";
  };
  // The parent's quota is not named after its namespace: the plan's tenant is the namespace.
  const std::string good = dir.Write(
      "good.yaml", node + quota("org", "org-quota", "") + quota("team", "team", "org/org-quota"));
  SimCliConfig c;
  REQUIRE(Parse({"--synthetic", "--pods", "10", "--cluster", good, "--out", "o"}, &c).ok());
  SimulationInput in;
  REQUIRE(LoadSimInput(c, &in).ok());
  CHECK(in.plan.tenants.at("team").parent == "org");
  CHECK(in.plan.tenants.at("org").parent.empty());
  CHECK(ElasticQuotaFor("team", in.plan.tenants.at("team"), false).parent == "org/org");

  const std::string missing =
      dir.Write("missing.yaml", node + quota("team", "team", "org/org-quota"));
  SimCliConfig m;
  REQUIRE(Parse({"--synthetic", "--pods", "10", "--cluster", missing, "--out", "o"}, &m).ok());
  SimulationInput bad;
  CHECK(LoadSimInput(m, &bad).message() ==
        "missing.yaml: ElasticQuota team/team: the parent ElasticQuota org/org-quota is not "
        "defined in the snapshot");
  // The plan's checks run on a snapshot's tree too: here a cycle.
  const std::string cycle =
      dir.Write("cycle.yaml", node + quota("a", "a", "b/b") + quota("b", "b", "a/a"));
  SimCliConfig y;
  REQUIRE(Parse({"--synthetic", "--pods", "10", "--cluster", cycle, "--out", "o"}, &y).ok());
  SimulationInput looped;
  CHECK(LoadSimInput(y, &looped)
            .message()
            .starts_with("cycle.yaml: a.parent: the hierarchy has a cycle: a/a -> b/b -> a/a"));
}

TEST_CASE("run writes its files and repeats itself byte for byte", "[sim][cli]") {
  testing::TempDir dir;
  const std::vector<std::string> base = {"--synthetic",       "--pods", "2000",
                                         "--synthetic-nodes", "10",     "--no-progress"};
  auto with_out = [&](const std::string& out) {
    auto args = base;
    args.push_back("--out");
    args.push_back(dir.path() + "/" + out);
    return args;
  };
  REQUIRE(RunRunCommand(with_out("a")) == 0);
  REQUIRE(RunRunCommand(with_out("b")) == 0);
  for (const char* f : {"report.json", "timeline.csv", "report.html", "perf.json"}) {
    CHECK(std::filesystem::exists(dir.path() + "/a/" + f));
  }
  CHECK(Slurp(dir.path() + "/a/report.json") == Slurp(dir.path() + "/b/report.json"));
  CHECK(Slurp(dir.path() + "/a/timeline.csv") == Slurp(dir.path() + "/b/timeline.csv"));
  CHECK(Slurp(dir.path() + "/a/perf.json").find("decisions_per_second") != std::string::npos);
  CHECK(RunRunCommand({"--help"}) == 0);
  CHECK(RunRunCommand({"--synthetic"}) == 2);
}

TEST_CASE("compare writes one report per policy and the side-by-side files", "[sim][cli]") {
  testing::TempDir dir;
  const std::string out = dir.path() + "/cmp";
  REQUIRE(RunCompareCommand({"--synthetic", "--pods", "1500", "--synthetic-nodes", "10",
                             "--no-progress", "--out", out, "--jobs", "2"}) == 0);
  for (const char* f :
       {"compare.json", "compare.html", "perf.json", "capacity/report.json",
        "scheduler-plugins/report.html", "static/timeline.csv", "none/report.json"}) {
    CHECK(std::filesystem::exists(out + "/" + f));
  }
  const std::string first = Slurp(out + "/compare.json");
  REQUIRE(RunCompareCommand({"--synthetic", "--pods", "1500", "--synthetic-nodes", "10",
                             "--no-progress", "--out", out, "--jobs", "1"}) == 0);
  CHECK(Slurp(out + "/compare.json") == first);  // parallelism never changes results
}

TEST_CASE("the acceptance command on the real trace: three outputs, same report.json twice",
          "[sim][cli][trace]") {
  testing::TempDir dir;
  const std::string data = capext::test::SourcePath("bench/data/alibaba-gpu-v2023/");
  auto args = [&](const std::string& out) {
    return std::vector<std::string>{
        "--trace",      data + "openb_pod_list_default.csv",
        "--nodes",      data + "openb_node_list_all_node.csv",
        "--tenants",    "qos",
        "--quotas",     capext::test::SourcePath("bench/examples/alibaba-quotas.yaml"),
        "--out",        dir.path() + "/" + out,
        "--no-progress"};
  };
  REQUIRE(RunRunCommand(args("one")) == 0);
  REQUIRE(RunRunCommand(args("two")) == 0);
  for (const char* f : {"report.json", "timeline.csv", "report.html"})
    CHECK(std::filesystem::file_size(dir.path() + "/one/" + f) > 0);
  CHECK(Slurp(dir.path() + "/one/report.json") == Slurp(dir.path() + "/two/report.json"));
}

}  // namespace
}  // namespace cli_test
}  // namespace capext
