// Revoking an admission (docs/workloads-live.md#revoking-an-admission), the admission loop against
// the API-server double: a 3-pod gang without controllers, its core (w-0, w-1) reclaimed, w-2
// admitted through the gate and waiting for a node. The loop removes w-2's admitted-at with one
// PATCH and no GET, writes an AdmissionRevoked Event with the numbers and counts it; a watch event
// still showing the annotation does not bring the hold back; once the patch shows, w-2 passes
// /filter only when the gang's whole need fits. A refused PATCH (409, or 422 for a stale cache)
// reads the pod once and patches once; a later admission is left alone; a failure is retried
// with backoff, never at once.
#include <catch2/catch.hpp>
#include <memory>
#include <string>

#include "config/object_stream_decoder.h"
#include "core/placement.h"
#include "extender/admission/admission_loop.h"
#include "extender/admission/api_admission_revocation_writer.h"
#include "extender/admission/api_gate_opener.h"
#include "tests/extender/reclaim/reclaim_harness.h"
#include "tests/support/apiserver_double_process.h"
#include "tests/support/workload_pods.h"

namespace capext {
namespace admission_revocation_test {
namespace {

using kube::RestClient;
using kube::RestResponse;
using kube::testing::ApiServerDouble;
using reclaim_testing::FakeEvictor;
using reclaim_testing::kStartMs;
using reclaim_testing::RecordingEventSink;
using testing::CpuList;
using testing::MakeNode;
using testing::MakePod;
using testing::MakeQuota;
using testing::Member;

constexpr char kAdmitted[] = "2027-01-15T08:00:00.000Z";

struct RevocationHarness {
  RevocationHarness()
      : cache(QuotaSemantics::kCapacityExtender, {}, [this] { return now.load(); }),
        evictor(&cache) {
    REQUIRE(server.started());
    REQUIRE(RestClient::Create(server.Config(), {}, &client).ok());
    cache.set_ready(true);
    opener =
        std::make_unique<ApiGateOpener>(std::make_unique<kube::GateLifter>(client.get()), nullptr);
    writer = std::make_unique<ApiAdmissionRevocationWriter>(
        std::make_unique<kube::AdmissionRevoker>(client.get()), nullptr);
    AdmissionLoopOptions options;
    loop = std::make_unique<AdmissionLoop>(&cache, &metrics, opener.get(), &evictor, options);
    loop->AttachEvents(&sink);
    loop->RevokeThrough(writer.get());
  }

  // A member of gang w (min-member 3, no controller) in the double, ungated and admitted.
  void CreateAdmitted(const std::string& name) {
    const std::string body =
        R"({"metadata":{"name":")" + name +
        R"(","labels":{"scheduling.x-k8s.io/pod-group":"w"},"annotations":{"scheduling.capacity-extender.io/min-member":"3","scheduling.capacity-extender.io/admitted-at":")" +
        kAdmitted +
        R"("}},"spec":{"containers":[{"name":"c","resources":{"requests":{"cpu":"1"}}}]}})";
    REQUIRE(client->Post("/api/v1/namespaces/ns/pods", body).status == 201);
  }
  // The pod as the watch would deliver it.
  Pod Watched(const std::string& name) {
    Pod pod;
    std::string kind;
    REQUIRE(DecodePodJson(client->Get("/api/v1/namespaces/ns/pods/" + name).body, {}, &pod, &kind)
                .ok());
    return pod;
  }
  void Write(const std::function<void(ClusterState&)>& f) {
    cache.Write([&](ClusterState& s) {
      f(s);
      return 0;
    });
  }
  // eq "ns" {max `max_cpu`}, one 3-cpu node; w-0, w-1 bound there, w-2 admitted from the double;
  // then the reclaim takes the core: w-0 and w-1 are deleted.
  void LostCore(int64_t max_cpu = 8000) {
    CreateAdmitted("w-2");
    cached_w2 = Watched("w-2");
    REQUIRE(cached_w2.admitted_ms > 0);
    Write([&](ClusterState& s) {
      s.UpsertNode(MakeNode("n1", 3000));
      s.UpsertQuota(MakeQuota("ns", CpuList(0), CpuList(max_cpu)));
      for (int i = 0; i < 2; ++i) {
        Pod bound = Member(MakePod("ns", "w-" + std::to_string(i))
                               .Uid("u-" + std::to_string(i))
                               .Cpu(1000)
                               .BoundTo("n1")
                               .Started(kStartMs - 1000),
                           "w", 3);
        bound.has_controller = false;
        s.UpsertPod(bound);
      }
      s.UpsertPod(cached_w2);
      s.DeletePod("u-1");
      s.DeletePod("u-0");
    });
    REQUIRE(cache.Read([&](const ClusterState& s) {
      return s.FindGroup(testing::CoschedulingKey("ns", "w"))->orphaned.size();
    }) == 1);
  }
  int64_t Used() {
    return cache.Read([](const ClusterState& s) { return s.Used("ns").Get("cpu"); });
  }
  bool Annotated(const std::string& name) { return Watched(name).admitted_ms > 0; }
  bool Counted(const std::string& line) { return metrics.Render().find(line) != std::string::npos; }
  Status FilterQuota(const std::string& uid) {
    return cache.Read([&](const ClusterState& s) { return PodFilter(s, *s.FindPod(uid)).quota(); });
  }

  ApiServerDouble server;
  std::unique_ptr<RestClient> client;
  std::atomic<int64_t> now{kStartMs};
  Metrics metrics;
  SchedulerCache cache;
  FakeEvictor evictor;
  RecordingEventSink sink;
  std::unique_ptr<ApiGateOpener> opener;
  std::unique_ptr<ApiAdmissionRevocationWriter> writer;
  std::unique_ptr<AdmissionLoop> loop;
  Pod cached_w2;
};

TEST_CASE(
    "admission loop on the double: a gang that lost its core has its bare member's "
    "admission revoked by one PATCH",
    "[admission_loop][revocation]") {
  RevocationHarness h;
  h.LostCore();
  REQUIRE(h.Used() == 0);  // core ended w-2's derived hold when the gang lost its core
  REQUIRE(!h.server.Control("requests/clear").empty());
  h.loop->RunOnce();
  CHECK(h.server.CountRequests("PATCH", "/pods/w-2") == 1);
  CHECK(h.server.CountRequests("GET", "/pods/w-2") == 0);
  std::string content_type;
  const std::string patch = h.server.LastRequestBody("/pods/w-2", &content_type);
  CHECK(content_type == "application/json-patch+json");
  CHECK(patch == R"([{"op":"test","path":"/metadata/resourceVersion","value":")" +
                     h.cached_w2.patch_basis.resource_version +
                     R"("},{"op":"remove","path":"/metadata/annotations/)"
                     R"(scheduling.capacity-extender.io~1admitted-at"}])");
  CHECK_FALSE(h.Annotated("w-2"));
  CHECK(h.Watched("w-2").min_member_annotation == 3);  // the rest of the annotations stay
  REQUIRE(h.sink.creates.size() == 1);
  const EventObject& e = h.sink.creates.front();
  CHECK(e.pod_name == "w-2");
  CHECK(e.type == "Warning");
  CHECK(e.reason == "AdmissionRevoked");
  CHECK(e.note ==
        "gang ns/w lost its core (0 of minMember 3 active): admission revoked; the pod runs only "
        "with its gang, when the quota and the nodes admit the gang's need together");
  CHECK(h.Counted("capacity_extender_admissions_revoked_total 1"));
  CHECK(h.Used() == 0);

  // A watch event that still shows the annotation (sent before the patch) holds nothing.
  h.Write([&](ClusterState& s) { s.UpsertPod(h.cached_w2); });
  CHECK(h.Used() == 0);
  h.loop->RunOnce();  // nothing to revoke again
  CHECK(h.server.CountRequests("PATCH", "/pods/w-2") == 1);
  CHECK(h.sink.creates.size() == 1);

  // The patch shows: w-2 is a pending member; /filter lets it pass only with a whole gang.
  h.Write([&](ClusterState& s) { s.UpsertPod(h.Watched("w-2")); });
  CHECK(h.cache.Read([&](const ClusterState& s) { return s.FindRevocation(h.cached_w2.uid); }) ==
        nullptr);
  CHECK(h.FilterQuota(h.cached_w2.uid).message() == "gang ns/w: 1 of 3 pods exist");
  h.Write([](ClusterState& s) {
    for (int i = 3; i < 5; ++i) {
      Pod p = Member(MakePod("ns", "w-" + std::to_string(i))
                         .Uid("u-" + std::to_string(i))
                         .Cpu(1000)
                         .Created(kStartMs + i),
                     "w", 3);
      p.has_controller = false;
      s.UpsertPod(p);
    }
    s.UpsertQuota(MakeQuota("ns", CpuList(0), CpuList(2000)));
  });
  CHECK(h.FilterQuota(h.cached_w2.uid).message() ==
        "gang ns/w: 3 pods need cpu 3: its request alone exceeds the max of ElasticQuota ns/ns: "
        "cpu request 3 > max 2");
  // Room for the whole need (min too: the sum of all mins is the only room there is).
  h.Write([](ClusterState& s) { s.UpsertQuota(MakeQuota("ns", CpuList(3000), CpuList(3000))); });
  INFO(h.FilterQuota(h.cached_w2.uid).message());
  CHECK(h.FilterQuota(h.cached_w2.uid).ok());
}

TEST_CASE("admission loop on the double: a refused revocation reads the pod once and patches once",
          "[admission_loop][revocation]") {
  RevocationHarness h;
  h.LostCore();
  REQUIRE(!h.server.Control("requests/clear").empty());
  SECTION("409: the server's own retries met a conflict") {
    REQUIRE(
        !h.server
             .Control(
                 "fail",
                 R"({"count":1,"code":409,"method":"PATCH","path_prefix":"/api/v1/namespaces/ns/pods/w-2"})")
             .empty());
    h.loop->RunOnce();
    CHECK(h.server.CountRequests("PATCH", "/pods/w-2") == 2);
    CHECK(h.server.CountRequests("GET", "/pods/w-2") == 1);
    CHECK_FALSE(h.Annotated("w-2"));
    CHECK(h.sink.creates.size() == 1);
    CHECK(h.Counted("capacity_extender_gate_rereads_total 1"));
  }
  SECTION("422: the cache was stale (someone annotated the pod since)") {
    const RestResponse r =
        h.client->Send("PATCH", "/api/v1/namespaces/ns/pods/w-2",
                       R"([{"op":"add","path":"/metadata/annotations/team","value":"x"}])",
                       "application/json-patch+json", {}, {});
    REQUIRE(r.status == 200);
    REQUIRE(!h.server.Control("requests/clear").empty());
    h.loop->RunOnce();
    CHECK(h.server.CountRequests("PATCH", "/pods/w-2") == 2);
    CHECK(h.server.CountRequests("GET", "/pods/w-2") == 1);
    const Pod now = h.Watched("w-2");
    CHECK(now.admitted_ms == 0);
    CHECK(h.sink.creates.size() == 1);
  }
  SECTION("a later admission meanwhile is left as it is") {
    const RestResponse r = h.client->Send(
        "PATCH", "/api/v1/namespaces/ns/pods/w-2",
        R"([{"op":"replace","path":"/metadata/annotations/scheduling.capacity-extender.io~1admitted-at","value":"2027-01-15T09:00:00.000Z"}])",
        "application/json-patch+json", {}, {});
    REQUIRE(r.status == 200);
    REQUIRE(!h.server.Control("requests/clear").empty());
    h.loop->RunOnce();
    CHECK(h.server.CountRequests("PATCH", "/pods/w-2") == 1);
    CHECK(h.server.CountRequests("GET", "/pods/w-2") == 1);
    CHECK(h.Annotated("w-2"));
    CHECK(h.sink.creates.empty());
    // The watch shows the later admission: the record ends and it holds again.
    h.Write([&](ClusterState& s) { s.UpsertPod(h.Watched("w-2")); });
    CHECK(h.Used() == 1000);
  }
  SECTION("a server error is counted and retried after a backoff, not at once") {
    REQUIRE(
        !h.server
             .Control(
                 "fail",
                 R"({"count":1,"code":500,"method":"PATCH","path_prefix":"/api/v1/namespaces/ns/pods/w-2"})")
             .empty());
    h.loop->RunOnce();
    CHECK(h.server.CountRequests("PATCH", "/pods/w-2") == 1);
    CHECK(h.Annotated("w-2"));
    CHECK(h.Counted("capacity_extender_admission_revoke_failures_total 1"));
    CHECK(h.Used() == 0);  // the record stands while the loop retries
    h.now += 500;
    h.loop->RunOnce();
    CHECK(h.server.CountRequests("PATCH", "/pods/w-2") == 1);
    h.now += 500;
    h.loop->RunOnce();
    CHECK(h.server.CountRequests("PATCH", "/pods/w-2") == 2);
    CHECK_FALSE(h.Annotated("w-2"));
    CHECK(h.sink.creates.size() == 1);
  }
}

}  // namespace
}  // namespace admission_revocation_test
}  // namespace capext
