// End to end, what gate mode asks of the API server per admitted pod
// (docs/workloads-live.md#the-gate-removal): the real `capacity-extender serve --admission-mode
// gate` against the API-server TEST DOUBLE (tests/apiserver_double/apiserver_double.py), whose
// request log is counted. No kube-scheduler: the pods stop when their gates are lifted.
//
// team-a {min cpu 16, max 16} on 4 nodes of 4 cpu; 12 single gated pods of 1 cpu, 6 created
// before the extender starts (they reach the cache through the list) and 6 after (through the
// watch). All are admitted at once. Per pod: exactly one PATCH of the pod, no GET of it; the
// ElasticQuota's status.used is written per interval, not per pod.
#include <rapidjson/document.h>

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "tests/support/apiserver_double_process.h"
#include "tests/support/double_objects.h"
#include "tests/support/extender_process.h"
#include "tests/support/http_client.h"

namespace live_gate_requests_test {
namespace {

using capext::kube::testing::ApiServerDouble;
using capext::kube::testing::Eventually;
using capext::test::ExtenderProcess;
using capext::test::ReadyNodeJson;
using capext::test::StringMember;
using namespace std::chrono_literals;

constexpr char kToken[] = "gate-requests-token";
constexpr int kPods = 12;

// Half of the pods carry an annotation of someone else's (kept by the patch), half none.
std::string GatedPod(int i) {
  const std::string annotations =
      i % 2 == 0 ? R"(,"annotations":{"example.com/owner":"team-a"})" : "";
  return R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p-)" + std::to_string(i) +
         R"(","namespace":"team-a")" + annotations +
         R"(},"spec":{"schedulingGates":[{"name":"scheduling.capacity-extender.io/quota"}],)"
         R"("containers":[{"name":"c","image":"nginx","resources":{"requests":{"cpu":"1"}}}]},)"
         R"("status":{"phase":"Pending"}})";
}

// The double's request log, by what a request did.
struct RequestCounts {
  int pod_gets = 0;      // GET of one pod (not a list or a watch)
  int pod_patches = 0;   // PATCH of one pod
  int quota_writes = 0;  // any write to an ElasticQuota (status.used)
  int event_writes = 0;  // any write to an Event
  int other_writes = 0;  // besides pod creates (the test's, and the start-up dry-run probe)
  std::string others;    // their methods and paths
};

RequestCounts Count(ApiServerDouble& api) {
  RequestCounts c;
  rapidjson::Document doc;
  doc.Parse(api.ControlGet("requests").c_str());
  REQUIRE(doc.IsObject());
  const std::string one_pod = "/api/v1/namespaces/team-a/pods/";
  for (const auto& e : doc["requests"].GetArray()) {
    const std::string method = StringMember(e, "method"), path = StringMember(e, "path");
    const bool is_pod = path.rfind(one_pod, 0) == 0 &&
                        path.find('/', one_pod.size()) == std::string::npos &&
                        path.size() > one_pod.size();
    if (method == "GET") {
      if (is_pod) ++c.pod_gets;
    } else if (is_pod && method == "PATCH") {
      ++c.pod_patches;
    } else if (path.find("/elasticquotas") != std::string::npos) {
      ++c.quota_writes;
    } else if (path.find("/events") != std::string::npos) {
      ++c.event_writes;
    } else if (!(method == "POST" && path.size() > 5 && path.substr(path.size() - 5) == "/pods") &&
               path.find("/leases") == std::string::npos) {
      ++c.other_writes;
      c.others += " " + method + " " + path + "?" + StringMember(e, "query");
    }
  }
  return c;
}

}  // namespace

TEST_CASE("live gate mode: one PATCH and no GET per admitted pod; status.used per interval",
          "[e2e][live][gate-requests]") {
  ApiServerDouble::Options options;
  options.token = kToken;
  ApiServerDouble api(options);
  INFO(api.error());
  REQUIRE(api.started());
  capext::kube::testing::TempDir dir;
  const std::string kubeconfig = dir.Write("kubeconfig", api.KubeconfigText());
  auto create = [&](const std::string& collection, const std::string& json) {
    const capext::kube::RestResponse r = api.ControlClient()->Post(collection, json);
    INFO(collection << " " << r.status << " " << r.body);
    REQUIRE(r.status == 201);
  };
  for (int i = 1; i <= 4; ++i)
    create("/api/v1/nodes", ReadyNodeJson("n" + std::to_string(i)));
  create("/apis/scheduling.x-k8s.io/v1alpha1/namespaces/team-a/elasticquotas",
         R"({"apiVersion":"scheduling.x-k8s.io/v1alpha1","kind":"ElasticQuota",)"
         R"("metadata":{"name":"team-a","namespace":"team-a"},)"
         R"("spec":{"min":{"cpu":16},"max":{"cpu":16}}})");
  for (int i = 0; i < kPods / 2; ++i)
    create("/api/v1/namespaces/team-a/pods", GatedPod(i));
  REQUIRE(!api.Control("requests/clear").empty());

  ExtenderProcess extender;  // declared after the double: stopped before it
  const bool started = extender.Start(
      {"--kubeconfig", kubeconfig, "--admission-mode", "gate", "--reclaim-interval", "200ms"}, 20s);
  INFO(extender.error());
  REQUIRE(started);
  const auto ungated = [&] {
    int gated = 0, annotated = 0;
    rapidjson::Document doc;
    doc.Parse(api.ControlGet("objects?resource=pods").c_str());
    for (const auto& pod : doc["items"].GetArray()) {
      const auto& spec = pod["spec"];
      if (spec.HasMember("schedulingGates") && !spec["schedulingGates"].Empty()) ++gated;
      const auto& meta = pod["metadata"];
      if (meta.HasMember("annotations") &&
          meta["annotations"].HasMember("scheduling.capacity-extender.io/admitted-at"))
        ++annotated;
    }
    return std::make_pair(gated, annotated);
  };
  INFO(extender.Log());
  REQUIRE(Eventually([&] { return ungated() == std::make_pair(0, kPods / 2); }, 15s));
  for (int i = kPods / 2; i < kPods; ++i)
    create("/api/v1/namespaces/team-a/pods", GatedPod(i));
  REQUIRE(Eventually([&] { return ungated() == std::make_pair(0, kPods); }, 15s));
  std::this_thread::sleep_for(1500ms);  // the quota's status.used settles (one write per second)

  const RequestCounts c = Count(api);
  INFO("per " << kPods << " pods: GET " << c.pod_gets << ", PATCH " << c.pod_patches
              << ", ElasticQuota writes " << c.quota_writes << ", Event writes " << c.event_writes
              << ", other writes " << c.other_writes << ":" << c.others);
  CHECK(c.pod_gets == 0);
  CHECK(c.pod_patches == kPods);
  // Coalesced: two bursts of admissions, a few seconds in all; never one write per pod.
  CHECK(c.quota_writes >= 1);
  CHECK(c.quota_writes <= 6);
  CHECK(c.other_writes == 0);
  // Someone else's annotation is kept.
  rapidjson::Document pod;
  pod.Parse(api.ControlClient()->Get("/api/v1/namespaces/team-a/pods/p-0").body.c_str());
  CHECK(StringMember(pod["metadata"]["annotations"], "example.com/owner") == "team-a");
  const std::string metrics =
      capext::test::Fetch("127.0.0.1", extender.port(), "GET", "/metrics").body;
  const bool no_reread =
      metrics.find("capacity_extender_gate_rereads_total") == std::string::npos ||
      metrics.find("capacity_extender_gate_rereads_total 0\n") != std::string::npos;
  CHECK(no_reread);
}
}  // namespace live_gate_requests_test
