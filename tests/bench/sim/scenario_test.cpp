// The scenario runner: file loading and its errors, durations, pass/fail reporting, the exit codes
// of `capacity-sim scenario`, and determinism (the same file twice gives byte-identical output).
#include "bench/sim/scenario.h"

#include <fmt/format.h>
#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "bench/sim/sim_commands.h"
#include "tests/support/test_paths.h"

namespace capext {
namespace scenario_test {
namespace {

// The bundled example (docs/scenarios.md), once called seed-002.
const std::string kBorrowAndReclaim =
    capext::test::SourcePath("tests/scenarios/borrow-and-reclaim.yaml");

std::string WriteTempFile(const std::string& name, const std::string& text) {
  const std::string path = capext::test::BinaryDir() + "/scenario_test_" + name + ".yaml";
  std::ofstream out(path);
  out << text;
  return path;
}

Scenario MustLoad(const std::string& path) {
  Scenario scenario;
  Status s = LoadScenarioFile(path, &scenario);
  INFO(s.message());
  REQUIRE(s.ok());
  return scenario;
}

std::string Run(const Scenario& scenario, ScenarioReport* report = nullptr) {
  std::ostringstream out;
  ScenarioReport r = RunScenario(scenario, out);
  if (report) *report = r;
  return out.str();
}

// Runs `capacity-sim scenario ARGS...` in-process, capturing stdout.
int RunCommand(const std::vector<std::string>& args, std::string* output) {
  std::ostringstream captured;
  std::streambuf* old = std::cout.rdbuf(captured.rdbuf());
  const int code = RunScenarioCommand(args);
  std::cout.rdbuf(old);
  *output = captured.str();
  return code;
}

// Two nodes of 4 cpu; eq1 {min 4, max 4}.
const char* const kSmallCluster = R"(
cluster:
  - {apiVersion: v1, kind: Node, metadata: {name: n1}, status: {allocatable: {cpu: "4", memory: 8Gi, pods: "10"}}}
  - {apiVersion: v1, kind: Node, metadata: {name: n2}, status: {allocatable: {cpu: "4", memory: 8Gi, pods: "10"}}}
  - {apiVersion: scheduling.x-k8s.io/v1alpha1, kind: ElasticQuota, metadata: {name: eq1, namespace: eq1},
     spec: {min: {cpu: "4"}, max: {cpu: "4"}}}
)";

std::string PodYaml(const std::string& name, const std::string& cpu) {
  return "{apiVersion: v1, kind: Pod, metadata: {name: " + name +
         ", namespace: eq1}, spec: {containers: [{name: c, resources: {requests: {cpu: \"" + cpu +
         "\"}}}]}}";
}

TEST_CASE("ParseDurationMs", "[scenario]") {
  struct Case {
    std::string text;
    bool ok;
    int64_t ms;
  };
  const std::vector<Case> cases = {
      {"30s", true, 30000}, {"2m", true, 120000}, {"1h30m", true, 5400000},
      {"500ms", true, 500}, {"0s", true, 0},      {"1m30s250ms", true, 90250},
      {"", false, 0},       {"30", false, 0},     {"1.5s", false, 0},
      {"-1s", false, 0},    {"5d", false, 0},     {"s", false, 0},
  };
  for (const auto& c : cases) {
    INFO(c.text);
    int64_t ms = -7;
    CHECK(ParseDurationMs(c.text, &ms) == c.ok);
    if (c.ok) CHECK(ms == c.ms);
  }
}

TEST_CASE("the bundled borrow-and-reclaim scenario loads and passes", "[scenario]") {
  Scenario scenario = MustLoad(kBorrowAndReclaim);
  CHECK(scenario.name == "borrow-and-reclaim");
  CHECK(scenario.quota_semantics == "capacity-extender");
  CHECK(scenario.cluster.nodes.size() == 3);
  CHECK(scenario.cluster.quotas.size() == 2);
  REQUIRE(scenario.events.size() == 8);
  CHECK(scenario.events[0].kind == ScenarioEvent::Kind::kCreate);
  CHECK(scenario.events[0].pods.front().Key() == "eq1/job-a");
  CHECK(scenario.expect.size() == 8);
  CHECK(scenario.expect.at(5).evicted == std::vector<std::string>{"eq1/job-b"});

  ScenarioReport report;
  std::string output = Run(scenario, &report);
  CHECK(report.passed == 8);
  CHECK(report.failed == 0);
  CHECK_THAT(output, Catch::Contains("PASS borrow-and-reclaim event 5 (create eq2/job-2): "
                                     "eq2/job-2 bound to n2, eq1/job-b evicted"));
}

TEST_CASE("running the same file twice gives byte-identical output", "[scenario]") {
  std::vector<std::string> files;
  for (const auto& entry :
       std::filesystem::directory_iterator(capext::test::SourcePath("tests/scenarios"))) {
    if (entry.path().extension() == ".yaml") files.push_back(entry.path().string());
  }
  std::sort(files.begin(), files.end());
  REQUIRE(std::find(files.begin(), files.end(), kBorrowAndReclaim) != files.end());
  for (const auto& path : files) {
    INFO(path);
    std::string first = Run(MustLoad(path));
    std::string second = Run(MustLoad(path));
    CHECK_FALSE(first.empty());
    CHECK(first == second);
  }
}

TEST_CASE("a broken expectation is reported as FAIL with what happened", "[scenario]") {
  const std::string path =
      WriteTempFile("failing", std::string("name: failing\n") + kSmallCluster +
                                   "events:\n  - create: " + PodYaml("a", "3") +
                                   "\n  - create: " + PodYaml("b", "2") + R"(
expect:
  0: {bound: {eq1/a: n2}}
  1: {bound: {eq1/b: n1}, evicted: [eq1/a]}
)");
  ScenarioReport report;
  std::string output = Run(MustLoad(path), &report);
  CHECK(report.passed == 0);
  CHECK(report.failed == 2);
  // a lands on n1 (least-allocated, then the first name).
  CHECK_THAT(output, Catch::Contains("FAIL failing event 0 (create eq1/a): eq1/a bound to n2 -- "
                                     "eq1/a is bound to n1"));
  // b would take eq1 to 5 > max 4.
  CHECK_THAT(output, Catch::Contains("eq1/b is pending: pod eq1/b rejected: ElasticQuota eq1/eq1 "
                                     "would exceed max: cpu used 3 + request 2 > max 4"));
  CHECK_THAT(output, Catch::Contains("eq1/a was not evicted"));
}

TEST_CASE("delete and advance events", "[scenario]") {
  const std::string path =
      WriteTempFile("delete_advance", std::string("name: delete-advance\n") + kSmallCluster +
                                          "events:\n  - create: " + PodYaml("a", "3") +
                                          "\n  - create: " + PodYaml("b", "2") + R"(
  - advance: 10m
  - delete: eq1/a
  - delete: eq1/missing
expect:
  1: {pending: {eq1/b: "exceed max"}}
  2: {pending: {eq1/b: "cpu used 3 + request 2 > max 4"}}
  3: {bound: {eq1/b: n1}}
  4: {untouched: [eq1/b]}
)");
  Scenario scenario = MustLoad(path);
  REQUIRE(scenario.events.size() == 5);
  CHECK(scenario.events[2].kind == ScenarioEvent::Kind::kAdvance);
  CHECK(scenario.events[2].advance_ms == 600000);
  CHECK(scenario.events[3].kind == ScenarioEvent::Kind::kDelete);
  CHECK(scenario.events[3].target == "eq1/a");
  ScenarioReport report;
  std::string output = Run(scenario, &report);
  INFO(output);
  CHECK(report.passed == 4);
  CHECK(report.failed == 0);
}

TEST_CASE("the quotaSemantics of a scenario is honoured", "[scenario]") {
  // A max listing only cpu: scheduler-plugins rejects a memory-requesting pod.
  const std::string body = std::string(kSmallCluster) + R"(events:
  - create: {apiVersion: v1, kind: Pod, metadata: {name: m, namespace: eq1},
             spec: {containers: [{name: c, resources: {requests: {cpu: "1", memory: 1Mi}}}]}}
)";
  Scenario extender = MustLoad(WriteTempFile(
      "semantics_extender", "name: s\n" + body + "expect:\n  0: {bound: {eq1/m: n1}}\n"));
  ScenarioReport r1;
  Run(extender, &r1);
  CHECK(r1.passed == 1);

  Scenario plugins = MustLoad(
      WriteTempFile("semantics_plugins",
                    "name: s\nquotaSemantics: scheduler-plugins\n" + body +
                        "expect:\n  0: {pending: {eq1/m: \"memory request 1Mi > max 0\"}}\n"));
  CHECK(plugins.quota_semantics == "scheduler-plugins");
  ScenarioReport r2;
  std::string output = Run(plugins, &r2);
  INFO(output);
  CHECK(r2.passed == 1);

  Scenario unknown =
      MustLoad(WriteTempFile("semantics_unknown", "name: s\nquotaSemantics: lax\n" + body));
  ScenarioReport r3;
  CHECK_THAT(Run(unknown, &r3),
             Catch::Contains("FAIL s: unknown quotaSemantics (expected capacity-extender"));
  CHECK(r3.failed == 1);
}

TEST_CASE("pod groups in a scenario file: PodGroups, createGroup, gated, admission",
          "[scenario][groups]") {
  const std::string path = WriteTempFile("groups", std::string(R"(name: groups
admission: gate
recreateEvicted: true
cluster:
  - {apiVersion: scheduling.x-k8s.io/v1alpha1, kind: PodGroup, metadata: {name: train, namespace: eq1},
     spec: {minMember: 3, scheduleTimeoutSeconds: 30}}
events:
  - createGroup:
      podGroup: eq1/train
      replicas: 3
      template: {apiVersion: v1, kind: Pod,
                 metadata: {labels: {app: t}, creationTimestamp: "2026-01-01T00:00:00Z"},
                 spec: {containers: [{name: c, resources: {requests: {cpu: "1"}}}]}}
  - create: {apiVersion: scheduling.x-k8s.io/v1alpha1, kind: PodGroup,
             metadata: {name: late, namespace: eq1}, spec: {minMember: 2}}
expect:
  0: {gated: {eq1/train-2: "gang"}, bound: {eq1/train-0: "*"}}
)"));
  const Scenario scenario = MustLoad(path);
  CHECK(scenario.admission == ScenarioAdmission::kGate);
  CHECK(scenario.recreate_evicted);
  REQUIRE(scenario.pod_groups.size() == 1);
  CHECK(scenario.pod_groups[0].ns == "eq1");
  CHECK(scenario.pod_groups[0].name == "train");
  CHECK(scenario.pod_groups[0].min_member == 3);
  CHECK(scenario.pod_groups[0].schedule_timeout_ms == 30'000);
  REQUIRE(scenario.events.size() == 2);
  const ScenarioEvent& group = scenario.events[0];
  CHECK(group.kind == ScenarioEvent::Kind::kCreateGroup);
  CHECK(group.target == "eq1/train");
  REQUIRE(group.pods.size() == 3);
  for (int i = 0; i < 3; ++i) {
    const Pod& pod = group.pods[static_cast<std::size_t>(i)];
    CHECK(pod.Key() == "eq1/train-" + std::to_string(i));
    CHECK(pod.uid == pod.Key());
    CHECK(pod.labels.at("scheduling.x-k8s.io/pod-group") == "train");
    CHECK(pod.labels.at("app") == "t");
    CHECK(pod.requests.Get("cpu") == 1000);
  }
  CHECK(scenario.events[1].kind == ScenarioEvent::Kind::kCreatePodGroup);
  CHECK(scenario.events[1].pod_group.name == "late");
  CHECK(scenario.events[1].pod_group.min_member == 2);
  const ScenarioExpectation& e = scenario.expect.at(0);
  CHECK(e.gated.at("eq1/train-2") == "gang");
  CHECK(e.bound.at("eq1/train-0") == "*");
}

// One 4-cpu node; eq1 {min 2, max 4} runs a (started first) and b, 2 cpu each, borrowing 2 of
// eq2's idle min; eq2's 2-cpu pod x is within its min, so one of eq1's two equal pods must go.
std::string VictimOrderScenario(const std::string& order, const std::string& evicted,
                                const std::string& kept) {
  std::string text = R"(
name: victim-order
cluster:
  - {apiVersion: v1, kind: Node, metadata: {name: n1}, status: {allocatable: {cpu: "4", memory: 8Gi, pods: "10"}}}
  - {apiVersion: scheduling.x-k8s.io/v1alpha1, kind: ElasticQuota, metadata: {name: eq1, namespace: eq1},
     spec: {min: {cpu: "2"}, max: {cpu: "4"}}}
  - {apiVersion: scheduling.x-k8s.io/v1alpha1, kind: ElasticQuota, metadata: {name: eq2, namespace: eq2},
     spec: {min: {cpu: "2"}, max: {cpu: "4"}}}
events:
  - create: {apiVersion: v1, kind: Pod, metadata: {name: a, namespace: eq1, uid: u-a, creationTimestamp: "2026-01-01T00:00:00Z"},
             spec: {containers: [{name: c, resources: {requests: {cpu: "2"}}}]}}
  - create: {apiVersion: v1, kind: Pod, metadata: {name: b, namespace: eq1, uid: u-b, creationTimestamp: "2026-01-01T00:00:10Z"},
             spec: {containers: [{name: c, resources: {requests: {cpu: "2"}}}]}}
  - create: {apiVersion: v1, kind: Pod, metadata: {name: x, namespace: eq2, uid: u-x, creationTimestamp: "2026-01-01T00:00:20Z"},
             spec: {containers: [{name: c, resources: {requests: {cpu: "2"}}}]}}
expect:
  2: {evicted: [eq1/EVICTED], bound: {eq2/x: n1}, untouched: [eq1/KEPT]}
)";
  if (!order.empty()) text = "victimOrder: " + order + "\n" + text;
  text.replace(text.find("EVICTED"), 7, evicted);
  text.replace(text.find("KEPT"), 4, kept);
  return text;
}

TEST_CASE("a scenario's victimOrder runs a registered order by name", "[scenario][plugins]") {
  // The test order of tests/plugins/oldest_first_order.cpp, registered by its own file: the
  // simulator runs it with no edit, and it changes which victim goes first.
  struct Case {
    std::string order, evicted, kept;
    int failed;
  };
  const std::vector<Case> cases = {
      {"", "b", "a", 0},  // the default: the most recently started goes first
      {"priority-then-start-time", "b", "a", 0},
      {"test-oldest-first", "a", "b", 0},
      {"test-oldest-first", "b", "a", 1},  // the default's expectation fails under the test order
  };
  for (const auto& c : cases) {
    INFO("victimOrder '" << c.order << "', expecting " << c.evicted << " evicted");
    Scenario scenario;
    REQUIRE(ParseScenarioText(VictimOrderScenario(c.order, c.evicted, c.kept), "victim-order.yaml",
                              &scenario)
                .ok());
    ScenarioReport report;
    const std::string output = Run(scenario, &report);
    INFO(output);
    CHECK(report.failed == c.failed);
    CHECK(report.passed == 1 - c.failed);
  }
  Scenario unknown;
  REQUIRE(
      ParseScenarioText(VictimOrderScenario("no-such-order", "b", "a"), "v.yaml", &unknown).ok());
  ScenarioReport report;
  const std::string output = Run(unknown, &report);
  CHECK(report.failed == 1);
  CHECK_THAT(output, Catch::Contains("test-oldest-first"));
}

TEST_CASE("bound to \"*\" means bound to any node", "[scenario]") {
  const std::string path =
      WriteTempFile("any_node", std::string("name: any-node\n") + kSmallCluster +
                                    "events:\n  - create: " + PodYaml("a", "3") +
                                    "\n  - create: " + PodYaml("b", "2") + R"(
expect:
  0: {bound: {eq1/a: "*"}}
  1: {bound: {eq1/b: "*"}}
)");
  ScenarioReport report;
  const std::string output = Run(MustLoad(path), &report);
  INFO(output);
  CHECK(report.passed == 1);
  CHECK(report.failed == 1);
  CHECK_THAT(output, Catch::Contains("eq1/b is pending: pod eq1/b rejected"));
}

TEST_CASE("scenario file errors", "[scenario]") {
  struct Case {
    std::string description;
    std::string text;
    std::string want;
  };
  const std::vector<Case> cases = {
      {"two documents", "name: a\n---\nname: b\n", "expected one YAML document"},
      {"cluster not a list", "name: a\ncluster: {}\n", "cluster: expected a list of objects"},
      {"a bad cluster object",
       "name: a\ncluster:\n  - {kind: Node, metadata: {name: n1}, status: {allocatable: {cpu: "
       "x}}}\n",
       "cluster[0] (Node n1): status.allocatable.cpu"},
      {"an event of no known kind", "name: a\nevents:\n  - sleep: 1s\n",
       "events[0]: expected one of create, createGroup, delete, advance"},
      {"a bad pod in an event",
       "name: a\nevents:\n  - create: {metadata: {name: p}, spec: {priority: high}}\n",
       "events[0].create: spec.priority: expected integer"},
      {"a bad duration", "name: a\nevents:\n  - advance: soon\n",
       "events[0].advance: expected a duration such as 30s"},
      {"an expectation for a missing event",
       "name: a\nevents:\n  - advance: 1s\nexpect:\n  1: {bound: {}}\n",
       "expect.1: not an event index"},
      {"an unknown expectation", "name: a\nevents:\n  - advance: 1s\nexpect:\n  0: {running: []}\n",
       "expect.0.running: unknown expectation (bound, evicted, untouched, pending, gated)"},
      {"an unknown admission mode", "name: a\nadmission: webhook\n",
       "admission: expected gate or filter"},
      {"recreateEvicted not a boolean", "name: a\nrecreateEvicted: yes please\n",
       "recreateEvicted: expected true or false"},
      {"createGroup without a namespace",
       "name: a\nevents:\n  - createGroup: {podGroup: train, replicas: 2, template: {}}\n",
       "events[0].createGroup.podGroup: expected namespace/name"},
      {"createGroup without replicas",
       "name: a\nevents:\n  - createGroup: {podGroup: eq1/train, template: {}}\n",
       "events[0].createGroup.replicas: expected a count from 1 to 10000"},
      {"createGroup with a named template",
       "name: a\nevents:\n  - createGroup: {podGroup: eq1/train, replicas: 1, template: "
       "{metadata: {name: x}}}\n",
       "events[0].createGroup.template.metadata.name: the pods are named <group>-<index>"},
      {"createGroup with a template of another namespace",
       "name: a\nevents:\n  - createGroup: {podGroup: eq1/train, replicas: 1, template: "
       "{metadata: {namespace: eq2}}}\n",
       "template.metadata.namespace: must be the group's namespace"},
      {"a PodGroup without minMember",
       "name: a\ncluster:\n  - {apiVersion: scheduling.x-k8s.io/v1alpha1, kind: PodGroup, "
       "metadata: {name: g, namespace: eq1}, spec: {}}\n",
       "cluster[0].spec.minMember: expected a count >= 0"},
      {"gated not a map", "name: a\nevents:\n  - advance: 1s\nexpect:\n  0: {gated: [eq1/a]}\n",
       "expect.0.gated: expected a map of namespace/name to text"},
      {"evicted not a list", "name: a\nevents:\n  - advance: 1s\nexpect:\n  0: {evicted: eq1/a}\n",
       "expect.0.evicted: expected a list of namespace/name"},
  };
  for (const auto& c : cases) {
    INFO(c.description);
    const std::string path = WriteTempFile("error", c.text);
    Scenario scenario;
    Status s = LoadScenarioFile(path, &scenario);
    REQUIRE_FALSE(s.ok());
    CHECK_THAT(s.message(), Catch::Contains(c.want));
    CHECK_THAT(s.message(), Catch::Contains(path));
  }
}

TEST_CASE("capacity-sim scenario exit codes and summary", "[scenario]") {
  std::string output;
  CHECK(RunCommand({kBorrowAndReclaim}, &output) == 0);
  CHECK_THAT(output, Catch::EndsWith("8 passed, 0 failed\n"));

  const std::string failing =
      WriteTempFile("exit_failing", std::string("name: f\n") + kSmallCluster +
                                        "events:\n  - create: " + PodYaml("a", "1") +
                                        "\nexpect:\n  0: {bound: {eq1/a: n9}}\n");
  CHECK(RunCommand({kBorrowAndReclaim, failing}, &output) == 1);
  CHECK_THAT(output, Catch::EndsWith("8 passed, 1 failed\n"));

  CHECK(RunCommand({kBorrowAndReclaim, "/nonexistent/scenario.yaml"}, &output) == 2);
  CHECK_THAT(output, Catch::Contains("ERROR /nonexistent/scenario.yaml: cannot open"));
  CHECK_THAT(output, Catch::EndsWith("8 passed, 0 failed\n"));

  CHECK(RunCommand({}, &output) == 2);
  CHECK(RunCommand({"--help"}, &output) == 0);
  CHECK_THAT(output,
             Catch::StartsWith("usage: capacity-sim scenario [--quota-semantics NAME] FILE..."));
}

TEST_CASE("capacity-sim scenario --quota-semantics: for files that do not name theirs",
          "[scenario]") {
  // A max listing only cpu: under scheduler-plugins a memory-requesting pod is rejected (max
  // memory 0); under capacity-extender memory is not governed and the pod binds.
  const std::string body = std::string(kSmallCluster) + R"(events:
  - create: {apiVersion: v1, kind: Pod, metadata: {name: m, namespace: eq1},
             spec: {containers: [{name: c, resources: {requests: {cpu: "1", memory: 1Mi}}}]}}
)";
  const std::string written_for_reference = WriteTempFile(
      "flag_reference", "name: for-reference\n" + body +
                            "expect:\n  0: {pending: {eq1/m: \"memory request 1Mi > max 0\"}}\n");
  const std::string written_for_extender =
      WriteTempFile("flag_extender", "name: for-extender\nquotaSemantics: capacity-extender\n" +
                                         body + "expect:\n  0: {bound: {eq1/m: n1}}\n");
  std::string output;

  // Without the flag a file without the key runs under capacity-extender: the expectation fails.
  CHECK(RunCommand({written_for_reference}, &output) == 1);
  CHECK_THAT(output, Catch::EndsWith("0 passed, 1 failed\n"));

  for (const std::vector<std::string>& flag :
       {std::vector<std::string>{"--quota-semantics", "scheduler-plugins"},
        std::vector<std::string>{"--quota-semantics=scheduler-plugins"}}) {
    std::vector<std::string> args = flag;
    args.push_back(written_for_reference);
    args.push_back(written_for_extender);
    INFO(flag[0]);
    CHECK(RunCommand(args, &output) == 0);
    INFO(output);
    CHECK_THAT(output, Catch::Contains("PASS for-reference event 0"));
    // The file that names its semantics keeps them, and says so.
    CHECK_THAT(output, Catch::Contains("NOTE for-extender: runs with quotaSemantics "
                                       "capacity-extender as the file says (--quota-semantics "
                                       "scheduler-plugins is for files without the key)"));
    CHECK_THAT(output, Catch::Contains("PASS for-extender event 0"));
    CHECK_THAT(output, Catch::EndsWith("2 passed, 0 failed\n"));
  }
  // Naming the default changes nothing and notes nothing.
  CHECK(RunCommand({"--quota-semantics", "capacity-extender", written_for_extender}, &output) == 0);
  CHECK_THAT(output, !Catch::Contains("NOTE"));

  // Bad usage: exit 2, nothing run.
  for (const std::vector<std::string>& bad :
       {std::vector<std::string>{"--quota-semantics", "lax", written_for_reference},
        std::vector<std::string>{written_for_reference, "--quota-semantics"},
        std::vector<std::string>{"--semantics=scheduler-plugins", written_for_reference}}) {
    INFO(bad[0]);
    CHECK(RunCommand(bad, &output) == 2);
    CHECK(output.empty());
  }
}

}  // namespace
}  // namespace scenario_test
}  // namespace capext

namespace capext {
namespace scenario_test {
namespace {

// Issue 21's "No loops" in the simulator, gate mode
// (docs/reclaim-plan.md#4-why-the-rules-cannot-cycle): the worked example with controllers
// re-creating every victim, 10 simulated minutes. One plan, one eviction round (its 4 victims are
// every eviction of the run), nothing wasted (the plan's pods bind), and no gang is ever below its
// minMember once it started.
TEST_CASE("gate mode: a gated gang's plan, re-created victims, 10 minutes: one eviction round",
          "[scenario][groups][reclaim-plan]") {
  const Scenario scenario =
      MustLoad(capext::test::SourcePath("tests/scenarios/groups/gang-reclaim-no-loop-gate.yaml"));
  REQUIRE(scenario.recreate_evicted);
  std::vector<std::string> broken;
  std::ostringstream out;
  const ScenarioReport report =
      RunScenario(scenario, out, [&](std::size_t event, const ClusterState& state) {
        state.ForEachGroup([&](const GroupView& g) {
          if (g.IsGang() && g.bound > 0 && g.bound < g.min_member)
            broken.push_back(fmt::format("event {}: {} has {} of {} bound", event, g.key.Display(),
                                         g.bound, g.min_member));
        });
      });
  INFO(out.str());
  CHECK(report.failed == 0);
  CHECK(report.passed == 3);
  CHECK(report.gang_plans == 1);
  CHECK(report.gang_plan_victims == 4);
  CHECK(report.evictions == 4);  // the plan's victims, and nothing after them
  CHECK(report.wasted_evictions == 0);
  CHECK(broken.empty());
}

}  // namespace
}  // namespace scenario_test
}  // namespace capext
