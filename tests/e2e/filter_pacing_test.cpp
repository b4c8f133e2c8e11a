// End to end, /filter paced by the Binding queue
// (docs/architecture.md#pacing-filter-while-bindings-queue): the real `capacity-extender serve
// --kubeconfig F` against the API-server TEST DOUBLE, with one Binding connection,
// filterHoldQueuedBinds 1 and the double answering the first three Bindings 1.5 s late. Three binds
// at once: one written, two waiting for the connection. A /filter asked then is held: it is not
// answered while two Bindings still wait (checked against the queue gauge read after the answer's
// state, never against a clock), and it is answered once the queue is back at one, by the queue
// (not by filterHoldLimit, set to 9 s). Every bind still succeeds and nothing stays queued.
#include <rapidjson/document.h>

#include <chrono>
#include <future>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <catch2/catch.hpp>

#include "bench/micro/prometheus_text.h"
#include "tests/support/apiserver_double_process.h"
#include "tests/support/extender_process.h"
#include "tests/support/http_client.h"

namespace filter_pacing_test {
namespace {

using capext::kube::testing::ApiServerDouble;
using capext::kube::testing::Eventually;
using capext::test::ClientResponse;
using capext::test::ExtenderProcess;
using namespace std::chrono_literals;

constexpr char kNs[] = "paced";

std::string PodJson(const std::string& name, const std::string& uid) {
  return fmt::format(
      R"({{"apiVersion":"v1","kind":"Pod","metadata":{{"name":"{}","namespace":"{}"{}}},)"
      R"("spec":{{"containers":[{{"name":"c","image":"pause","resources":{{"requests":)"
      R"({{"cpu":"100m"}}}}}}]}},"status":{{"phase":"Pending"}}}})",
      name, kNs, uid.empty() ? "" : fmt::format(R"(,"uid":"{}")", uid));
}

// The value of the unlabelled metric `name` in /metrics text (0 when absent).
double Metric(const std::string& text, const std::string& name) {
  return capext::bench::MetricSamples::Parse(text).Sum(name);
}

// POST `body` to `target` on a connection of its own, answered on the returned future.
std::future<ClientResponse> PostAsync(uint16_t port, std::string target, std::string body) {
  return std::async(std::launch::async, [port, target = std::move(target), body = std::move(body)] {
    capext::test::HttpConnection connection;
    if (!connection.Connect("127.0.0.1", port)) return ClientResponse{};
    return connection.Post(target, body);
  });
}

TEST_CASE("filter pacing: /filter waits while Bindings queue past filterHoldQueuedBinds",
          "[e2e][live][pacing]") {
  ApiServerDouble api;
  INFO(api.error());
  REQUIRE(api.started());
  REQUIRE(api.CreateMany(R"("resource":"nodes")",
                         R"({"apiVersion":"v1","kind":"Node","metadata":{"name":"n1"},)"
                         R"("status":{"allocatable":{"cpu":"100","memory":"100Gi","pods":"100"}}})")
              .status == 201);
  REQUIRE(
      api.CreateMany(
             R"("resource":"elasticquotas","group":"scheduling.x-k8s.io")",
             fmt::format(R"({{"apiVersion":"scheduling.x-k8s.io/v1alpha1","kind":"ElasticQuota",)"
                         R"("metadata":{{"name":"q","namespace":"{}"}},)"
                         R"("spec":{{"min":{{"cpu":"10"}},"max":{{"cpu":"10"}}}}}})",
                         kNs))
          .status == 201);
  REQUIRE(api.CreateMany(R"("resource":"pods")",
                         PodJson("b0", "") + "," + PodJson("b1", "") + "," + PodJson("b2", ""))
              .status == 201);
  std::vector<std::string> uids(3);
  {
    rapidjson::Document doc;
    doc.Parse(api.ControlGet("objects?resource=pods").c_str());
    REQUIRE(doc.IsObject());
    for (const auto& item : doc["items"].GetArray()) {
      const std::string name = item["metadata"]["name"].GetString();
      uids[static_cast<std::size_t>(name.back() - '0')] = item["metadata"]["uid"].GetString();
    }
  }
  capext::testing::TempDir dir;
  const std::string kubeconfig = dir.Write("kubeconfig", api.KubeconfigText());
  ExtenderProcess extender;
  // A long bindDeadline keeps every queued Binding sendable, and lets the hold limit (at most
  // half of it) stay far beyond the 1.5 s in which the queue shortens.
  REQUIRE(extender.Start({"--kubeconfig", kubeconfig, "--bind-connections", "1", "--bind-deadline",
                          "20s", "--filter-hold-queued-binds", "1", "--filter-hold-limit", "9s",
                          "--reclaim", "off", "--events=false"}));
  capext::test::HttpConnection client;
  REQUIRE(client.Connect("127.0.0.1", extender.port()));
  REQUIRE(Eventually([&] { return client.Get("/readyz").status == 200; }, 30s));
  REQUIRE_FALSE(api.Control("delay", fmt::format(R"({{"ms":1500,"count":3,)"
                                                 R"("path_prefix":"/api/v1/namespaces/{}/pods/",)"
                                                 R"("method":"POST"}})",
                                                 kNs))
                    .empty());

  std::vector<std::future<ClientResponse>> binds;
  for (int i = 0; i < 3; ++i) {
    binds.push_back(PostAsync(extender.port(), "/bind",
                              fmt::format(R"({{"PodName":"b{}","PodNamespace":"{}",)"
                                          R"("PodUID":"{}","Node":"n1"}})",
                                          i, kNs, uids[static_cast<std::size_t>(i)])));
  }
  auto queued = [&] {
    return Metric(client.Get("/metrics").body, "capacity_extender_binds_queued");
  };
  // One Binding written (1.5 s in the double), two waiting for the one connection.
  REQUIRE(Eventually([&] { return queued() == 2; }, 30s));

  std::future<ClientResponse> filter = PostAsync(
      extender.port(), "/filter",
      fmt::format(R"({{"Pod":{},"Nodes":null,"NodeNames":["n1"]}})", PodJson("f", "f-uid")));
  REQUIRE(Eventually(
      [&] {
        return Metric(client.Get("/metrics").body, "capacity_extender_filter_held_total") == 1;
      },
      30s));
  // The answer's state first, then the queue: an answer sent means the queue had shortened.
  const bool answered = filter.wait_for(0s) == std::future_status::ready;
  CHECK_FALSE((answered && queued() == 2));

  const ClientResponse answer = filter.get();
  INFO(answer.body);
  CHECK(answer.status == 200);
  CHECK(answer.body.find("\"n1\"") != std::string::npos);  // passed, once released
  for (auto& bind : binds) {
    const ClientResponse r = bind.get();
    INFO(r.body);
    CHECK(r.status == 200);
    CHECK(r.body.find("\"Error\":\"\"") != std::string::npos);
  }
  const std::string metrics = client.Get("/metrics").body;
  INFO(metrics.substr(0, 4000));
  CHECK(Metric(metrics, "capacity_extender_filter_held_total") == 1);
  CHECK(Metric(metrics, "capacity_extender_filter_held_to_limit_total") == 0);  // by the queue
  CHECK(Metric(metrics, "capacity_extender_binds_queued") == 0);
}

}  // namespace
}  // namespace filter_pacing_test
