// bench_podcost_bench's request bodies must be the captured kube-scheduler bytes: rendering the
// capture's own values gives the capture back byte for byte; other values substitute only the
// pod's identity (and nodeName/status), and the results are valid JSON with those values.
#include "bench/micro/podcost_cluster_objects.h"

#include <rapidjson/document.h>

#include <catch2/catch.hpp>

#include "tests/support/test_paths.h"

namespace capext::bench {
namespace podcost_cluster_objects_test {
namespace {

const std::string kFixtures = capext::test::SourcePath("tests/fixtures/kube-scheduler");

TEST_CASE("the capture's own values render the capture byte for byte", "[podcost]") {
  ClusterObjects objects;
  REQUIRE(objects.Load(kFixtures).ok());
  const std::string pod =
      objects.Pod({"l1", "ext-test", "fa240c36-d199-4189-b548-c62723d9b393", "205", "",
                   R"({"phase":"Pending","qosClass":"Guaranteed"})"});
  const std::string body = objects.ExtenderArgs(pod, {"node-a", "node-b"}, 0, 2);
  CHECK(body == ReadWholeFile(kFixtures + "/filter-nodecache-001.request.raw.json"));
}

TEST_CASE("a pod renders with its own name, namespace, uid, node and status", "[podcost]") {
  ClusterObjects objects;
  REQUIRE(objects.Load(kFixtures).ok());
  const std::string pod = objects.Pod({"p-000042", "team-3", "uid-42", "777", "worker-pool-a-00007",
                                       ClusterObjects::RunningStatus()});
  rapidjson::Document doc;
  doc.Parse(pod.c_str());
  REQUIRE_FALSE(doc.HasParseError());
  CHECK(std::string(doc["metadata"]["name"].GetString()) == "p-000042");
  CHECK(std::string(doc["metadata"]["namespace"].GetString()) == "team-3");
  CHECK(std::string(doc["metadata"]["uid"].GetString()) == "uid-42");
  CHECK(std::string(doc["metadata"]["resourceVersion"].GetString()) == "777");
  CHECK(std::string(doc["spec"]["nodeName"].GetString()) == "worker-pool-a-00007");
  CHECK(std::string(doc["status"]["phase"].GetString()) == "Running");
  const std::string applied =
      doc["metadata"]["annotations"]["kubectl.kubernetes.io/last-applied-configuration"]
          .GetString();
  CHECK(applied.find(R"("name":"p-000042","namespace":"team-3")") != std::string::npos);
  CHECK(pod.find("l1") == std::string::npos);
  CHECK(pod.find("ext-test") == std::string::npos);
  CHECK(std::string(doc["spec"]["containers"][0]["resources"]["requests"]["cpu"].GetString()) ==
        "3");

  // Without a node, no nodeName member at all (as the API server omits it).
  const std::string pending =
      objects.Pod({"p-1", "team-0", "u", "1", "", ClusterObjects::UnschedulableStatus(500)});
  doc.Parse(pending.c_str());
  REQUIRE_FALSE(doc.HasParseError());
  CHECK_FALSE(doc["spec"].HasMember("nodeName"));
  CHECK(std::string(doc["status"]["conditions"][0]["reason"].GetString()) == "Unschedulable");
}

TEST_CASE("node-name lists rotate through the cluster as kube-scheduler's search does",
          "[podcost]") {
  ClusterObjects objects;
  REQUIRE(objects.Load(kFixtures).ok());
  const std::vector<std::string> names = {"a", "b", "c", "d"};
  const std::string body = objects.ExtenderArgs("{}", names, 3, 3);
  CHECK(body == R"({"Pod":{},"Nodes":null,"NodeNames":["d","a","b"]})");
}

TEST_CASE("a node renders with its name, zone and size", "[podcost]") {
  ClusterObjects objects;
  REQUIRE(objects.Load(kFixtures).ok());
  rapidjson::Document doc;
  const std::string node = objects.Node("worker-pool-a-00001", "us-east-1b", "64", "256Gi");
  doc.Parse(node.c_str());
  REQUIRE_FALSE(doc.HasParseError());
  CHECK(std::string(doc["metadata"]["name"].GetString()) == "worker-pool-a-00001");
  CHECK(std::string(doc["metadata"]["labels"]["kubernetes.io/hostname"].GetString()) ==
        "worker-pool-a-00001");
  CHECK(std::string(doc["metadata"]["labels"]["topology.kubernetes.io/zone"].GetString()) ==
        "us-east-1b");
  CHECK(std::string(doc["status"]["allocatable"]["cpu"].GetString()) == "64");
  CHECK(std::string(doc["status"]["capacity"]["memory"].GetString()) == "256Gi");
  CHECK(node.find("node-a") == std::string::npos);
}

TEST_CASE("a template refuses a capture whose substituted text changed", "[podcost]") {
  TextTemplate t;
  const Status twice = t.Make(R"({"name":"x","name":"x"})", {{R"("name":"x")", 0, 1}});
  CHECK_FALSE(twice.ok());
  CHECK(twice.message().find("occurs 2 times, expected 1") != std::string::npos);
  REQUIRE(t.Make(R"({"name":"x","other":"x"})", {{R"("name":"x")", 0, 1}}).ok());
  CHECK(t.Render({R"("name":"y")"}) == R"({"name":"y","other":"x"})");
  ClusterObjects objects;
  CHECK_FALSE(objects.Load("/nonexistent").ok());
}

}  // namespace
}  // namespace podcost_cluster_objects_test
}  // namespace capext::bench
