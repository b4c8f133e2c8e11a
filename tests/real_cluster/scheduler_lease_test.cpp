// Two replicas, one actor (docs/architecture.md), against the Lease a real kube-scheduler 1.26
// writes: kube-scheduler runs with leader election on the lease capacity-extender/
// capacity-scheduler, as the ServiceAccount of deploy/ (whose RBAC grants it that lease), with
// short timings (leaseDuration 8s, renewDeadline 6s, retryPeriod 1s: short, with room for a
// loaded machine's late renewals). Two `capacity-extender
// serve` processes follow that lease under the same ServiceAccount (deploy/rbac's `get` on it):
//   - "this host" keeps the default identity, the hostname, which kube-scheduler's holderIdentity
//     starts with: it is the sidecar of the scheduler that leads;
//   - "another host" has --leader-identity another-host: the other replica, never acting.
// Checked: before kube-scheduler runs neither acts (the lease is not found); once it holds the
// lease this host acts and another host does not (/readyz, /metrics); kube-scheduler restarted
// (SIGTERM, which releases the lease, then a new process with a new holderIdentity) makes this
// host stop acting and act again, two more transitions, and another host never acts.
#include <rapidjson/document.h>
#include <catch2/catch.hpp>

#include <chrono>
#include <exception>
#include <fstream>
#include <functional>
#include <iostream>
#include <string>
#include <thread>

#include "extender/leadership/leadership.h"
#include "tests/real_cluster/cluster_polling.h"
#include "tests/support/extender_process.h"
#include "tests/support/http_client.h"
#include "tests/support/real_control_plane.h"

namespace capext::test {
namespace scheduler_lease_test {
namespace {

using namespace std::chrono_literals;

// The `leader` object of /readyz's body, as text fields; leads is "true" or "false".
struct Leader {
  std::string leads, holder, reason;
  int64_t transitions = -1;
};

Leader LeaderOf(const ExtenderProcess& extender) {
  Leader out;
  rapidjson::Document doc;
  doc.Parse(Fetch("127.0.0.1", extender.port(), "GET", "/readyz").body.c_str());
  if (!doc.IsObject() || !doc.HasMember("leader") || !doc["leader"].IsObject()) return out;
  const rapidjson::Value& l = doc["leader"];
  if (l.HasMember("leads") && l["leads"].IsBool())
    out.leads = l["leads"].GetBool() ? "true" : "false";
  if (l.HasMember("holder") && l["holder"].IsString()) out.holder = l["holder"].GetString();
  if (l.HasMember("reason") && l["reason"].IsString()) out.reason = l["reason"].GetString();
  if (l.HasMember("transitions") && l["transitions"].IsInt64())
    out.transitions = l["transitions"].GetInt64();
  return out;
}

bool Has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// Prints the logs, as they are when a REQUIRE fails (INFO would capture them too early).
class LogsOnFailure {
 public:
  explicit LogsOnFailure(std::function<std::string()> logs) : logs_(std::move(logs)) {}
  ~LogsOnFailure() {
    if (std::uncaught_exceptions() > 0) std::cerr << logs_() << "\n";
  }

 private:
  std::function<std::string()> logs_;
};

TEST_CASE("scheduler lease: the sidecar of the kube-scheduler holding the lease acts, and only it",
          "[real-cluster]") {
  const std::string host = HostName();
  REQUIRE_FALSE(host.empty());
  RealControlPlane cluster;
  std::string kubeconfig;
  Status started = cluster.StartForExtender(&kubeconfig);
  INFO(started.message());
  REQUIRE(started.ok());

  auto args = [&](const std::string& identity) {
    std::vector<std::string> a = {"--kubeconfig",           kubeconfig,
                                  "--leader-election",      "follow-scheduler",
                                  "--leader-lease",         "capacity-extender/capacity-scheduler",
                                  "--lease-duration",       "8s",
                                  "--lease-renew-deadline", "5s",
                                  "--lease-check-interval", "250ms"};
    if (!identity.empty()) a.insert(a.end(), {"--leader-identity", identity});
    return a;
  };
  ExtenderProcess here, other;
  REQUIRE(here.Start(args("")));
  REQUIRE(other.Start(args("another-host")));
  LogsOnFailure logs([&] {
    return "this host's extender:\n" + Tail(here.Log()) + "\nanother host's:\n" +
           Tail(other.Log()) + "\nkube-scheduler:\n" +
           Tail(cluster.Log(cluster.SchedulerLogPath()));
  });

  // No kube-scheduler yet: no lease, nobody acts, and both say why.
  REQUIRE(Eventually([&] { return Has(LeaderOf(here).reason, "not found"); }, 30s));
  CHECK(LeaderOf(other).leads == "false");

  // kube-scheduler as deploy/'s ServiceAccount, leader election on deploy/'s lease, calling this
  // host's extender.
  const std::string config = cluster.dir() + "/etc/leader-elected-scheduler.yaml";
  {
    std::ofstream out(config, std::ios::binary);
    out << "apiVersion: kubescheduler.config.k8s.io/v1\n"
           "kind: KubeSchedulerConfiguration\n"
           "clientConnection:\n  kubeconfig: "
        << kubeconfig
        << "\nleaderElection:\n  leaderElect: true\n  resourceLock: leases\n"
           "  resourceName: capacity-scheduler\n  resourceNamespace: capacity-extender\n"
           "  leaseDuration: 8s\n  renewDeadline: 6s\n  retryPeriod: 1s\n"
           "profiles:\n- schedulerName: capacity-scheduler\n"
           "extenders:\n- urlPrefix: http://127.0.0.1:"
        << here.port()
        << "\n  filterVerb: filter\n  bindVerb: bind\n  nodeCacheCapable: true\n"
           "  ignorable: false\n";
  }
  SchedulerOptions scheduler;
  scheduler.config_file = config;
  Status scheduling = cluster.StartScheduler(scheduler);
  INFO(scheduling.message());
  REQUIRE(scheduling.ok());

  // The holder is "<hostname>_<uuid>": this host acts (after waiting out any earlier tenure),
  // another host follows.
  REQUIRE(Eventually([&] { return LeaderOf(here).leads == "true"; }, 30s));
  const Leader first = LeaderOf(here);
  CHECK(first.holder.rfind(host + "_", 0) == 0);
  CHECK(first.transitions >= 1);  // 1, unless a renewal came too late on a loaded machine
  const Leader follower = LeaderOf(other);
  CHECK(follower.leads == "false");
  CHECK(follower.holder == first.holder);
  CHECK(Has(follower.reason, "is not this replica (another-host)"));
  CHECK(
      Has(Fetch("127.0.0.1", here.port(), "GET", "/metrics").body, "capacity_extender_leader 1\n"));
  CHECK(Has(Fetch("127.0.0.1", other.port(), "GET", "/metrics").body,
            "capacity_extender_leader 0\n"));

  // kube-scheduler restarted: SIGTERM releases the lease, the new process acquires it under a new
  // holderIdentity. This host stops acting, then acts again once the old tenure is over.
  scheduling = cluster.StartScheduler(scheduler);
  INFO(scheduling.message());
  REQUIRE(scheduling.ok());
  REQUIRE(Eventually(
      [&] {
        const Leader now = LeaderOf(here);
        return now.leads == "true" && now.holder != first.holder &&
               now.holder.rfind(host + "_", 0) == 0;
      },
      30s));
  // Stopped at the release (or at the new holder), started again: at least two more.
  CHECK(LeaderOf(here).transitions >= first.transitions + 2);
  CHECK(here.WaitForLog("this replica stopped acting", 1s));
  const Leader still = LeaderOf(other);
  CHECK(still.leads == "false");
  CHECK(still.transitions == 0);
}

}  // namespace
}  // namespace scheduler_lease_test
}  // namespace capext::test
