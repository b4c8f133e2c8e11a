// GateLifter and ProbeSchedulingGates against the double
// (docs/workloads-live.md#gate-detection-at-start, docs/workloads-live.md#the-gate-removal): one
// patch from the cached pod and no read; a stale cache costs one read and a second patch and never
// removes another gate or replaces unseen annotations; a pod deleted, re-created or ungated
// meanwhile is not patched; the probe stores nothing. Requests are counted in the double's log.
#include "extender/kube/gate_writes.h"

#include <rapidjson/document.h>

#include <catch2/catch.hpp>
#include <string>

#include "config/object_stream_decoder.h"
#include "tests/support/apiserver_double_process.h"

namespace capext::kube {
namespace gate_writes_test {
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

// The pod as the cache would hold it: decoded by the watch's decoder.
Pod Cached(RestClient* client, const std::string& name) {
  Pod pod;
  std::string kind;
  REQUIRE(
      DecodePodJson(client->Get("/api/v1/namespaces/ns/pods/" + name).body, {}, &pod, &kind).ok());
  return pod;
}

struct Requests {
  int gets, patches;
  bool operator==(const Requests&) const = default;
};
Requests Logged(ApiServerDouble& server, const std::string& name) {
  return {server.CountRequests("GET", "/pods/" + name),
          server.CountRequests("PATCH", "/pods/" + name)};
}

std::string Gate(const rapidjson::Document& pod, int i) {
  return pod["spec"]["schedulingGates"][i]["name"].GetString();
}

constexpr char kOurs[] = R"({"name":"scheduling.capacity-extender.io/quota"})";
const auto kWhen = std::chrono::system_clock::time_point(std::chrono::milliseconds(1767225600123));

struct LifterFixture {
  ApiServerDouble server;
  std::unique_ptr<RestClient> client;
  LifterFixture() {
    REQUIRE(server.started());
    REQUIRE(RestClient::Create(server.Config(), {}, &client).ok());
  }
  void Patch(const std::string& name, const std::string& json_patch) {
    const RestResponse r = client->Send("PATCH", "/api/v1/namespaces/ns/pods/" + name, json_patch,
                                        "application/json-patch+json", {}, {});
    INFO(r.body);
    REQUIRE(r.status == 200);
  }
  GateLift Lift(const Pod& cached) {
    REQUIRE(!server.Control("requests/clear").empty());
    GateLifter lifter(client.get());
    GateLift lift = lifter.Lift("ns", cached.name, cached.uid, cached.patch_basis, kWhen);
    INFO(lift.write.http_status << " " << lift.write.reason << " " << lift.write.message);
    return lift;
  }
};

TEST_CASE("GateLifter, normal path: one PATCH from the cache, no GET; only our gate goes",
          "[kube]") {
  LifterFixture f;
  CreatePod(f.client.get(), "a", std::string(R"([{"name":"example.com/first"},)") + kOurs + "]",
            R"({"keep":"me"})");
  CreatePod(f.client.get(), "b", std::string("[") + kOurs + "]");
  const Pod a = Cached(f.client.get(), "a");
  CHECK(a.patch_basis.quota_gate_index == 1);
  CHECK(a.patch_basis.has_annotations);
  CHECK_FALSE(a.patch_basis.resource_version.empty());

  const GateLift lift = f.Lift(a);
  REQUIRE(lift.write.ok);
  CHECK_FALSE(lift.read);
  CHECK(Logged(f.server, "a") == Requests{0, 1});
  std::string content_type;
  const std::string patch = f.server.LastRequestBody("/pods/a", &content_type);
  CHECK(content_type == "application/json-patch+json");
  CHECK(patch.find(R"({"op":"test","path":"/metadata/resourceVersion","value":")" +
                   a.patch_basis.resource_version + R"("})") != std::string::npos);
  CHECK(patch.find(R"({"op":"test","path":"/spec/schedulingGates/1/name")") != std::string::npos);
  rapidjson::Document pod = GetPod(f.client.get(), "a");
  REQUIRE(pod["spec"]["schedulingGates"].Size() == 1);
  CHECK(Gate(pod, 0) == "example.com/first");
  CHECK(std::string(pod["metadata"]["annotations"]["keep"].GetString()) == "me");
  CHECK(std::string(pod["metadata"]["annotations"][capext::kAdmittedAtAnnotation].GetString()) ==
        "2026-01-01T00:00:00.123Z");

  // A pod without annotations gets the map, still in one request.
  REQUIRE(f.Lift(Cached(f.client.get(), "b")).write.ok);
  CHECK(Logged(f.server, "b") == Requests{0, 1});
  pod = GetPod(f.client.get(), "b");
  CHECK(pod["spec"]["schedulingGates"].Size() == 0);
  CHECK(pod["metadata"]["annotations"].HasMember(kAdmittedAtAnnotation));
}

TEST_CASE(
    "GateLifter, stale cache: the PATCH is refused, one GET, one PATCH; nothing unseen is "
    "overwritten",
    "[kube]") {
  LifterFixture f;
  CreatePod(f.client.get(), "a", std::string("[") + kOurs + "]");
  const Pod cached = Cached(f.client.get(), "a");
  REQUIRE_FALSE(cached.patch_basis.has_annotations);
  // Someone annotates the pod after the cache saw it: a patch from the cache would replace the
  // whole map.
  f.Patch("a", R"([{"op":"add","path":"/metadata/annotations","value":{"team":"x"}}])");

  const GateLift lift = f.Lift(cached);
  REQUIRE(lift.write.ok);
  CHECK(lift.read);
  CHECK(Logged(f.server, "a") == Requests{1, 2});
  const rapidjson::Document pod = GetPod(f.client.get(), "a");
  CHECK(pod["spec"]["schedulingGates"].Size() == 0);
  CHECK(std::string(pod["metadata"]["annotations"]["team"].GetString()) == "x");
  CHECK(pod["metadata"]["annotations"].HasMember(kAdmittedAtAnnotation));
}

TEST_CASE("GateLifter, another gate added in front of ours: only ours is removed", "[kube]") {
  LifterFixture f;
  CreatePod(f.client.get(), "a", std::string("[") + kOurs + "]");
  const Pod cached = Cached(f.client.get(), "a");
  REQUIRE(cached.patch_basis.quota_gate_index == 0);
  f.Patch("a",
          R"([{"op":"add","path":"/spec/schedulingGates/0","value":{"name":"example.com/x"}}])");

  const GateLift lift = f.Lift(cached);
  REQUIRE(lift.write.ok);
  CHECK(lift.read);
  CHECK(Logged(f.server, "a") == Requests{1, 2});
  const rapidjson::Document pod = GetPod(f.client.get(), "a");
  REQUIRE(pod["spec"]["schedulingGates"].Size() == 1);
  CHECK(Gate(pod, 0) == "example.com/x");
}

TEST_CASE(
    "GateLifter: a pod deleted meanwhile is not read; a new pod of its name, or one whose "
    "gate is gone, is read once and not patched",
    "[kube]") {
  LifterFixture f;
  CreatePod(f.client.get(), "a", std::string("[") + kOurs + "]");
  const Pod a = Cached(f.client.get(), "a");
  REQUIRE(f.client->Send("DELETE", "/api/v1/namespaces/ns/pods/a", "", "", {}, {}).status == 200);
  GateLift lift = f.Lift(a);
  CHECK(lift.write.http_status == 404);
  CHECK_FALSE(lift.read);
  CHECK(Logged(f.server, "a") == Requests{0, 1});

  // The name taken by another pod (another uid), gated too: its gate stays.
  CreatePod(f.client.get(), "a", std::string("[") + kOurs + "]");
  lift = f.Lift(a);
  CHECK_FALSE(lift.write.ok);
  CHECK(lift.write.reason == "Conflict");
  CHECK(lift.read);
  CHECK(Logged(f.server, "a") == Requests{1, 1});
  CHECK(GetPod(f.client.get(), "a")["spec"]["schedulingGates"].Size() == 1);

  // Our gate removed by someone else after the cache saw it.
  const Pod b = [&] {
    CreatePod(f.client.get(), "b", std::string("[") + kOurs + "]");
    return Cached(f.client.get(), "b");
  }();
  f.Patch("b", R"([{"op":"remove","path":"/spec/schedulingGates/0"}])");
  lift = f.Lift(b);
  CHECK(lift.write.reason == "NotGated");
  CHECK(Logged(f.server, "b") == Requests{1, 1});
  CHECK_FALSE(GetPod(f.client.get(), "b")["metadata"].HasMember("annotations"));

  // A basis the cache does not know (no resourceVersion) starts with the read.
  CreatePod(f.client.get(), "c", std::string("[") + kOurs + "]");
  Pod unknown = Cached(f.client.get(), "c");
  unknown.patch_basis = PodPatchBasis{};
  lift = f.Lift(unknown);
  CHECK(lift.write.ok);
  CHECK(lift.read);
  CHECK(Logged(f.server, "c") == Requests{1, 1});
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
}  // namespace gate_writes_test
}  // namespace capext::kube
