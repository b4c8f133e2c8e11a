// End to end, live mode under API-server faults: the real `capacity-extender serve` against the
// API-server TEST DOUBLE (tests/apiserver_double/apiserver_double.py), which is killed (SIGKILL)
// and started again on the same port with the same objects (resourceVersion moved on, so every
// watch gets 410 and relists), as issue 18's kube-apiserver was. The seed-002 cluster (nodes n1,
// n2, a tainted master; eq1 {min 6, max 10} borrowing 2 of eq2's {min 12, max 14}; job-a, job-b,
// nb-a, nb-b of eq1 and job-1 of eq2 running) is loaded before the extender starts, with
// --max-out-of-sync 1s and --reclaim-interval 200ms.
//
// What is checked (docs/architecture.md#staying-in-sync-with-the-api-server,
// docs/capacity-semantics.md#12-deciding-on-a-cache-that-is-out-of-sync):
//   1. while the double is down, /readyz answers 503 naming the resources out of sync, for how
//      long and why; /pending says why reclaim is held; /metrics' gauges and the log agree; once
//      the double answers again, /readyz is 200 within 2 s (a stated, generous bound: the
//      informers probe it every 0.25-0.5 s, then relist a handful of objects);
//   2. no eviction is decided on a cache out of sync: the double comes back with eq2/job-2
//      pending (it needs 5 cpu) and a new empty node n3, and its node LIST is slowed by 2 s. For
//      that window the extender knows job-2 but not n3, and reclaim on that stale cache would
//      evict eq1/job-b; it is held instead, and once the nodes are in sync job-2 fits on n3:
//      nudged, nothing evicted.
#include <rapidjson/document.h>

#include <chrono>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "tests/support/apiserver_double_process.h"
#include "tests/support/extender_process.h"
#include "tests/support/http_client.h"

namespace live_faults_test {
namespace {

using capext::kube::testing::ApiServerDouble;
using capext::kube::testing::Eventually;
using capext::test::ClientResponse;
using capext::test::ExtenderProcess;
using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

constexpr char kToken[] = "faults-e2e-token";
constexpr char kNotebookClass[] = "priority-class-for-notebook";

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

std::string NodeJson(const std::string& name, const std::string& cpu, bool tainted = false) {
  const std::string taints =
      tainted
          ? R"("taints":[{"key":"node-role.kubernetes.io/control-plane","effect":"NoSchedule"}])"
          : "";
  return R"({"apiVersion":"v1","kind":"Node","metadata":{"name":")" + name +
         R"(","labels":{"kubernetes.io/hostname":")" + name + R"("}},"spec":{)" + taints +
         R"(},"status":{"allocatable":{"cpu":")" + cpu +
         R"(","memory":"32Gi","pods":"110"},"capacity":{"cpu":")" + cpu +
         R"(","memory":"32Gi","pods":"110"},"conditions":[{"type":"Ready","status":"True"}]}})";
}

std::string QuotaJson(const std::string& ns, const std::string& min, const std::string& max) {
  return R"({"apiVersion":"scheduling.x-k8s.io/v1alpha1","kind":"ElasticQuota","metadata":{"name":")" +
         ns + R"(","namespace":")" + ns + R"("},"spec":{"min":{"cpu":")" + min +
         R"("},"max":{"cpu":")" + max + R"("}}})";
}

// A running pod on `node`, or (node empty) a pending one kube-scheduler marked unschedulable.
std::string PodJson(const std::string& ns, const std::string& name, const std::string& cpu,
                    const std::string& node, const std::string& start,
                    const std::string& priority_class = "") {
  std::string spec = R"("containers":[{"name":"c","image":"nginx","resources":{"requests":)"
                     R"({"cpu":")" +
                     cpu + R"("}}}])";
  if (!node.empty()) spec += R"(,"nodeName":")" + node + R"(")";
  if (!priority_class.empty()) spec += R"(,"priorityClassName":")" + priority_class + R"(")";
  const std::string status =
      node.empty() ? R"({"phase":"Pending","conditions":[{"type":"PodScheduled","status":"False",)"
                     R"("reason":"Unschedulable","message":"0/3 nodes are available"}]})"
                   : R"({"phase":"Running","startTime":")" + start +
                         R"(","conditions":[{"type":"PodScheduled","status":"True"}]})";
  return R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":")" + name + R"(","namespace":")" +
         ns + R"(","labels":{"app":")" + name + R"("}},"spec":{)" + spec + R"(},"status":)" +
         status + "}";
}

struct Logged {
  std::string method, path;
  int status = 0;
};

class FaultCluster {
 public:
  FaultCluster() : double_(Options()) {
    INFO(double_.error());
    REQUIRE(double_.started());
    kubeconfig_ = dir_.Write("kubeconfig", double_.KubeconfigText());
  }
  static ApiServerDouble::Options Options() {
    ApiServerDouble::Options options;
    options.token = kToken;
    return options;
  }

  void Create(const std::string& collection, const std::string& json) {
    capext::kube::RestResponse r = double_.ControlClient()->Post(collection, json);
    INFO(collection << " " << r.status << " " << r.error << " " << r.body);
    REQUIRE(r.status == 201);
  }
  // Through the double's control endpoint, which answers while its API still answers 503.
  void CreateWhileStarting(const std::string& resource, const std::string& json) {
    capext::kube::RestResponse r = double_.ControlClient()->Post(
        "/_double/create_many", R"({"resource":")" + resource + R"(","items":[)" + json + "]}");
    INFO(resource << " " << r.status << " " << r.body);
    REQUIRE(r.status == 201);
  }
  void LoadSeed() {
    Create("/api/v1/nodes", NodeJson("n1", "8"));
    Create("/api/v1/nodes", NodeJson("n2", "8"));
    Create("/api/v1/nodes", NodeJson("master", "8", true));
    Create("/apis/scheduling.k8s.io/v1/priorityclasses",
           R"({"apiVersion":"scheduling.k8s.io/v1","kind":"PriorityClass","metadata":{"name":")" +
               std::string(kNotebookClass) +
               R"("},"value":1000000,"preemptionPolicy":"Never","globalDefault":false})");
    const std::string eq = "/apis/scheduling.x-k8s.io/v1alpha1/namespaces/";
    Create(eq + "eq1/elasticquotas", QuotaJson("eq1", "6", "10"));
    Create(eq + "eq2/elasticquotas", QuotaJson("eq2", "12", "14"));
    Create("/api/v1/namespaces/eq1/pods",
           PodJson("eq1", "job-a", "2", "n1", "2026-01-01T00:00:00Z"));
    Create("/api/v1/namespaces/eq1/pods",
           PodJson("eq1", "job-b", "2", "n2", "2026-01-01T00:00:01Z"));
    Create("/api/v1/namespaces/eq2/pods",
           PodJson("eq2", "job-1", "3", "n1", "2026-01-01T00:00:02Z"));
    Create("/api/v1/namespaces/eq1/pods",
           PodJson("eq1", "nb-a", "2", "n1", "2026-01-01T00:01:00Z", kNotebookClass));
    Create("/api/v1/namespaces/eq1/pods",
           PodJson("eq1", "nb-b", "2", "n2", "2026-01-01T00:01:01Z", kNotebookClass));
  }
  void StartExtender() {
    const bool started =
        extender_.Start({"--kubeconfig", kubeconfig_, "--reclaim-interval", "200ms",
                         "--status-update-interval", "200ms", "--max-out-of-sync", "1s"},
                        20s);
    INFO(extender_.error());
    REQUIRE(started);
    const bool ready = Eventually([&] { return Get("/readyz").status == 200; }, 10s);
    INFO(extender_.Log());
    REQUIRE(ready);
  }

  ClientResponse Get(const std::string& target) {
    return capext::test::Fetch("127.0.0.1", extender_.port(), "GET", target);
  }
  rapidjson::Document Json(const std::string& target) {
    rapidjson::Document doc;
    doc.Parse(Get(target).body.c_str());
    return doc;
  }
  // GET /pending's reclaimHeld.reason ("" when null).
  std::string ReclaimHeld() {
    rapidjson::Document doc = Json("/pending");
    if (!doc.IsObject() || !doc.HasMember("reclaimHeld") || !doc["reclaimHeld"].IsObject())
      return "";
    return doc["reclaimHeld"]["reason"].GetString();
  }
  std::vector<Logged> Requests() {
    std::vector<Logged> out;
    rapidjson::Document doc;
    doc.Parse(double_.ControlGet("requests").c_str());
    if (doc.HasParseError() || !doc.IsObject()) return out;
    for (const auto& e : doc["requests"].GetArray())
      out.push_back({e["method"].GetString(), e["path"].GetString(), e["status"].GetInt()});
    return out;
  }
  int Count(const std::string& method, const std::string& path_part) {
    int n = 0;
    for (const auto& r : Requests())
      n += r.method == method && Contains(r.path, path_part) ? 1 : 0;
    return n;
  }

  ApiServerDouble& api() { return double_; }
  ExtenderProcess& extender() { return extender_; }

 private:
  capext::testing::TempDir dir_;
  ApiServerDouble double_;
  std::string kubeconfig_;
  ExtenderProcess extender_;  // declared last: stopped before the double
};

TEST_CASE(
    "live faults: the API server killed and restarted: /readyz 503 while out of sync, "
    "200 within 2 s of it answering",
    "[e2e][live][faults]") {
  FaultCluster cluster;
  cluster.LoadSeed();
  cluster.StartExtender();
  const std::string state = cluster.api().Save();
  REQUIRE_FALSE(state.empty());

  cluster.api().Crash();
  // Out of sync from the first moment; beyond --max-out-of-sync (1 s) /readyz is 503.
  const bool not_ready = Eventually([&] { return cluster.Get("/readyz").status == 503; }, 5s);
  REQUIRE(not_ready);
  std::this_thread::sleep_for(1500ms);
  const ClientResponse readyz = cluster.Get("/readyz");
  INFO(readyz.body);
  CHECK(readyz.status == 503);
  CHECK(Contains(readyz.body, "cache out of sync with the API server for longer than 1s: "));
  for (const char* resource : {"pods for ", "nodes for ", "elasticquotas for "})
    CHECK(Contains(readyz.body, resource));
  CHECK(Contains(readyz.body, "Connection refused"));
  const std::string held = cluster.ReclaimHeld();
  INFO(held);
  CHECK(Contains(held, "cache out of sync with the API server: pods for "));
  const std::string metrics = cluster.Get("/metrics").body;
  CHECK(Contains(metrics, "capacity_extender_cache_in_sync{resource=\"pods\"} 0"));
  CHECK(Contains(metrics, "capacity_extender_reclaim_held 1"));
  rapidjson::Document pending = cluster.Json("/pending");
  REQUIRE(pending.IsObject());
  CHECK_FALSE(pending["ready"].GetBool());
  CHECK(
      cluster.extender().WaitForLog("msg=\"cache out of sync with the API server\" resource=pods"));

  REQUIRE(cluster.api().Revive(state, 0, 1));  // answering from here
  const auto answering = Clock::now();
  const bool ready = Eventually([&] { return cluster.Get("/readyz").status == 200; }, 15s);
  const auto took = Clock::now() - answering;
  INFO(cluster.extender().Log());
  REQUIRE(ready);
  INFO("ready again " << std::chrono::duration_cast<std::chrono::milliseconds>(took).count()
                      << " ms after the double answered");
  CHECK(took < 2s);
  CHECK(Eventually([&] { return cluster.ReclaimHeld().empty(); }, 2s));
  CHECK(Contains(cluster.Get("/metrics").body,
                 "capacity_extender_cache_in_sync{resource=\"pods\"} 1"));
  CHECK(cluster.extender().WaitForLog("msg=\"cache back in sync\" resource=pods"));
  CHECK(cluster.extender().WaitForLog("msg=\"reclaim resumed: the cache is in sync\""));
  CHECK(cluster.Count("POST", "/eviction") == 0);
}

TEST_CASE("live faults: no eviction is decided while the nodes are out of sync",
          "[e2e][live][faults]") {
  FaultCluster cluster;
  cluster.LoadSeed();
  cluster.StartExtender();
  const std::string state = cluster.api().Save();
  REQUIRE_FALSE(state.empty());
  cluster.api().Crash();
  std::this_thread::sleep_for(1s);

  // Back, still starting for 1.5 s (/readyz 500, the API 503): enough to prepare it. While it
  // was down, job-2 was created and node n3 joined; its node requests are slowed by 2 s.
  REQUIRE(cluster.api().Revive(state, 1500, 1));
  REQUIRE_FALSE(cluster.api()
                    .Control("delay", R"({"ms":2000,"count":2,"path_prefix":"/api/v1/nodes",)"
                                      R"("method":"GET"})")
                    .empty());
  cluster.CreateWhileStarting("nodes", NodeJson("n3", "8"));
  cluster.CreateWhileStarting("pods", PodJson("eq2", "job-2", "5", "", ""));

  // The window: pods relisted (job-2 known), nodes not (n3 unknown). A reclaim pass on this
  // cache would evict eq1/job-b; it is held, naming the nodes.
  std::string held;
  const bool window = Eventually(
      [&] {
        const std::string metrics = cluster.Get("/metrics").body;
        if (!Contains(metrics, "capacity_extender_cache_in_sync{resource=\"pods\"} 1") ||
            !Contains(metrics, "capacity_extender_cache_in_sync{resource=\"nodes\"} 0")) {
          return false;
        }
        return true;
      },
      10s);
  INFO(cluster.extender().Log());
  REQUIRE(window);
  // /pending shows the last pass's reason (at most one interval old): the nodes alone.
  CHECK(Eventually(
      [&] {
        held = cluster.ReclaimHeld();
        return Contains(held, "cache out of sync with the API server: nodes for ") &&
               !Contains(held, "pods for ");
      },
      1s));
  INFO(held);

  // Once the nodes are in sync, job-2 fits on n3: nudged, and nothing evicted.
  const bool nudged = Eventually([&] { return cluster.Count("PATCH", "/pods/job-2") > 0; }, 10s);
  REQUIRE(nudged);
  std::this_thread::sleep_for(600ms);  // three more reclaim passes
  CHECK(cluster.Count("POST", "/eviction") == 0);
  CHECK(cluster.ReclaimHeld().empty());
  CHECK(cluster.Get("/readyz").status == 200);
  CHECK_FALSE(Contains(cluster.extender().Log(), "msg=\"reclaim started\""));
}

}  // namespace
}  // namespace live_faults_test
