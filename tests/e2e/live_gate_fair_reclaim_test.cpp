// End to end, gate mode's reclaim for the fairness barrier
// (docs/fair-sharing.md#gate-mode-the-admission-loop-reclaims-for-the-barrier): the real
// `capacity-extender serve --admission-mode gate --fair-sharing` against the API-server TEST
// DOUBLE (tests/apiserver_double/apiserver_double.py). No kube-scheduler: the pods reach it only
// when their gates are lifted, which is where this test stops.
//
// Nodes n1, n2 of 4 cpu. ElasticQuotas: lend {min 4, max 4} runs nothing; a {min 0, max 8,
// weight 1} runs a-1..a-4 (1 cpu each, on n1, started in that order long ago): it borrows all 4
// idle cpu of the pool (the sum of all mins, 4); b {min 0, max 8, weight 3} creates four gated
// 1-cpu pods b-0..b-3. The double re-creates nothing, so a's demand falls as its pods go; either
// way fairShare is a 1, b 3 (λ = 1), b's fair value 3/4/3 = 0.250.
//   - b's first unit is the barrier (share after 1/4/3 = 0.083, the sum of all mins blocks it):
//     the admission loop evicts a's newest pod a-4 and lifts b-0's gate once the room is free;
//     then a-3 for b-1, a-2 for b-2;
//   - b-3 stays gated: b's share 3/4/3 = 0.250 is its fair share, and /pending says so; a-1 stays.
#include <rapidjson/document.h>

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "tests/support/apiserver_double_process.h"
#include "tests/support/double_objects.h"
#include "tests/support/extender_process.h"
#include "tests/support/http_client.h"

namespace live_gate_fair_reclaim_test {
namespace {

using capext::kube::testing::ApiServerDouble;
using capext::test::ExtenderProcess;
using capext::test::ReadyNodeJson;
using capext::test::StringMember;
using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

constexpr char kToken[] = "gate-fair-reclaim-token";

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

std::string Quota(const std::string& ns, int min, int max, const std::string& weight) {
  const std::string annotations =
      weight.empty() ? ""
                     : R"(,"annotations":{"scheduling.capacity-extender.io/fair-share-weight":")" +
                           weight + R"("})";
  return R"({"apiVersion":"scheduling.x-k8s.io/v1alpha1","kind":"ElasticQuota","metadata":{"name":")" +
         ns + R"(","namespace":")" + ns + R"(")" + annotations + R"(},"spec":{"min":{"cpu":)" +
         std::to_string(min) + R"(},"max":{"cpu":)" + std::to_string(max) + "}}}";
}

std::string Containers() {
  return R"("containers":[{"name":"c","image":"nginx","resources":{"requests":{"cpu":"1"},)"
         R"("limits":{"cpu":"1"}}}])";
}

// a-i on n1, started i seconds into 2026: a-4 is the newest.
std::string Borrower(int i) {
  const std::string n = std::to_string(i);
  return R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"a-)" + n +
         R"(","namespace":"a"},"spec":{)" + Containers() +
         R"(,"nodeName":"n1"},"status":{"phase":"Running","startTime":"2026-01-01T00:00:0)" + n +
         R"(Z","conditions":[{"type":"PodScheduled","status":"True"},{"type":"Ready","status":"True"}]}})";
}

std::string Gated(int i) {
  return R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"b-)" + std::to_string(i) +
         R"(","namespace":"b"},"spec":{"schedulingGates":[{"name":"scheduling.capacity-extender.io/quota"}],)" +
         Containers() + R"(},"status":{"phase":"Pending"}})";
}

class FairGateCluster {
 public:
  FairGateCluster() {
    ApiServerDouble::Options options;
    options.token = kToken;
    double_ = std::make_unique<ApiServerDouble>(options);
    INFO(double_->error());
    REQUIRE(double_->started());
    kubeconfig_ = dir_.Write("kubeconfig", double_->KubeconfigText());
    for (int i = 1; i <= 2; ++i)
      Create("/api/v1/nodes", ReadyNodeJson("n" + std::to_string(i)));
    const std::string quotas = "/apis/scheduling.x-k8s.io/v1alpha1/namespaces/";
    Create(quotas + "lend/elasticquotas", Quota("lend", 4, 4, ""));
    Create(quotas + "a/elasticquotas", Quota("a", 0, 8, "1"));
    Create(quotas + "b/elasticquotas", Quota("b", 0, 8, "3"));
    for (int i = 1; i <= 4; ++i)
      Create("/api/v1/namespaces/a/pods", Borrower(i));
  }

  void Create(const std::string& collection, const std::string& json) {
    capext::kube::RestResponse r = double_->ControlClient()->Post(collection, json);
    INFO(collection << " " << r.status << " " << r.body);
    REQUIRE(r.status == 201);
  }

  void Start() {
    const bool started = extender_.Start({"--kubeconfig", kubeconfig_, "--admission-mode", "gate",
                                          "--fair-sharing", "--reclaim-interval", "200ms"},
                                         20s);
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

  ExtenderProcess& extender() { return extender_; }
  std::string Get(const std::string& path) {
    return capext::test::Fetch("127.0.0.1", extender_.port(), "GET", path).body;
  }

  // b's pods whose spec still carries a scheduling gate.
  std::set<std::string> StillGated() {
    rapidjson::Document doc;
    doc.Parse(double_->ControlGet("objects?resource=pods").c_str());
    std::set<std::string> gated;
    for (const auto& item : doc["items"].GetArray()) {
      if (StringMember(item["metadata"], "namespace") != "b") continue;
      const auto& spec = item["spec"];
      if (spec.HasMember("schedulingGates") && spec["schedulingGates"].IsArray() &&
          !spec["schedulingGates"].Empty())
        gated.insert(StringMember(item["metadata"], "name"));
    }
    return gated;
  }

  // Every eviction the double accepted, in order ("ns/name").
  std::vector<std::string> Evicted() {
    std::vector<std::string> out;
    rapidjson::Document doc;
    doc.Parse(double_->ControlGet("requests").c_str());
    const std::string suffix = "/eviction";
    for (const auto& e : doc["requests"].GetArray()) {
      const std::string path = StringMember(e, "path");
      if (StringMember(e, "method") != "POST" || e["status"].GetInt() >= 300 ||
          path.size() < suffix.size() ||
          path.compare(path.size() - suffix.size(), suffix.size(), suffix) != 0)
        continue;
      const auto ns_at = path.find("/namespaces/") + 12;
      const auto pods_at = path.find("/pods/", ns_at);
      out.push_back(path.substr(ns_at, pods_at - ns_at) + "/" +
                    path.substr(pods_at + 6, path.size() - suffix.size() - (pods_at + 6)));
    }
    return out;
  }

  // Our Reclaimed Events: the pod each regards -> its note.
  std::map<std::string, std::string> ReclaimedEvents() {
    std::map<std::string, std::string> out;
    rapidjson::Document doc;
    doc.Parse(double_->ControlGet("objects?resource=events").c_str());
    if (!doc.IsObject() || !doc.HasMember("items")) return out;
    for (const auto& item : doc["items"].GetArray()) {
      if (StringMember(item, "reason") != "Reclaimed") continue;
      out[StringMember(item["regarding"], "namespace") + "/" +
          StringMember(item["regarding"], "name")] = StringMember(item, "note");
    }
    return out;
  }

 private:
  capext::kube::testing::TempDir dir_;
  std::string kubeconfig_;
  std::unique_ptr<ApiServerDouble> double_;
  ExtenderProcess extender_;  // declared last: stopped before the double
};

}  // namespace

TEST_CASE(
    "live gate mode, fair sharing: the barrier evicts the over-share borrower's newest pod and "
    "its gate is lifted, down to the fair share and no further",
    "[e2e][live][gate-reclaim][fair]") {
  FairGateCluster cluster;
  // Created (gated) before the extender starts, so its first round sees b's whole demand: b's
  // fair value is 0.250 from the first plan on (created one by one after, the first plan could
  // see b's demand as 1 or 2 pods, and fair values of 0.083 or 0.167).
  for (int i = 0; i < 4; ++i)
    cluster.Create("/api/v1/namespaces/b/pods", Gated(i));
  cluster.Start();
  const bool three_admitted =
      Poll([&] { return cluster.StillGated() == std::set<std::string>{"b-3"}; }, 20s);
  INFO(cluster.extender().Log());
  REQUIRE(three_admitted);
  // a's newest first, one per unit of b.
  CHECK(cluster.Evicted() == std::vector<std::string>{"a/a-4", "a/a-3", "a/a-2"});
  // The first victim's Event names the move with its numbers.
  std::map<std::string, std::string> events;
  Poll(
      [&] {
        events = cluster.ReclaimedEvents();
        return events.size() >= 3;
      },
      5s);
  REQUIRE(events.count("a/a-4") == 1);
  CHECK(Contains(events["a/a-4"],
                 "evicted by quota reclaim for pod b/b-0: plan for pod b/b-0: b/b-0 -> n1; "
                 "victims: single a/a-4; reclaim by fair share: b/b's share after 0.083 <= a/a's "
                 "share after 0.750 (b/b's share 0.000 below its fair share 0.250)"));
  // b is at its fair share: b-3 waits, saying why, and nothing more is evicted.
  std::string pending;
  const bool says_why = Poll(
      [&] {
        pending = cluster.Get("/pending");
        return Contains(pending,
                        "reclaim by fair share: b/b's share 0.250 is not below its fair "
                        "share 0.250");
      },
      5s);
  INFO(pending);
  CHECK(says_why);
  std::this_thread::sleep_for(1s);
  CHECK(cluster.Evicted().size() == 3);
  CHECK(cluster.StillGated() == std::set<std::string>{"b-3"});
}
}  // namespace live_gate_fair_reclaim_test
