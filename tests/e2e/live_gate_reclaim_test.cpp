// End to end, gate mode's reclaim for a gated gang
// (docs/reclaim-plan.md#gate-mode-the-admission-loop-plans-for-a-gated-gang): the real
// `capacity-extender serve --admission-mode gate` against the API-server TEST DOUBLE
// (tests/apiserver_double/apiserver_double.py). No kube-scheduler: the gang's pods reach it only
// when their gates are lifted, which is where this test stops.
//
// The cluster of the worked example
// (docs/reclaim-plan.md#worked-example-a-4-pod-gang-on-4-full-nodes): team-a {min cpu 12, max 16},
// team-b {min 0, max 16}; n1..n4 of 4 cpu, each full with a team-b borrower b1..b4 (4 cpu, started
// in that order); gang team-a/train of four gated 3-cpu pods (minMember 4 by annotation).
//   1. the plan evicts exactly b4, b3, b2, b1 (least important first), each once, each with a
//      Reclaimed Event naming the gang; the gates are lifted; nothing is evicted again;
//   2. with the double refusing b3's eviction once (429 with Retry-After) in the middle of the
//      plan: b4 goes, b3 is refused, the hold expires and is counted (b4 wasted), the gang is
//      planned again only after the Retry-After, and then b3, b2, b1 go: no victim evicted twice,
//      the successful evictions in the plan's order, the gates lifted.
#include <rapidjson/document.h>

#include <algorithm>
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

namespace live_gate_reclaim_test {
namespace {

using capext::kube::testing::ApiServerDouble;
using capext::test::ExtenderProcess;
using capext::test::ReadyNodeJson;
using capext::test::StringMember;
using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

constexpr char kToken[] = "gate-reclaim-token";

bool Poll(const std::function<bool()>& condition, std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  for (;;) {
    if (condition()) return true;
    if (Clock::now() >= deadline) return condition();
    std::this_thread::sleep_for(50ms);
  }
}

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

std::string Quota(const std::string& ns, int min, int max) {
  return R"({"apiVersion":"scheduling.x-k8s.io/v1alpha1","kind":"ElasticQuota","metadata":{"name":")" +
         ns + R"(","namespace":")" + ns + R"("},"spec":{"min":{"cpu":)" + std::to_string(min) +
         R"(},"max":{"cpu":)" + std::to_string(max) + "}}}";
}

std::string Containers(const std::string& cpu) {
  return R"("containers":[{"name":"c","image":"nginx","resources":{"requests":{"cpu":")" + cpu +
         R"("},"limits":{"cpu":")" + cpu + R"("}}}])";
}

std::string Borrower(int i) {
  const std::string n = std::to_string(i);
  return R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"b)" + n +
         R"(","namespace":"team-b"},"spec":{)" + Containers("4") + R"(,"nodeName":"n)" + n +
         R"("},"status":{"phase":"Running","startTime":"2026-01-01T00:00:0)" + n +
         R"(Z","conditions":[{"type":"PodScheduled","status":"True"},{"type":"Ready","status":"True"}]}})";
}

std::string GatedMember(int i) {
  return R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"w-)" + std::to_string(i) +
         R"(","namespace":"team-a","labels":{"scheduling.x-k8s.io/pod-group":"train"},)"
         R"("annotations":{"scheduling.capacity-extender.io/min-member":"4"}},"spec":{)"
         R"("schedulingGates":[{"name":"scheduling.capacity-extender.io/quota"}],)" +
         Containers("3") + R"(},"status":{"phase":"Pending"}})";
}

struct Eviction {
  std::string pod;  // "ns/name"
  int status = 0;
  double at = 0;  // Unix seconds when the double answered
};

class GateCluster {
 public:
  GateCluster() {
    ApiServerDouble::Options options;
    options.token = kToken;
    double_ = std::make_unique<ApiServerDouble>(options);
    INFO(double_->error());
    REQUIRE(double_->started());
    kubeconfig_ = dir_.Write("kubeconfig", double_->KubeconfigText());
    for (int i = 1; i <= 4; ++i)
      Create("/api/v1/nodes", ReadyNodeJson("n" + std::to_string(i)));
    Create("/apis/scheduling.x-k8s.io/v1alpha1/namespaces/team-a/elasticquotas",
           Quota("team-a", 12, 16));
    Create("/apis/scheduling.x-k8s.io/v1alpha1/namespaces/team-b/elasticquotas",
           Quota("team-b", 0, 16));
    for (int i = 1; i <= 4; ++i)
      Create("/api/v1/namespaces/team-b/pods", Borrower(i));
  }

  void Create(const std::string& collection, const std::string& json) {
    capext::kube::RestResponse r = double_->ControlClient()->Post(collection, json);
    INFO(collection << " " << r.status << " " << r.body);
    REQUIRE(r.status == 201);
  }
  void CreateGang() {
    for (int i = 0; i < 4; ++i)
      Create("/api/v1/namespaces/team-a/pods", GatedMember(i));
  }

  void Start(const std::vector<std::string>& extra = {}) {
    std::vector<std::string> args = {"--kubeconfig", kubeconfig_,          "--admission-mode",
                                     "gate",         "--reclaim-interval", "200ms"};
    args.insert(args.end(), extra.begin(), extra.end());
    const bool started = extender_.Start(args, 20s);
    INFO(extender_.error());
    REQUIRE(started);
    const bool ready = Poll(
        [&] {
          return capext::test::Fetch("127.0.0.1", extender_.port(), "GET", "/readyz").status == 200;
        },
        15s);
    INFO(extender_.Log());
    REQUIRE(ready);
  }

  ApiServerDouble& api() { return *double_; }
  ExtenderProcess& extender() { return extender_; }
  std::string Metrics() {
    return capext::test::Fetch("127.0.0.1", extender_.port(), "GET", "/metrics").body;
  }

  // Gang members whose spec still carries a scheduling gate.
  int StillGated() {
    rapidjson::Document doc;
    doc.Parse(double_->ControlGet("objects?resource=pods").c_str());
    int gated = 0;
    for (const auto& item : doc["items"].GetArray()) {
      if (StringMember(item["metadata"], "namespace") != "team-a") continue;
      const auto& spec = item["spec"];
      if (spec.HasMember("schedulingGates") && spec["schedulingGates"].IsArray() &&
          !spec["schedulingGates"].Empty())
        ++gated;
    }
    return gated;
  }

  // Every eviction POST the double answered, in order.
  std::vector<Eviction> Evictions() {
    std::vector<Eviction> out;
    rapidjson::Document doc;
    doc.Parse(double_->ControlGet("requests").c_str());
    for (const auto& e : doc["requests"].GetArray()) {
      const std::string path = StringMember(e, "path");
      const std::string suffix = "/eviction";
      if (StringMember(e, "method") != "POST" || path.size() < suffix.size() ||
          path.compare(path.size() - suffix.size(), suffix.size(), suffix) != 0)
        continue;
      // /api/v1/namespaces/<ns>/pods/<name>/eviction
      const auto ns_at = path.find("/namespaces/") + 12;
      const auto pods_at = path.find("/pods/", ns_at);
      const std::string name =
          path.substr(pods_at + 6, path.size() - suffix.size() - (pods_at + 6));
      out.push_back({path.substr(ns_at, pods_at - ns_at) + "/" + name, e["status"].GetInt(),
                     e["at"].GetDouble()});
    }
    return out;
  }
  static std::vector<std::string> Succeeded(const std::vector<Eviction>& evictions) {
    std::vector<std::string> out;
    for (const auto& e : evictions)
      if (e.status < 300) out.push_back(e.pod);
    return out;
  }

  // Our Reclaimed Events: the pod each regards -> its note.
  std::vector<std::pair<std::string, std::string>> ReclaimedEvents() {
    std::vector<std::pair<std::string, std::string>> out;
    rapidjson::Document doc;
    doc.Parse(double_->ControlGet("objects?resource=events").c_str());
    if (!doc.IsObject() || !doc.HasMember("items")) return out;
    for (const auto& item : doc["items"].GetArray()) {
      if (StringMember(item, "reason") != "Reclaimed") continue;
      out.emplace_back(StringMember(item["regarding"], "namespace") + "/" +
                           StringMember(item["regarding"], "name"),
                       StringMember(item, "note"));
    }
    return out;
  }

 private:
  capext::kube::testing::TempDir dir_;
  std::string kubeconfig_;
  std::unique_ptr<ApiServerDouble> double_;
  ExtenderProcess extender_;  // declared last: stopped before the double
};

const std::vector<std::string> kPlanOrder = {"team-b/b4", "team-b/b3", "team-b/b2", "team-b/b1"};

}  // namespace

TEST_CASE("live gate mode: a gated gang within its min evicts exactly the 4 borrowers, once",
          "[e2e][live][gate-reclaim]") {
  GateCluster cluster;
  cluster.Start();
  cluster.CreateGang();
  const bool ungated = Poll([&] { return cluster.StillGated() == 0; }, 15s);
  INFO(cluster.extender().Log());
  REQUIRE(ungated);
  CHECK(GateCluster::Succeeded(cluster.Evictions()) == kPlanOrder);
  // One Event per victim, written by the reclaim controller's events thread, naming the gang.
  std::vector<std::pair<std::string, std::string>> events;
  Poll(
      [&] {
        events = cluster.ReclaimedEvents();
        return events.size() >= 4;
      },
      5s);
  REQUIRE(events.size() == 4);
  std::vector<std::string> regarding;
  for (const auto& [pod, note] : events) {
    regarding.push_back(pod);
    CHECK(Contains(note,
                   "evicted by quota reclaim for gang team-a/train: plan for gang "
                   "team-a/train: team-a/w-0 -> n1"));
  }
  std::sort(regarding.begin(), regarding.end());
  CHECK(regarding == std::vector<std::string>{"team-b/b1", "team-b/b2", "team-b/b3", "team-b/b4"});
  // Five more admission rounds: nothing evicted again.
  std::this_thread::sleep_for(1s);
  CHECK(cluster.Evictions().size() == 4);
  const std::string metrics = cluster.Metrics();
  CHECK(Contains(metrics, "capacity_extender_reclaims_started_total 1"));
  CHECK(Contains(metrics, "capacity_extender_reclaim_plan_victims_total 4"));
}

TEST_CASE(
    "live gate mode: an eviction refused mid-plan (429, Retry-After): no victim twice, "
    "in order, the hold expires and is counted, the gang is admitted",
    "[e2e][live][gate-reclaim]") {
  GateCluster cluster;
  // b3, the plan's second victim, is refused once with Retry-After 6 s (longer than the 5 s
  // refusal backoff: it wins).
  REQUIRE(!cluster.api()
               .Control("fail", R"({"count":1,"code":429,"retry_after":6,"method":"POST",)"
                                R"("path_prefix":"/api/v1/namespaces/team-b/pods/b3/eviction"})")
               .empty());
  cluster.Start({"--nomination-ttl", "2s"});
  cluster.CreateGang();
  const bool ungated = Poll([&] { return cluster.StillGated() == 0; }, 20s);
  INFO(cluster.extender().Log());
  REQUIRE(ungated);
  const std::vector<Eviction> evictions = cluster.Evictions();
  // b4 evicted, b3 refused; after the hold expired and the Retry-After: b3, b2, b1.
  REQUIRE(evictions.size() == 5);
  CHECK(evictions[0].pod == "team-b/b4");
  CHECK(evictions[1].pod == "team-b/b3");
  CHECK(evictions[1].status == 429);
  CHECK(GateCluster::Succeeded(evictions) == kPlanOrder);  // each once, least important first
  CHECK(evictions[2].at - evictions[1].at >= 5.5);         // not planned again before Retry-After
  const std::string metrics = cluster.Metrics();
  CHECK(Contains(metrics, "capacity_extender_reclaims_expired_total 1"));
  CHECK(Contains(metrics, "capacity_extender_reclaim_wasted_evictions_total 1"));
  CHECK(Contains(metrics, "capacity_extender_reclaims_started_total 2"));
  CHECK(Contains(metrics, "capacity_extender_evictions_refused_total{namespace=\"team-b\"} 1"));
}
}  // namespace live_gate_reclaim_test
