// Binder, Evictor, StatusPatcher and PodAnnotator against the double: success and each
// recorded failure, and the exact bodies sent.
#include "extender/kube/api_writes.h"

#include <rapidjson/document.h>

#include <catch2/catch.hpp>
#include <string>

#include "tests/support/apiserver_double_process.h"

namespace capext::kube {
namespace api_writes_test {
namespace {

using testing::ApiServerDouble;

// The double with pods ns/p1..p3 (app=demo, Running, unbound) and its clients.
struct Cluster {
  Cluster() {
    REQUIRE(server.started());
    REQUIRE(RestClient::Create(server.Config(), {}, &client).ok());
    for (const char* name : {"p1", "p2", "p3"}) {
      std::string pod = std::string(R"({"metadata":{"name":")") + name +
                        R"(","labels":{"app":"demo"}},"spec":{"containers":[{"name":"c"}]},)"
                        R"("status":{"phase":"Running"}})";
      REQUIRE(client->Post("/api/v1/namespaces/ns/pods", pod).status == 201);
    }
  }
  rapidjson::Document Get(const std::string& path) {
    rapidjson::Document document;
    RestResponse response = client->Get(path);
    document.Parse(response.body.c_str());
    return document;
  }
  std::string Uid(const std::string& pod) {
    return Get("/api/v1/namespaces/ns/pods/" + pod)["metadata"]["uid"].GetString();
  }

  ApiServerDouble server;
  std::unique_ptr<RestClient> client;
};

TEST_CASE("Binder: 201 binds - 409 when already bound - 404 when missing", "[kube]") {
  Cluster cluster;
  Binder binder(cluster.client.get());
  std::string uid = cluster.Uid("p1");
  ApiWriteResult bound = binder.Bind("ns", "p1", uid, "node-1");
  CHECK(bound.ok);
  CHECK(bound.http_status == 201);
  // The body is exactly the v1 Binding of extender-protocol.md.
  CHECK(cluster.server.LastRequestBody("/pods/p1/binding") ==
        R"({"apiVersion":"v1","kind":"Binding","metadata":{"name":"p1","namespace":"ns","uid":")" +
            uid + R"("},"target":{"apiVersion":"v1","kind":"Node","name":"node-1"}})");
  auto pod = cluster.Get("/api/v1/namespaces/ns/pods/p1");
  CHECK(std::string(pod["spec"]["nodeName"].GetString()) == "node-1");

  ApiWriteResult again = binder.Bind("ns", "p1", uid, "node-2");
  CHECK(!again.ok);
  CHECK(again.http_status == 409);
  CHECK(again.reason == "Conflict");
  CHECK(again.message.find("already assigned to node \"node-1\"") != std::string::npos);

  ApiWriteResult missing = binder.Bind("ns", "nosuchpod", uid, "node-1");
  CHECK(missing.http_status == 404);
  CHECK(missing.reason == "NotFound");

  cluster.server.Control("inject_binding_failures", R"({"count":1,"code":500})");
  ApiWriteResult failed = binder.Bind("ns", "p2", cluster.Uid("p2"), "node-1");
  CHECK(!failed.ok);
  CHECK(failed.http_status == 500);
  CHECK(failed.reason == "InternalError");
  CHECK(binder.Bind("ns", "p2", cluster.Uid("p2"), "node-1").ok);  // only one was injected
}

TEST_CASE("Evictor: 201 evicts - 429 when a disruption budget refuses", "[kube]") {
  Cluster cluster;
  Evictor evictor(cluster.client.get());
  REQUIRE(cluster.client
              ->Post("/apis/policy/v1/namespaces/ns/poddisruptionbudgets",
                     R"({"metadata":{"name":"pdb-demo"},"spec":{"minAvailable":3,)"
                     R"("selector":{"matchLabels":{"app":"demo"}}}})")
              .status == 201);
  cluster.server.Control("pdb_refusal", R"({"enabled":true})");
  ApiWriteResult refused = evictor.Evict("ns", "p2");
  CHECK(!refused.ok);
  CHECK(refused.http_status == 429);
  CHECK(refused.refused_by_disruption_budget);
  CHECK(refused.reason == "TooManyRequests");
  CHECK(refused.message.find("pdb-demo") != std::string::npos);
  CHECK(cluster.Get("/api/v1/namespaces/ns/pods/p2").HasMember("spec"));  // still there

  cluster.server.Control("pdb_refusal", R"({"enabled":true,"style":"processing"})");
  ApiWriteResult processing = evictor.Evict("ns", "p2");
  CHECK(processing.refused_by_disruption_budget);
  CHECK(processing.retry_after_seconds == 10);

  cluster.server.Control("pdb_refusal", R"({"enabled":false})");
  cluster.server.Control("requests/clear");
  ApiWriteResult evicted = evictor.Evict("ns", "p2", cluster.Uid("p2"), 0);
  CHECK(evicted.ok);
  CHECK(evicted.http_status == 201);
  CHECK(cluster.server.CountRequests("POST", "/eviction") == 1);
  CHECK(cluster.client->Get("/api/v1/namespaces/ns/pods/p2").status == 404);
  rapidjson::Document body;
  body.Parse(cluster.server.LastRequestBody("/pods/p2/eviction").c_str());
  CHECK(std::string(body["apiVersion"].GetString()) == "policy/v1");
  CHECK(std::string(body["kind"].GetString()) == "Eviction");
  CHECK(body["deleteOptions"]["gracePeriodSeconds"].GetInt() == 0);

  ApiWriteResult gone = evictor.Evict("ns", "p2");
  CHECK(gone.http_status == 404);
  CHECK(!gone.refused_by_disruption_budget);

  ApiWriteResult wrong_uid = evictor.Evict("ns", "p3", "00000000-0000-0000-0000-000000000000");
  CHECK(wrong_uid.http_status == 409);
}

TEST_CASE("StatusPatcher: merge-patches status.used of an ElasticQuota", "[kube]") {
  Cluster cluster;
  REQUIRE(cluster.client
              ->Post("/apis/scheduling.x-k8s.io/v1alpha1/namespaces/ns/elasticquotas",
                     R"({"apiVersion":"scheduling.x-k8s.io/v1alpha1","kind":"ElasticQuota",)"
                     R"("metadata":{"name":"eq-a"},"spec":{"min":{"cpu":"2"},"max":{"cpu":4}}})")
              .status == 201);
  const std::string path = "/apis/scheduling.x-k8s.io/v1alpha1/namespaces/ns/elasticquotas/eq-a";
  std::string rv_before = cluster.Get(path)["metadata"]["resourceVersion"].GetString();

  StatusPatcher patcher(cluster.client.get(), GroupVersion{"scheduling.x-k8s.io", "v1alpha1"});
  ApiWriteResult patched = patcher.PatchUsed("ns", "eq-a", {{"cpu", "300m"}, {"memory", "192Mi"}});
  CHECK(patched.ok);
  CHECK(patched.http_status == 200);
  std::string content_type;
  CHECK(cluster.server.LastRequestBody("/eq-a/status", &content_type) ==
        R"({"status":{"used":{"cpu":"300m","memory":"192Mi"}}})");
  CHECK(content_type == "application/merge-patch+json");
  auto quota = cluster.Get(path);
  CHECK(std::string(quota["status"]["used"]["cpu"].GetString()) == "300m");
  CHECK(std::string(quota["metadata"]["resourceVersion"].GetString()) != rv_before);
  CHECK(quota["metadata"]["generation"].GetInt() == 1);

  ApiWriteResult missing = patcher.PatchUsed("ns", "nosuch", {{"cpu", "1"}});
  CHECK(missing.http_status == 404);
  CHECK(missing.reason == "NotFound");
}

TEST_CASE("PodAnnotator: strategic-merge-patches the retry annotation", "[kube]") {
  Cluster cluster;
  PodAnnotator annotator(cluster.client.get());
  auto when = std::chrono::system_clock::from_time_t(1795299600);  // 2026-11-21T22:20:00Z
  ApiWriteResult result = annotator.MarkForRetry("ns", "p1", when);
  CHECK(result.ok);
  std::string content_type;
  CHECK(
      cluster.server.LastRequestBody("/pods/p1", &content_type) ==
      R"({"metadata":{"annotations":{"scheduling.capacity-extender.io/retry":"2026-11-21T22:20:00Z"}}})");
  CHECK(content_type == "application/strategic-merge-patch+json");
  auto pod = cluster.Get("/api/v1/namespaces/ns/pods/p1");
  CHECK(std::string(pod["metadata"]["annotations"][PodAnnotator::kRetryAnnotation].GetString()) ==
        "2026-11-21T22:20:00Z");

  CHECK(annotator.MarkForRetry("ns", "ghost", when).http_status == 404);
}

TEST_CASE("PodAnnotator: sets and removes the reclaim record", "[kube]") {
  Cluster cluster;
  PodAnnotator annotator(cluster.client.get());
  const auto when =
      std::chrono::system_clock::from_time_t(1795299600) + std::chrono::milliseconds(7);
  const std::string record = "n2@" + Rfc3339Millis(when);
  CHECK(record == "n2@2026-11-21T22:20:00.007Z");
  REQUIRE(annotator.SetReclaimRecord("ns", "p1", record).ok);
  CHECK(
      cluster.server.LastRequestBody("/pods/p1") ==
      R"({"metadata":{"annotations":{"scheduling.capacity-extender.io/reclaim":"n2@2026-11-21T22:20:00.007Z"}}})");
  auto pod = cluster.Get("/api/v1/namespaces/ns/pods/p1");
  CHECK(std::string(pod["metadata"]["annotations"]["scheduling.capacity-extender.io/reclaim"]
                        .GetString()) == record);
  // null removes it (and only it).
  REQUIRE(annotator.MarkForRetry("ns", "p1", when).ok);
  REQUIRE(annotator.SetReclaimRecord("ns", "p1", std::nullopt).ok);
  CHECK(cluster.server.LastRequestBody("/pods/p1") ==
        R"({"metadata":{"annotations":{"scheduling.capacity-extender.io/reclaim":null}}})");
  pod = cluster.Get("/api/v1/namespaces/ns/pods/p1");
  CHECK_FALSE(pod["metadata"]["annotations"].HasMember("scheduling.capacity-extender.io/reclaim"));
  CHECK(pod["metadata"]["annotations"].HasMember(PodAnnotator::kRetryAnnotation));
}

}  // namespace
}  // namespace api_writes_test
}  // namespace capext::kube
