// SchedulerLeaseFollower against the API-server double: it reads the Lease on its own thread,
// acts once its scheduler's renewals are seen (and the start-up wait is over), stops as soon as
// the lease names another holder, and says why. Short settings: leaseDuration 2 s, renew deadline
// 1.2 s, a read every 100 ms; the test renews the lease as client-go would, every 200 ms.
#include "extender/leadership/scheduler_lease_follower.h"

#include <rapidjson/document.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>

#include <catch2/catch.hpp>

#include "tests/support/apiserver_double_process.h"

namespace capext {
namespace scheduler_lease_follower_test {
namespace {

using kube::RestClient;
using kube::testing::ApiServerDouble;
using namespace std::chrono_literals;

constexpr char kLeases[] = "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases";

std::string Lease(const std::string& holder, int transitions, const std::string& rv, int renewal) {
  return R"({"metadata":{"name":"kube-scheduler")" +
         (rv.empty() ? std::string() : R"(,"resourceVersion":")" + rv + "\"") +
         R"(},"spec":{"holderIdentity":")" + holder +
         R"(","leaseDurationSeconds":2,"leaseTransitions":)" + std::to_string(transitions) +
         R"(,"renewTime":"2026-01-01T00:00:)" + std::to_string(10 + renewal % 50) +
         R"(.000000Z"}})";
}

bool Eventually(const std::function<bool()>& condition, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!condition()) {
    if (std::chrono::steady_clock::now() >= deadline) return condition();
    std::this_thread::sleep_for(20ms);
  }
  return true;
}

TEST_CASE("SchedulerLeaseFollower follows renewals and a change of holder", "[lease]") {
  ApiServerDouble server;
  REQUIRE(server.started());
  std::unique_ptr<RestClient> client;
  REQUIRE(RestClient::Create(server.Config(), {}, &client).ok());
  REQUIRE(client->Post(kLeases, Lease("pod-a_1", 0, "", 0)).status == 201);

  std::atomic<bool> renew{true};
  std::string holder = "pod-a_1";
  int transitions = 0;
  std::mutex holder_mutex;
  std::jthread renewer([&](std::stop_token stop) {
    for (int i = 1; !stop.stop_requested(); ++i) {
      std::this_thread::sleep_for(200ms);
      if (!renew) continue;
      rapidjson::Document lease;
      lease.Parse(client->Get(std::string(kLeases) + "/kube-scheduler").body.c_str());
      if (!lease.IsObject()) continue;
      std::lock_guard lock(holder_mutex);
      client->Put(std::string(kLeases) + "/kube-scheduler",
                  Lease(holder, transitions, lease["metadata"]["resourceVersion"].GetString(), i));
    }
  });

  SchedulerLeaseFollower::Options options;
  options.identity = "pod-a";
  options.lease_duration = 2000ms;
  options.renew_deadline = 1200ms;
  options.check_interval = 100ms;
  SchedulerLeaseFollower follower(client.get(), options);
  CHECK_FALSE(follower.Leads());  // nothing read yet
  follower.Start();
  // Not before the start-up wait (the renew deadline after the first read).
  std::this_thread::sleep_for(600ms);
  CHECK_FALSE(follower.Leads());
  CHECK(follower.Report().reason.find("previous holder's tenure") != std::string::npos);
  REQUIRE(Eventually([&] { return follower.Leads(); }, 5s));
  LeadershipReport report = follower.Report();
  CHECK(report.mode == "follow-scheduler");
  CHECK(report.holder == "pod-a_1");
  CHECK(report.lease == "kube-system/kube-scheduler");
  CHECK(report.transitions == 1);
  CHECK(follower.TimeLeft(30s) > 0ms);
  CHECK(follower.TimeLeft(30s) <= 1200ms);

  // Renewals stop: the tenure runs out by itself.
  renew = false;
  REQUIRE(Eventually([&] { return !follower.Leads(); }, 3s));
  CHECK(follower.Report().reason.find("stopped acting") != std::string::npos);
  renew = true;
  REQUIRE(Eventually([&] { return follower.Leads(); }, 5s));

  // Another holder: this replica stops at the next read.
  {
    std::lock_guard lock(holder_mutex);
    holder = "pod-b_2";
    transitions = 1;
  }
  REQUIRE(Eventually([&] { return !follower.Leads(); }, 2s));
  report = follower.Report();
  CHECK(report.holder == "pod-b_2");
  CHECK(report.lease_transitions == 1);
  CHECK(report.transitions == 4);
  CHECK(report.reason.find("pod-b_2 is not this replica (pod-a)") != std::string::npos);
  CHECK(follower.TimeLeft(30s) == 0ms);

  follower.Stop();
  CHECK_FALSE(follower.Leads());
  renewer.request_stop();
}

}  // namespace
}  // namespace scheduler_lease_follower_test
}  // namespace capext
