// Issue 22's acceptance on a real kube-apiserver and kube-scheduler 1.26 with scheduling gates
// (FEATURE_GATES=PodSchedulingReadiness=true) and the real `capacity-extender serve` in live
// mode, admissionMode gate, fairSharing on (docs/fair-sharing.md#5-admission-order-gate-mode):
// two borrowers of weight 1 and 3, each with more gated pods than the idle capacity, fill it
// together and end with borrowed cpu in the ratio 1:3, within one pod. fa's pods are created
// first, so first come, first served would give fa all of it; the pods exist before the
// extender starts, so its admission loop sees them all in one round and the order alone decides.
// No kubelet: "runs" means bound.
#include <catch2/catch.hpp>
#include <chrono>
#include <functional>
#include <string>
#include <thread>

#include "core/pod.h"
#include "tests/real_cluster/bound_pods.h"
#include "tests/real_cluster/cluster_polling.h"
#include "tests/support/extender_process.h"
#include "tests/support/http_client.h"
#include "tests/support/real_control_plane.h"

namespace capext::test {
namespace fair_sharing_test {
namespace {

using namespace std::chrono_literals;

// A pod of 1 cpu carrying our gate, as /mutate would add it (the webhook is tested in e2e).
std::string GatedPod(const std::string& ns, const std::string& name) {
  return R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":")" + name + R"(","namespace":")" +
         ns + R"("},"spec":{"terminationGracePeriodSeconds":0,"schedulingGates":[{"name":")" +
         kQuotaGate +
         R"("}],"containers":[{"name":"c","image":"x","resources":{"requests":{"cpu":"1"}}}]}})";
}

TEST_CASE("fair sharing: borrowers of weight 1 and 3 fill idle capacity 1:3", "[real-cluster]") {
  ControlPlaneOptions plane_options;
  plane_options.feature_gates = "PodSchedulingReadiness=true";
  RealControlPlane cluster(plane_options);
  std::string kubeconfig;
  Status started = cluster.StartForExtender(&kubeconfig);
  INFO(started.message());
  REQUIRE(started.ok());
  // `default` gets its ServiceAccount (no controller-manager here): the gate probe's dry-run
  // pod is created there.
  for (const char* ns : {"default", "lend", "fa", "fb"})
    REQUIRE(cluster.CreateNamespace(ns).ok());
  REQUIRE(cluster.CreateFakeNodes(1, "10", "32Gi", "110", "n").ok());
  // The sum of all mins is the node's 10 cpu. lend guarantees 8 and runs nothing; fa and fb
  // each run their min 1 and borrow the 8 idle cpu. fairShare
  // (docs/fair-sharing.md#4-fairshare): λ = 8 / (1 + 3) = 2, fa 2 and fb 6; the admission order
  // reaches it (shares k/10 for fa, k/30 for fb).
  REQUIRE(cluster
              .Apply(R"(
apiVersion: scheduling.x-k8s.io/v1alpha1
kind: ElasticQuota
metadata: {name: lend, namespace: lend}
spec: {min: {cpu: "8"}, max: {cpu: "10"}}
---
apiVersion: scheduling.x-k8s.io/v1alpha1
kind: ElasticQuota
metadata:
  name: fa
  namespace: fa
  annotations: {scheduling.capacity-extender.io/fair-share-weight: "1"}
spec: {min: {cpu: "1"}, max: {cpu: "10"}}
---
apiVersion: scheduling.x-k8s.io/v1alpha1
kind: ElasticQuota
metadata:
  name: fb
  namespace: fb
  annotations: {scheduling.capacity-extender.io/fair-share-weight: "3"}
spec: {min: {cpu: "1"}, max: {cpu: "10"}}
)")
              .ok());
  // 9 pods each: min 1 + the 8 idle, so either could take everything.
  for (const char* ns : {"fa", "fb"}) {
    for (int i = 0; i < 9; ++i) {
      const kube::RestResponse r =
          cluster.api().Post(std::string("/api/v1/namespaces/") + ns + "/pods",
                             GatedPod(ns, std::string(ns) + "-" + std::to_string(i)));
      INFO(r.status << " " << r.error << r.body);
      REQUIRE(r.ok());
    }
  }

  ExtenderProcess extender;
  REQUIRE(
      extender.Start({"--kubeconfig", kubeconfig, "--admission-mode", "gate", "--fair-sharing"}));
  REQUIRE(Eventually(
      [&] { return Fetch("127.0.0.1", extender.port(), "GET", "/readyz").status == 200; }, 30s));
  SchedulerOptions scheduler;
  scheduler.extender_url = "http://127.0.0.1:" + std::to_string(extender.port());
  Status scheduler_started = cluster.StartScheduler(scheduler);
  INFO(scheduler_started.message());
  REQUIRE(scheduler_started.ok());

  // The node's 10 cpu bound in all, then nothing more moves.
  const bool all_bound =
      Eventually([&] { return BoundPods(cluster, "fa") + BoundPods(cluster, "fb") == 10; }, 60s);
  INFO("extender log at the end:\n" << Tail(extender.Log()));
  INFO("/pending: " << Fetch("127.0.0.1", extender.port(), "GET", "/pending").body.substr(0, 3000));
  INFO("bound: fa " << BoundPods(cluster, "fa") << ", fb " << BoundPods(cluster, "fb"));
  REQUIRE(all_bound);
  std::this_thread::sleep_for(2s);
  const int fa = BoundPods(cluster, "fa") - 1, fb = BoundPods(cluster, "fb") - 1;
  INFO("borrowed: fa " << fa << ", fb " << fb);
  CHECK(fa + fb == 8);
  // 2 : 6 within one pod: fa from 1 to 3 (first come, first served would give fa 8).
  CHECK(fa >= 1);
  CHECK(fa <= 3);
  // The rest waits for the sum of all mins (fb's next pod, the barrier) or for fair share (fa's).
  const ClientResponse pending = Fetch("127.0.0.1", extender.port(), "GET", "/pending");
  INFO(pending.body.substr(0, 4000));
  CHECK(pending.body.find("waiting for fair share: fa/fa's share") != std::string::npos);
}

}  // namespace
}  // namespace fair_sharing_test
}  // namespace capext::test
