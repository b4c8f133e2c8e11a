// The replay end to end against the API-server double and the do-nothing extender: every pod is
// created, filtered, prioritized and bound, and the double then holds each pod bound to a node
// of the cluster. Also: the node count kube-scheduler sends to filter (numFeasibleNodesToFind).
#include "bench/micro/podcost_scheduler_replay.h"

#include <rapidjson/document.h>

#include <catch2/catch.hpp>
#include <set>
#include <thread>

#include "bench/micro/podcost_noop_extender.h"
#include "bench/micro/podcost_phases.h"
#include "tests/support/temp_dir.h"
#include "tests/support/test_paths.h"

namespace capext::bench {
namespace podcost_scheduler_replay_test {
namespace {

TEST_CASE("filter gets as many nodes as kube-scheduler 1.26 searches for", "[podcost]") {
  CHECK(KubeSchedulerNodesToFind(50) == 50);
  CHECK(KubeSchedulerNodesToFind(100) == 100);     // 50% of 100 is under the minimum of 100
  CHECK(KubeSchedulerNodesToFind(500) == 230);     // 46%
  CHECK(KubeSchedulerNodesToFind(5000) == 500);    // 10%
  CHECK(KubeSchedulerNodesToFind(20000) == 1000);  // the 5% floor
}

TEST_CASE("a replay against the do-nothing extender binds every pod in the API server",
          "[podcost]") {
  capext::testing::TempDir dir;
  BenchEnvironment env;
  env.double_script = capext::test::SourcePath("tests/apiserver_double/apiserver_double.py");
  env.work_dir = dir.path();
  REQUIRE(env.objects.Load(capext::test::SourcePath("tests/fixtures/kube-scheduler")).ok());
  ApiServerDouble api;
  REQUIRE(api.Start(env.double_script, env.work_dir).ok());
  LiveClusterShape shape;
  shape.nodes = 12;
  shape.quota_min_cores = 100;
  shape.quota_min_gib = 100;
  std::vector<std::string> nodes;
  REQUIRE(FillCluster(env, api, shape, &nodes).ok());
  REQUIRE(nodes.size() == 12);

  NoopExtender extender(api.port(), std::string("Bearer ") + ApiServerDouble::kToken);
  const uint16_t port = extender.Listen();
  REQUIRE(port != 0);
  std::thread server([&] { extender.Run(); });
  SchedulerReplay replay(env.objects, nodes, port, api.port(), ApiServerDouble::AuthHeader());
  ReplayOptions options;
  options.pods = 30;
  options.pods_per_second = 0;
  const ReplayResult result = replay.Run(options);
  extender.Stop();
  server.join();
  INFO(result.first_failure);
  CHECK(result.failures == 0);
  CHECK(result.bound == 30);
  CHECK(result.names_per_filter == 12);
  CHECK(result.filter_us.n == 30);
  CHECK(result.prioritize_us.n == 30);
  CHECK(result.bind_us.n == 30);

  rapidjson::Document pods;
  REQUIRE(api.Objects("pods", &pods));
  const std::set<std::string> known(nodes.begin(), nodes.end());
  int bound = 0;
  for (const auto& pod : pods["items"].GetArray()) {
    REQUIRE(pod["spec"].HasMember("nodeName"));
    CHECK(known.count(pod["spec"]["nodeName"].GetString()) == 1);
    ++bound;
  }
  CHECK(bound == 30);
  api.Stop();
}

}  // namespace
}  // namespace podcost_scheduler_replay_test
}  // namespace capext::bench
