// The harness itself (tests/support/real_control_plane.h, scripts/control-plane.sh), on one
// control plane: fake nodes come up Ready and untainted, kube-scheduler without an extender
// binds a pod, kube-apiserver killed with SIGKILL comes back on the same port with the same
// data, kube-scheduler restarted alone binds the next pod, stopped alone binds nothing more, and
// kubectl reports exit codes.
#include <catch2/catch.hpp>
#include <chrono>
#include <functional>
#include <string>
#include <thread>

#include "tests/real_cluster/cluster_polling.h"
#include "tests/support/real_control_plane.h"

namespace capext::test {
namespace real_control_plane_test {
namespace {

using namespace std::chrono_literals;

std::string Pod(const std::string& name) {
  return R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":")" + name +
         R"(","namespace":"team"},"spec":{"terminationGracePeriodSeconds":0,"containers":[)"
         R"({"name":"c","image":"x","resources":{"requests":{"cpu":"1"}}}]}})";
}

TEST_CASE("the harness: fake nodes, scheduling, kube-apiserver killed and back, scheduler restart",
          "[real-cluster]") {
  RealControlPlane cluster;
  Status started = cluster.Start();
  INFO(started.message());
  REQUIRE(started.ok());

  REQUIRE(cluster.CreateFakeNodes(2, "4", "8Gi", "110").ok());
  CommandResult nodes =
      cluster.Kubectl("get", "nodes", "-o",
                      "jsonpath={range .items[*]}{.metadata.name} {.status.allocatable.cpu} "
                      "{.status.conditions[0].status} {.spec.taints}{\"\\n\"}{end}");
  INFO(nodes.output);
  REQUIRE(nodes.ok());
  CHECK(nodes.output == "node-0 4 True \nnode-1 4 True \n");

  REQUIRE(cluster.CreateNamespace("team").ok());
  REQUIRE(cluster.StartScheduler(SchedulerOptions{}).ok());
  auto node_of = [&](const std::string& pod) {
    CommandResult r =
        cluster.Kubectl("get", "pod", "-n", "team", pod, "-o", "jsonpath={.spec.nodeName}");
    return r.ok() ? r.output : "";
  };
  REQUIRE(cluster.api().Post("/api/v1/namespaces/team/pods", Pod("first")).ok());
  CHECK(Eventually([&] { return !node_of("first").empty(); }, 60s));

  const std::string server = cluster.server();
  REQUIRE(cluster.KillApiServer().ok());
  CommandResult down = cluster.Kubectl("get", "pods", "-A");
  CHECK(down.exit_code != 0);
  REQUIRE(cluster.RestartApiServer().ok());
  CHECK(cluster.server() == server);
  CHECK_FALSE(node_of("first").empty());  // etcd kept it, bound

  SchedulerOptions renamed;
  renamed.scheduler_name = "second-scheduler";
  REQUIRE(cluster.StartScheduler(renamed).ok());
  std::string second = Pod("second");
  second.replace(second.find(R"("terminationGracePeriodSeconds")"), 0,
                 R"("schedulerName":"second-scheduler",)");
  kube::RestResponse created = cluster.api().Post("/api/v1/namespaces/team/pods", second);
  INFO(created.status << " " << created.error << " " << created.body);
  REQUIRE(created.ok());
  CHECK(Eventually([&] { return !node_of("second").empty(); }, 60s));
  // Only the restarted scheduler, with the new profile, could bind it.
  CHECK_FALSE(cluster.Log(cluster.SchedulerLogPath()).empty());

  // kube-scheduler stopped alone: etcd and kube-apiserver run on, and a new pod stays pending.
  const int scheduler_pid = cluster.Pid("kube-scheduler");
  CHECK(scheduler_pid > 0);
  REQUIRE(cluster.StopScheduler().ok());
  CHECK(cluster.Pid("kube-scheduler") == -1);
  CHECK(cluster.Pid("kube-apiserver") > 0);
  CHECK(cluster.Pid("etcd") > 0);
  CHECK(cluster.EtcdUrl().rfind("http://127.0.0.1:", 0) == 0);
  std::string third = second;
  third.replace(third.find("second"), 6, "third");
  REQUIRE(cluster.api().Post("/api/v1/namespaces/team/pods", third).ok());
  std::this_thread::sleep_for(2s);
  CHECK(node_of("third").empty());

  CommandResult missing = cluster.Kubectl("get", "pod", "-n", "team", "nothing-here");
  CHECK(missing.exit_code == 1);
  CHECK(missing.output.find("NotFound") != std::string::npos);
}

}  // namespace
}  // namespace real_control_plane_test
}  // namespace capext::test
