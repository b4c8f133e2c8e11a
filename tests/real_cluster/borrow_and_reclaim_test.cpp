// The bundled example, tests/scenarios/borrow-and-reclaim.yaml, on a real kube-apiserver and
// kube-scheduler (v1.26) with the real `capacity-extender serve` in live mode, under the
// ServiceAccount and RBAC of deploy/: two nodes, eq1 borrowing from eq2 for its NoteBooks; eq2's
// job-2 fits nowhere and no pod has a lower priority, so kube-scheduler's preemption cannot help;
// the extender's reclaim evicts eq1's Job pod job-b, never a NoteBook, and job-2 binds on n2.
// Every expectation of the file is checked (cluster_scenario.h says how a real cluster is asked).
#include <catch2/catch.hpp>
#include <chrono>
#include <iostream>
#include <sstream>
#include <string>
#include <thread>

#include "tests/real_cluster/cluster_polling.h"
#include "tests/real_cluster/cluster_scenario.h"
#include "tests/support/extender_process.h"
#include "tests/support/http_client.h"
#include "tests/support/real_control_plane.h"
#include "tests/support/test_paths.h"

namespace capext::test {
namespace borrow_and_reclaim_test {
namespace {

using namespace std::chrono_literals;

// The last `lines` lines of `text`, for failure messages.
bool WaitReady(const ExtenderProcess& extender, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (Fetch("127.0.0.1", extender.port(), "GET", "/readyz").status == 200) return true;
    std::this_thread::sleep_for(100ms);
  }
  return false;
}

TEST_CASE("borrow-and-reclaim: job-2 reclaims eq1's borrowed Job pod, never a NoteBook",
          "[real-cluster]") {
  ClusterScenario scenario;
  Status loaded =
      LoadClusterScenario(SourcePath("tests/scenarios/borrow-and-reclaim.yaml"), &scenario);
  INFO(loaded.message());
  REQUIRE(loaded.ok());
  REQUIRE(scenario.events.size() == 8);

  RealControlPlane cluster;
  std::string kubeconfig;
  Status started = cluster.StartForExtender(&kubeconfig);
  INFO(started.message());
  REQUIRE(started.ok());
  Status created = CreateScenarioCluster(scenario, &cluster);
  INFO(created.message());
  REQUIRE(created.ok());

  ExtenderProcess extender;
  REQUIRE(extender.Start({"--kubeconfig", kubeconfig, "--quota-semantics", scenario.quota_semantics,
                          "--scoring", scenario.scoring}));
  INFO("extender log:\n" << Tail(extender.Log()));
  REQUIRE(WaitReady(extender, 30s));
  SchedulerOptions options;
  options.extender_url = "http://127.0.0.1:" + std::to_string(extender.port());
  Status scheduler = cluster.StartScheduler(options);
  INFO(scheduler.message());
  REQUIRE(scheduler.ok());

  const std::vector<ScenarioResult> results = PlayScenarioEvents(scenario, &cluster, 60s);
  INFO("kube-scheduler log:\n" << Tail(cluster.Log(cluster.SchedulerLogPath())));
  REQUIRE(results.size() == scenario.expect.size());
  for (const ScenarioResult& result : results) {
    std::cout << result.line << "\n";
    INFO(result.line);
    CHECK(result.passed);
  }
  // The extender's reclaim made the eviction (kube-scheduler's preemption needs a lower-priority
  // victim, and there is none), for job-2, of job-b alone.
  std::vector<std::string> reclaims;
  std::istringstream log(extender.Log());
  for (std::string line; std::getline(log, line);) {
    if (line.find("reclaim started") != std::string::npos) reclaims.push_back(line);
  }
  REQUIRE(reclaims.size() == 1);
  CHECK(reclaims[0].find("eq2/job-2") != std::string::npos);
  CHECK(reclaims[0].find("job-b") != std::string::npos);
  CHECK(reclaims[0].find("nb-") == std::string::npos);
}

}  // namespace
}  // namespace borrow_and_reclaim_test
}  // namespace capext::test
