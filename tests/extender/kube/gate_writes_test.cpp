// GateLifter and ProbeSchedulingGates against the double
// (docs/workloads-live.md#gate-detection-at-start, docs/workloads-live.md#the-admission-loop): the
// patch lifts only our gate and stamps admitted-at; a pod without the gate, or another incarnation,
// is refused; the probe stores nothing.
#include "extender/kube/gate_writes.h"

#include <rapidjson/document.h>

#include <catch2/catch.hpp>
#include <string>

#include "tests/support/apiserver_double_process.h"

namespace capext::kube {
namespace {

using testing::ApiServerDouble;

rapidjson::Document GetPod(RestClient* client, const std::string& name) {
  rapidjson::Document d;
  d.Parse(client->Get("/api/v1/namespaces/ns/pods/" + name).body.c_str());
  return d;
}

void CreatePod(RestClient* client, const std::string& name, const std::string& gates,
               const std::string& annotations = "") {
  const std::string body = R"({"metadata":{"name":")" + name + R"(")" +
                           (annotations.empty() ? "" : R"(,"annotations":)" + annotations) +
                           R"(},"spec":{"schedulingGates":)" + gates +
                           R"(,"containers":[{"name":"c"}]}})";
  REQUIRE(client->Post("/api/v1/namespaces/ns/pods", body).status == 201);
}

TEST_CASE("GateLifter removes our gate, keeps the others, stamps admitted-at", "[kube]") {
  ApiServerDouble server;
  REQUIRE(server.started());
  std::unique_ptr<RestClient> client;
  REQUIRE(RestClient::Create(server.Config(), {}, &client).ok());
  CreatePod(client.get(), "a",
            R"([{"name":"example.com/first"},{"name":"scheduling.capacity-extender.io/quota"}])",
            R"({"keep":"me"})");
  CreatePod(client.get(), "b", R"([{"name":"scheduling.capacity-extender.io/quota"}])");
  const std::string uid_a = GetPod(client.get(), "a")["metadata"]["uid"].GetString();
  const std::string uid_b = GetPod(client.get(), "b")["metadata"]["uid"].GetString();
  GateLifter lifter(client.get());
  const auto when = std::chrono::system_clock::time_point(std::chrono::milliseconds(1767225600123));

  ApiWriteResult a = lifter.Lift("ns", "a", uid_a, when);
  INFO(a.http_status << " " << a.message);
  REQUIRE(a.ok);
  std::string content_type;
  const std::string patch = server.LastRequestBody("/pods/a", &content_type);
  CHECK(content_type == "application/json-patch+json");
  CHECK(patch.find(R"({"op":"test","path":"/spec/schedulingGates/1/name")") != std::string::npos);
  rapidjson::Document pod = GetPod(client.get(), "a");
  REQUIRE(pod["spec"]["schedulingGates"].Size() == 1);
  CHECK(std::string(pod["spec"]["schedulingGates"][0]["name"].GetString()) == "example.com/first");
  CHECK(std::string(pod["metadata"]["annotations"]["keep"].GetString()) == "me");
  CHECK(std::string(pod["metadata"]["annotations"][capext::kAdmittedAtAnnotation].GetString()) ==
        "2026-01-01T00:00:00.123Z");

  // A pod without annotations gets the map.
  REQUIRE(lifter.Lift("ns", "b", uid_b, when).ok);
  pod = GetPod(client.get(), "b");
  CHECK(pod["spec"]["schedulingGates"].Size() == 0);
  CHECK(pod["metadata"]["annotations"].HasMember(kAdmittedAtAnnotation));

  // Lifting again: the gate is gone.
  ApiWriteResult again = lifter.Lift("ns", "a", uid_a, when);
  CHECK_FALSE(again.ok);
  CHECK(again.reason == "NotGated");
  // Another incarnation of the name is never touched.
  CreatePod(client.get(), "c", R"([{"name":"scheduling.capacity-extender.io/quota"}])");
  ApiWriteResult other = lifter.Lift("ns", "c", "not-its-uid", when);
  CHECK_FALSE(other.ok);
  CHECK(GetPod(client.get(), "c")["spec"]["schedulingGates"].Size() == 1);
  // A pod that does not exist.
  CHECK(lifter.Lift("ns", "missing", "", when).http_status == 404);
}

TEST_CASE("ProbeSchedulingGates: kept, dropped, failed; nothing is stored", "[kube]") {
  for (const bool drop : {false, true}) {
    ApiServerDouble::Options options;
    options.drop_scheduling_gates = drop;
    ApiServerDouble server(options);
    REQUIRE(server.started());
    std::unique_ptr<RestClient> client;
    REQUIRE(RestClient::Create(server.Config(), {}, &client).ok());
    const GateSupport support = ProbeSchedulingGates(client.get(), "ns");
    INFO(support.detail);
    CHECK(support.known);
    CHECK(support.kept == !drop);
    CHECK(server.Objects("pods").empty());
    if (drop) CHECK(support.detail.find("PodSchedulingReadiness") != std::string::npos);
  }
  ApiServerDouble server;
  REQUIRE(server.started());
  KubeConfig config = server.Config();
  config.token = BearerTokenSource::Fixed("wrong");
  std::unique_ptr<RestClient> client;
  REQUIRE(RestClient::Create(config, {}, &client).ok());
  const GateSupport failed = ProbeSchedulingGates(client.get(), "ns");
  CHECK_FALSE(failed.known);
  CHECK(failed.detail.find("401") != std::string::npos);
}

}  // namespace
}  // namespace capext::kube
