// End to end, binds under a slow API server (issue 18 point 4;
// docs/architecture.md#how-a-bind-travels): the real `capacity-extender serve --kubeconfig F`
// against the API-server TEST DOUBLE answering every Binding 20 ms late, the first 16 of them 1.5 s
// late (every connection of the Binding client stalls at once, longer than kube-scheduler's
// timeout), and 3,000 binds at once from a simulated kube-scheduler
// (bench/micro/bind_retry_scheduler.h) that retries refused and timed-out binds after its backoff,
// as kube-scheduler does. Timing is scaled down five times to keep the test short: httpTimeout 1 s,
// bindDeadline 800 ms, backoff 200 ms doubling to 2 s.
//
// Checked from the double's request log, the extender's debug log (each sent Binding with its
// bind's deadline) and the scheduler's own record of every attempt, all on CLOCK_MONOTONIC:
//   * no Binding is sent after its bind's deadline (arrival at the double <= that deadline + 1 s
//     of transit into the busy double);
//   * every pod ends bound, exactly once, with no Binding refused by the API server (no second
//     Binding of a bound pod is ever tried);
//   * no pod is bound by a Binding whose bind was answered with an error (the Binding's /bind is
//     paired with the scheduler's attempt by the caller's port in the extender's log, not by
//     time); every success answered names the node the pod is bound to;
//   * the quota's usage is exactly the pods' requests once the watch caught up, nothing reserved;
//   * every refusal the scheduler saw is in the extender's counters; which paths ran (refused at
//     the bound, expired at the deadline, never answered) is reported, as it depends on speed.
#include <rapidjson/document.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <catch2/catch.hpp>

#include "bench/micro/bind_run_check.h"
#include "tests/support/apiserver_double_process.h"
#include "tests/support/extender_process.h"
#include "tests/support/http_client.h"

namespace slow_binds_test {
namespace {

using capext::bench::BindRetryScheduler;
using capext::bench::BindRunCheck;
using capext::kube::testing::ApiServerDouble;
using capext::kube::testing::Eventually;
using capext::test::ClientResponse;
using capext::test::ExtenderProcess;
using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

constexpr int kPods = 3000;
constexpr char kNs[] = "burst";
constexpr auto kHttpTimeout = 1000ms;
constexpr auto kBindDeadline = 800ms;
// A Binding written at its deadline reaches the double's log within this: loopback, then the
// double's connection thread must win Python's GIL from the threads answering other Bindings and
// streaming their watch events before it stamps the arrival (at most 33 ms measured in six runs
// on a quiet machine; on a starved CI machine the extender read requests over a second late, and
// the double is no faster). The check is there for a Binding the deadline does not bound: 3,000
// Bindings over 16 connections at 20 ms each take 3.75 s to drain, so those arrive seconds late.
// That a Binding is written only before its deadline, to the instant, is rest_client_test's.
constexpr auto kTransit = 1000ms;

std::string PodName(int i) {
  return fmt::format("p-{:04}", i);
}

// Two large nodes, a quota that holds every pod (10m each), and the pods, pending.
void LoadCluster(ApiServerDouble& api) {
  std::string nodes;
  for (const char* n : {"n1", "n2"}) {
    nodes +=
        fmt::format(R"({}{{"apiVersion":"v1","kind":"Node","metadata":{{"name":"{}"}},)"
                    R"("status":{{"allocatable":{{"cpu":"1000","memory":"4Ti","pods":"5000"}}}}}})",
                    nodes.empty() ? "" : ",", n);
  }
  REQUIRE(api.CreateMany(R"("resource":"nodes")", nodes).status == 201);
  REQUIRE(
      api.CreateMany(
             R"("resource":"elasticquotas","group":"scheduling.x-k8s.io")",
             fmt::format(R"({{"apiVersion":"scheduling.x-k8s.io/v1alpha1","kind":"ElasticQuota",)"
                         R"("metadata":{{"name":"{}","namespace":"{}"}},)"
                         R"("spec":{{"min":{{"cpu":"100"}},"max":{{"cpu":"100"}}}}}})",
                         kNs, kNs))
          .status == 201);
  for (int start = 0; start < kPods; start += 1000) {
    std::string items;
    for (int i = start; i < start + 1000 && i < kPods; ++i) {
      items += fmt::format(
          R"({}{{"apiVersion":"v1","kind":"Pod","metadata":{{"name":"{}","namespace":"{}"}},)"
          R"("spec":{{"containers":[{{"name":"c","image":"pause","resources":{{"requests":)"
          R"({{"cpu":"10m"}}}}}}]}},"status":{{"phase":"Pending"}}}})",
          items.empty() ? "" : ",", PodName(i), kNs);
    }
    REQUIRE(api.CreateMany(R"("resource":"pods")", items).status == 201);
  }
}

// The pods as the scheduler binds them: uid from the API server, n1 first, n2 on some retries.
std::vector<BindRetryScheduler::Pod> SchedulerPods(ApiServerDouble& api) {
  rapidjson::Document doc;
  doc.Parse(api.ControlGet("objects?resource=pods").c_str());
  REQUIRE(doc.IsObject());
  std::vector<BindRetryScheduler::Pod> pods;
  for (const auto& item : doc["items"].GetArray()) {
    const auto& meta = item["metadata"];
    pods.push_back({meta["namespace"].GetString(),
                    meta["name"].GetString(),
                    meta["uid"].GetString(),
                    {"n1", "n2"}});
  }
  REQUIRE(pods.size() == static_cast<std::size_t>(kPods));
  return pods;
}

// The value of an unlabelled metric line "name value" (-1 when absent).
double Metric(const std::string& text, const std::string& name) {
  const std::size_t at = text.find("\n" + name + " ");
  if (at == std::string::npos) return -1;
  return std::stod(text.substr(at + name.size() + 2));
}

TEST_CASE("slow binds: 3,000 binds at once, a Binding 20 ms each: none late, each bound once",
          "[e2e][live][slow-binds]") {
  ApiServerDouble api;
  INFO(api.error());
  REQUIRE(api.started());
  LoadCluster(api);
  capext::testing::TempDir dir;
  const std::string kubeconfig = dir.Write("kubeconfig", api.KubeconfigText());
  ExtenderProcess extender;
  REQUIRE(extender.Start({"--kubeconfig", kubeconfig, "--bind-deadline",
                          std::to_string(kBindDeadline.count()) + "ms", "--reclaim", "off",
                          "--events=false", "--log-level", "debug"}));
  capext::test::HttpConnection client;
  REQUIRE(client.Connect("127.0.0.1", extender.port()));
  REQUIRE(Eventually([&] { return client.Get("/readyz").status == 200; }, 30s));
  // Ready means listed once: the pods, created before the extender started, are known.
  const std::vector<BindRetryScheduler::Pod> pods = SchedulerPods(api);

  // Every Binding 20 ms late; the first 16 (every connection of the Binding client) 1.5 s late.
  const std::string bindings = R"("path_prefix":"/api/v1/namespaces/burst/pods/","method":"POST")";
  REQUIRE_FALSE(api.Control("delay", R"({"ms":1500,"count":16,)" + bindings + "}").empty());
  REQUIRE_FALSE(api.Control("delay", R"({"ms":20,"count":-1,)" + bindings + "}").empty());
  REQUIRE_FALSE(api.Control("requests/clear").empty());

  BindRetryScheduler::Options options;
  options.extender_port = extender.port();
  options.api_port = static_cast<uint16_t>(api.port());
  options.api_token = "test-token";
  options.http_timeout = kHttpTimeout;
  options.initial_backoff = 200ms;
  options.max_backoff = 2000ms;
  options.give_up = 120s;
  options.seed = 18;
  const BindRetryScheduler::Result run = BindRetryScheduler(options).Run(pods);

  std::size_t refused = 0, timed_out = 0;
  for (const auto& a : run.attempts) {
    if (a.outcome == BindRetryScheduler::Outcome::kRefused) ++refused;
    if (a.outcome == BindRetryScheduler::Outcome::kTimedOut) ++timed_out;
  }
  std::vector<capext::bench::BindingPost> posts;
  REQUIRE(capext::bench::ParseBindingPosts(api.ControlGet("requests"), &posts));
  const std::vector<capext::bench::BindOwner> owners =
      capext::bench::ParseBindOwners(extender.Log());
  REQUIRE(owners.size() >= static_cast<std::size_t>(kPods));  // every sent Binding is logged
  const BindRunCheck check =
      capext::bench::CheckBindRun(pods, run, posts, owners, kBindDeadline, kTransit);
  INFO(fmt::format("{} attempts ({} refused, {} timed out) in {:.1f} s; {}", run.attempts.size(),
                   refused, timed_out, run.seconds, check.Describe()));
  CHECK(run.finished);
  CHECK(check.sent_late.empty());
  CHECK(check.unattributed.empty());
  CHECK(check.bound_twice.empty());
  CHECK(check.extra_posts.empty());
  CHECK(check.never_bound.empty());
  CHECK(check.bound_after_error.empty());
  CHECK(check.wrong_node.empty());
  CHECK(check.created == static_cast<std::size_t>(kPods));
  WARN(fmt::format("{} attempts ({} refused, {} timed out) in {:.1f} s; {}", run.attempts.size(),
                   refused, timed_out, run.seconds, check.Describe()));

  // Usage is exactly the pods' requests once the watch caught up; nothing stays reserved.
  CHECK(Eventually(
      [&] {
        ClientResponse quotas = client.Get("/quotas");
        rapidjson::Document doc;
        doc.Parse(quotas.body.c_str());
        if (!doc.IsObject() || !doc.HasMember("quotas")) return false;
        for (const auto& q : doc["quotas"].GetArray()) {
          if (std::string(q["namespace"].GetString()) != kNs) continue;
          return std::string(q["used"]["cpu"].GetString()) == "30" &&
                 (!q["reserved"].HasMember("cpu") ||
                  std::string(q["reserved"]["cpu"].GetString()) == "0");
        }
        return false;
      },
      60s));
  const std::string metrics = client.Get("/metrics").body;
  INFO(metrics.substr(0, 4000));
  // Every refusal kube-scheduler saw is counted; the extender also counts the answers that came
  // after kube-scheduler gave up, so its counters are at least what the scheduler saw.
  std::size_t seen_at_bound = 0, seen_expired = 0;
  for (const auto& a : run.attempts) {
    if (a.outcome != BindRetryScheduler::Outcome::kRefused) continue;
    if (a.error.find("maxBindsInFlight") != std::string::npos) ++seen_at_bound;
    if (a.error.find("past its bindDeadline") != std::string::npos) ++seen_expired;
  }
  const double at_bound = Metric(metrics, "capacity_extender_binds_refused_at_bound_total");
  const double expired = Metric(metrics, "capacity_extender_binds_expired_total");
  const double unanswered = Metric(metrics, "capacity_extender_binds_unanswered_total");
  CHECK(std::max(at_bound, 0.0) >= static_cast<double>(seen_at_bound));
  CHECK(std::max(expired, 0.0) >= static_cast<double>(seen_expired));
  CHECK(Metric(metrics, "capacity_extender_binds_in_flight") == 0);
  CHECK(Metric(metrics, "capacity_extender_binds_queued") == 0);
  // Which paths a run takes depends on the machine's speed (bind_verb_test and live_mode_test
  // cover each one deterministically): reported, never asserted (tests never assert on time).
  WARN(
      fmt::format("binds refused at the bound {} (seen by the scheduler {}), expired {} (seen "
                  "{}), sent and never answered {}, abandoned by the scheduler before read {}",
                  at_bound, seen_at_bound, expired, seen_expired, unanswered,
                  Metric(metrics, "capacity_extender_binds_abandoned_total")));
  CHECK(extender.Stop() == 0);
}

}  // namespace
}  // namespace slow_binds_test
