// `capacity-extender explain` (extender/explain_command.cpp) picks its plugins by name as serve
// does: --admission-rules runs the registry's extra rules, so the test rule of
// tests/plugins/at_most_pods_rule.cpp appears in the explanation with no edit of the command;
// an unknown name is refused with the known ones.
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "extender/commands.h"
#include "tests/support/temp_dir.h"

namespace capext {
namespace explain_command_test {
namespace {

struct Ran {
  int code = 0;
  std::string out, err;
};

Ran Explain(const std::vector<std::string>& args) {
  std::ostringstream out, err;
  std::streambuf* old_out = std::cout.rdbuf(out.rdbuf());
  std::streambuf* old_err = std::cerr.rdbuf(err.rdbuf());
  Ran r;
  r.code = RunExplainCommand(args);
  std::cout.rdbuf(old_out);
  std::cerr.rdbuf(old_err);
  r.out = out.str();
  r.err = err.str();
  return r;
}

// A 1-cpu pod of eq1 in the bundled example cluster, where eq1 runs 4 pods (used cpu 8 of max
// 10, mins 6 + 12): the built-in rules admit it; the test rule (at most 2 pods) does not.
constexpr const char* kPod = R"(apiVersion: v1
kind: Pod
metadata: {name: extra, namespace: eq1, uid: u-extra}
spec:
  containers: [{name: c, image: nginx, resources: {requests: {cpu: "1"}}}]
)";

TEST_CASE("explain runs the admission rules --admission-rules names", "[plugins][explain]") {
  testing::TempDir dir;
  const std::string pod = dir.Write("pod.yaml", kPod);

  const Ran plain = Explain({"-f", pod});
  INFO(plain.out << plain.err);
  REQUIRE(plain.code == 0);
  CHECK(plain.out.find("test limit") == std::string::npos);

  const Ran with_rule = Explain({"--admission-rules", "test-at-most-2-pods", "-f", pod});
  INFO(with_rule.out << with_rule.err);
  REQUIRE(with_rule.code == 0);
  CHECK(with_rule.out.find("test limit of 2 pods: pods used 4 + request 1 > 2") !=
        std::string::npos);

  const Ran json = Explain({"--admission-rules", "test-at-most-2-pods", "-o", "json", "-f", pod});
  REQUIRE(json.code == 0);
  CHECK(json.out.find("test limit of 2 pods") != std::string::npos);
}

// One 4-cpu node; eq1 {min 2, max 4} runs a (started first) and b, 2 cpu each, borrowing 2 of
// eq2's idle min; eq2's 2-cpu pod x is within its min, so one of eq1's two equal pods must go.
constexpr const char* kTwoEqualVictims = R"(apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "10"}}
---
apiVersion: scheduling.x-k8s.io/v1alpha1
kind: ElasticQuota
metadata: {name: eq1, namespace: eq1}
spec: {min: {cpu: "2"}, max: {cpu: "4"}}
---
apiVersion: scheduling.x-k8s.io/v1alpha1
kind: ElasticQuota
metadata: {name: eq2, namespace: eq2}
spec: {min: {cpu: "2"}, max: {cpu: "4"}}
---
apiVersion: v1
kind: Pod
metadata: {name: a, namespace: eq1, uid: u-a, creationTimestamp: "2026-01-01T00:00:00Z"}
spec: {nodeName: n1, containers: [{name: c, image: nginx, resources: {requests: {cpu: "2"}}}]}
status: {phase: Running, startTime: "2026-01-01T00:00:00Z"}
---
apiVersion: v1
kind: Pod
metadata: {name: b, namespace: eq1, uid: u-b, creationTimestamp: "2026-01-01T00:00:10Z"}
spec: {nodeName: n1, containers: [{name: c, image: nginx, resources: {requests: {cpu: "2"}}}]}
status: {phase: Running, startTime: "2026-01-01T00:00:10Z"}
)";

constexpr const char* kClaimant = R"(apiVersion: v1
kind: Pod
metadata: {name: x, namespace: eq2, uid: u-x}
spec:
  containers: [{name: c, image: nginx, resources: {requests: {cpu: "2"}}}]
)";

TEST_CASE("explain runs the victim order --victim-order names", "[plugins][explain]") {
  // The test order of tests/plugins/oldest_first_order.cpp, registered by its own file.
  testing::TempDir dir;
  const std::string snapshot = dir.Write("cluster.yaml", kTwoEqualVictims);
  const std::string pod = dir.Write("pod.yaml", kClaimant);
  const auto victims = [&](const std::vector<std::string>& extra) {
    std::vector<std::string> args = {"--snapshot", snapshot, "-o", "json", "-f", pod};
    args.insert(args.begin(), extra.begin(), extra.end());
    const Ran r = Explain(args);
    INFO(r.out << r.err);
    REQUIRE(r.code == 0);
    const auto at = r.out.find("\"victims\"");
    REQUIRE(at != std::string::npos);
    return r.out.substr(at, r.out.find(']', at) - at);
  };
  // kube-scheduler's order: the most recently started goes first; the test order: the oldest.
  const std::string by_default = victims({});
  CHECK(by_default.find("eq1/b") != std::string::npos);
  CHECK(by_default.find("eq1/a") == std::string::npos);
  const std::string oldest_first = victims({"--victim-order", "test-oldest-first"});
  CHECK(oldest_first.find("eq1/a") != std::string::npos);
  CHECK(oldest_first.find("eq1/b") == std::string::npos);
}

TEST_CASE("explain refuses an unknown admission rule or victim order, naming the known ones",
          "[plugins][explain]") {
  testing::TempDir dir;
  const std::string pod = dir.Write("pod.yaml", kPod);
  const Ran rule = Explain({"--admission-rules", "no-such-rule", "-f", pod});
  CHECK(rule.code == 2);
  CHECK(rule.err.find("unknown admission rule \"no-such-rule\"") != std::string::npos);
  CHECK(rule.err.find("test-at-most-2-pods") != std::string::npos);

  const Ran order = Explain({"--victim-order", "no-such-order", "-f", pod});
  CHECK(order.code == 2);
  CHECK(order.err.find("priority-then-start-time") != std::string::npos);
  CHECK(order.err.find("priority-then-largest-first") != std::string::npos);

  const Ran other = Explain({"--victim-order", "priority-then-largest-first", "-f", pod});
  CHECK(other.code == 0);
}

}  // namespace
}  // namespace explain_command_test
}  // namespace capext
