// reserveAt: filter on a real kube-apiserver and kube-scheduler 1.26, with the real
// `capacity-extender serve` in live mode
// (docs/capacity-semantics.md#6-accounting-used-reservations-nominations, "Or at /filter"):
// kube-scheduler's extender entry names filter alone and kube-scheduler binds every pod itself.
// Ten pods of one namespace reach the scheduler at once against a quota with room for four (its
// max; another namespace's idle min lends the room above its own min): the
// holds /filter takes keep exactly four bound, however kube-scheduler's binder interleaves, and
// the other six wait with the max in their reason. When two bound pods are deleted, two more
// bind: the holds became usage when the pods were seen bound, and nothing stayed held.
// No kubelet: "runs" means bound.
#include <catch2/catch.hpp>
#include <chrono>
#include <string>
#include <thread>

#include "tests/real_cluster/bound_pods.h"
#include "tests/real_cluster/cluster_polling.h"
#include "tests/support/extender_process.h"
#include "tests/support/http_client.h"
#include "tests/support/real_control_plane.h"

namespace capext::test {
namespace reserve_at_filter_test {
namespace {

using namespace std::chrono_literals;

std::string Pod(const std::string& ns, const std::string& name) {
  return R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":")" + name + R"(","namespace":")" +
         ns +
         R"("},"spec":{"terminationGracePeriodSeconds":0,"containers":[{"name":"c","image":"x",)"
         R"("resources":{"requests":{"cpu":"1"}}}]}})";
}

TEST_CASE("reserveAt filter: kube-scheduler binds, the holds keep the quota at its max",
          "[real-cluster]") {
  RealControlPlane cluster;
  std::string kubeconfig;
  Status started = cluster.StartForExtender(&kubeconfig);
  INFO(started.message());
  REQUIRE(started.ok());
  REQUIRE(cluster.CreateNamespace("team").ok());
  REQUIRE(cluster.CreateNamespace("lend").ok());
  REQUIRE(cluster.CreateFakeNodes(2, "8", "32Gi", "110", "n").ok());
  REQUIRE(cluster
              .Apply(R"(
apiVersion: scheduling.x-k8s.io/v1alpha1
kind: ElasticQuota
metadata: {name: team, namespace: team}
spec: {min: {cpu: "2"}, max: {cpu: "4"}}
---
apiVersion: scheduling.x-k8s.io/v1alpha1
kind: ElasticQuota
metadata: {name: lend, namespace: lend}
spec: {min: {cpu: "6"}, max: {cpu: "6"}}
)")
              .ok());
  // Created before kube-scheduler starts, so they reach it together.
  for (int i = 0; i < 10; ++i) {
    const kube::RestResponse r =
        cluster.api().Post("/api/v1/namespaces/team/pods", Pod("team", "p-" + std::to_string(i)));
    INFO(r.status << " " << r.error << r.body);
    REQUIRE(r.ok());
  }

  ExtenderProcess extender;
  REQUIRE(extender.Start({"--kubeconfig", kubeconfig, "--reserve-at", "filter"}));
  REQUIRE(Eventually(
      [&] { return Fetch("127.0.0.1", extender.port(), "GET", "/readyz").status == 200; }, 30s));
  SchedulerOptions scheduler;
  scheduler.extender_url = "http://127.0.0.1:" + std::to_string(extender.port());
  scheduler.bind_verb = "";  // kube-scheduler binds
  scheduler.prioritize_verb = "";
  scheduler.client_qps = 1000;
  scheduler.client_burst = 1000;
  Status scheduler_started = cluster.StartScheduler(scheduler);
  INFO(scheduler_started.message());
  REQUIRE(scheduler_started.ok());

  const bool four = Eventually([&] { return BoundPods(cluster, "team") == 4; }, 30s);
  INFO("extender log at the end:\n" << Tail(extender.Log()));
  INFO("bound: " << BoundPods(cluster, "team"));
  REQUIRE(four);
  // kube-scheduler keeps retrying the six (its backoff): none of them binds.
  std::this_thread::sleep_for(5s);
  CHECK(BoundPods(cluster, "team") == 4);
  const ClientResponse pending = Fetch("127.0.0.1", extender.port(), "GET", "/pending");
  INFO(pending.body.substr(0, 3000));
  CHECK(pending.body.find("max") != std::string::npos);

  // Two bound pods go: two more bind, never more.
  const kube::RestResponse list = cluster.api().Get("/api/v1/namespaces/team/pods");
  REQUIRE(list.ok());
  int deleted = 0;
  for (int i = 0; i < 10 && deleted < 2; ++i) {
    const std::string name = "p-" + std::to_string(i);
    const kube::RestResponse pod = cluster.api().Get("/api/v1/namespaces/team/pods/" + name);
    if (!pod.ok() || pod.body.find("\"nodeName\":\"") == std::string::npos) continue;
    REQUIRE(cluster.api()
                .Delete("/api/v1/namespaces/team/pods/" + name + "?gracePeriodSeconds=0")
                .ok());
    ++deleted;
  }
  REQUIRE(deleted == 2);
  const bool again = Eventually([&] { return BoundPods(cluster, "team") == 4; }, 30s);
  std::this_thread::sleep_for(3s);
  INFO("extender log at the end:\n" << Tail(extender.Log()));
  CHECK(again);
  CHECK(BoundPods(cluster, "team") == 4);
}

}  // namespace
}  // namespace reserve_at_filter_test
}  // namespace capext::test
