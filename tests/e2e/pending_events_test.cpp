// End to end, issue 12's acceptance: operators see why a quota pod waits. The real
// `capacity-extender serve --kubeconfig F` in live mode against the API-server TEST DOUBLE
// (tests/apiserver_double/apiserver_double.py), loaded with seed 002 (nodes n1, n2 of 8 cpu and
// a tainted master; eq1 {min 6, max 10} runs job-a, job-b, nb-a, nb-b = 8 cpu; eq2 {min 12,
// max 14} runs job-1 = 3 cpu), a PodDisruptionBudget on job-b and the double's PDB refusal on.
// Three pods wait, each marked unschedulable by "kube-scheduler" (no node has room for them):
//   (a) eq1/big,   5 cpu: over eq1's max (8 + 5 > 10)                  -> QuotaExceeded
//   (b) eq2/wide,  8 cpu: behind the sum of mins (Σused 11 + 8 > Σmin 18) -> QuotaExceeded
//   (c) eq2/job-2, 5 cpu: its only reclaim candidate, job-b on n2, is refused by the PDB
//                                                                        -> ReclaimRefused
// For each: one events.k8s.io/v1 Warning Event with that reason and the numbers within 2 s;
// after 20 s its series count has grown and it is still the only Event for the pod (the refresh
// interval is 5 s here, 30 s by default); GET /pending agrees; once the pod binds, nothing more
// is written about it.
#include <rapidjson/document.h>

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <catch2/catch.hpp>

#include "tests/support/apiserver_double_process.h"
#include "tests/support/double_objects.h"
#include "tests/support/extender_process.h"
#include "tests/support/http_client.h"

namespace pending_events_test {
namespace {

using capext::kube::testing::ApiServerDouble;
using capext::test::ExtenderProcess;
using capext::test::StringMember;
using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

constexpr char kToken[] = "events-e2e-token";

bool Poll(const std::function<bool()>& condition, std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  while (!condition()) {
    if (Clock::now() >= deadline) return condition();
    std::this_thread::sleep_for(50ms);
  }
  return true;
}

// One of our Events as the double stores it.
struct StoredEvent {
  std::string name, resource_version, reason, note, type, action, controller, pod, pod_uid;
  int series_count = 0;  // 0: no series yet
};

// The double with seed 002, a kubeconfig, and the extender once started.
class Cluster {
 public:
  Cluster() {
    ApiServerDouble::Options options;
    options.token = kToken;
    api_ = std::make_unique<ApiServerDouble>(options);
    INFO(api_->error());
    REQUIRE(api_->started());
    kubeconfig_ = dir_.Write("kubeconfig", api_->KubeconfigText());
  }

  void Post(const std::string& path, const std::string& json) {
    capext::kube::RestResponse r = api_->ControlClient()->Post(path, json);
    INFO(path << " " << r.status << " " << r.body);
    REQUIRE(r.status == 201);
  }
  void Node(const std::string& name, bool tainted = false) {
    Post("/api/v1/nodes",
         fmt::format(R"({{"metadata":{{"name":"{}"}},"spec":{{{}}},"status":{{"allocatable":)"
                     R"({{"cpu":"8","memory":"32Gi","pods":"110"}},"conditions":[{{"type":)"
                     R"("Ready","status":"True"}}]}}}})",
                     name,
                     tainted ? R"("taints":[{"key":"node-role.kubernetes.io/control-plane",)"
                               R"("effect":"NoSchedule"}])"
                             : ""));
  }
  void Quota(const std::string& ns, int min, int max) {
    Post("/apis/scheduling.x-k8s.io/v1alpha1/namespaces/" + ns + "/elasticquotas",
         fmt::format(R"({{"apiVersion":"scheduling.x-k8s.io/v1alpha1","kind":"ElasticQuota",)"
                     R"("metadata":{{"name":"{}"}},"spec":{{"min":{{"cpu":"{}"}},)"
                     R"("max":{{"cpu":"{}"}}}}}})",
                     ns, min, max));
  }
  // A running pod bound to `node`, or (node empty) a pending pod kube-scheduler found no node for.
  void Pod(const std::string& ns, const std::string& name, int cpu, const std::string& node,
           const std::string& priority_class = "") {
    const std::string spec = fmt::format(
        R"("containers":[{{"name":"c","image":"pause","resources":{{"requests":{{"cpu":"{}"}}}}}}]{}{})",
        cpu, node.empty() ? "" : R"(,"nodeName":")" + node + "\"",
        priority_class.empty() ? "" : R"(,"priorityClassName":")" + priority_class + "\"");
    const std::string status =
        node.empty()
            ? R"({"phase":"Pending","conditions":[{"type":"PodScheduled","status":"False",)"
              R"("reason":"Unschedulable","message":"0/3 nodes are available: 1 node(s) had )"
              R"(untolerated taint {node-role.kubernetes.io/control-plane: }, 2 Insufficient cpu."}]})"
            : R"({"phase":"Running","startTime":"2026-01-01T00:00:00Z","conditions":[)"
              R"({"type":"PodScheduled","status":"True"},{"type":"Ready","status":"True"}]})";
    Post("/api/v1/namespaces/" + ns + "/pods",
         fmt::format(R"({{"metadata":{{"name":"{}","labels":{{"app":"{}"}}}},"spec":{{{}}},)"
                     R"("status":{}}})",
                     name, name, spec, status));
  }
  void Bind(const std::string& ns, const std::string& name, const std::string& node) {
    Post("/api/v1/namespaces/" + ns + "/pods/" + name + "/binding",
         fmt::format(R"({{"apiVersion":"v1","kind":"Binding","metadata":{{"name":"{}"}},)"
                     R"("target":{{"apiVersion":"v1","kind":"Node","name":"{}"}}}})",
                     name, node));
  }

  void LoadSeed002WithPdb() {
    Node("n1");
    Node("n2");
    Node("master", true);
    Post("/apis/scheduling.k8s.io/v1/priorityclasses",
         R"({"metadata":{"name":"notebook"},"value":1000000,"preemptionPolicy":"Never"})");
    Quota("eq1", 6, 10);
    Quota("eq2", 12, 14);
    Pod("eq1", "job-a", 2, "n1");
    Pod("eq1", "job-b", 2, "n2");
    Pod("eq2", "job-1", 3, "n1");
    Pod("eq1", "nb-a", 2, "n1", "notebook");
    Pod("eq1", "nb-b", 2, "n2", "notebook");
    Post("/apis/policy/v1/namespaces/eq1/poddisruptionbudgets",
         R"({"metadata":{"name":"job-b"},"spec":{"minAvailable":1,"selector":{"matchLabels":)"
         R"({"app":"job-b"}}},"status":{"disruptionsAllowed":0,"currentHealthy":1,)"
         R"("desiredHealthy":1,"expectedPods":1}})");
    REQUIRE_FALSE(api_->Control("pdb_refusal", R"({"enabled":true,"style":"budget"})").empty());
  }

  void StartExtender(const std::vector<std::string>& extra) {
    std::vector<std::string> args = {"--kubeconfig", kubeconfig_, "--reclaim-interval", "200ms"};
    args.insert(args.end(), extra.begin(), extra.end());
    const bool started = extender_.Start(args, 20s);
    INFO(extender_.error());
    REQUIRE(started);
    const bool ready = Poll([&] { return Get("/readyz").status == 200; }, 15s);
    INFO(extender_.Log());
    REQUIRE(ready);
  }
  capext::test::ClientResponse Get(const std::string& target) {
    return capext::test::Fetch("127.0.0.1", extender_.port(), "GET", target);
  }

  // Our Events (reportingController capacity-extender) by the pod they regard.
  std::map<std::string, std::vector<StoredEvent>> EventsByPod() {
    std::map<std::string, std::vector<StoredEvent>> out;
    rapidjson::Document doc;
    doc.Parse(api_->ControlGet("objects?resource=events").c_str());
    if (!doc.IsObject() || !doc.HasMember("items")) return out;
    for (const auto& item : doc["items"].GetArray()) {
      StoredEvent e;
      e.name = StringMember(item["metadata"], "name");
      e.resource_version = StringMember(item["metadata"], "resourceVersion");
      e.reason = StringMember(item, "reason");
      e.note = StringMember(item, "note");
      e.type = StringMember(item, "type");
      e.action = StringMember(item, "action");
      e.controller = StringMember(item, "reportingController");
      e.pod = StringMember(item["regarding"], "namespace") + "/" +
              StringMember(item["regarding"], "name");
      e.pod_uid = StringMember(item["regarding"], "uid");
      if (item.HasMember("series")) e.series_count = item["series"]["count"].GetInt();
      out[e.pod].push_back(std::move(e));
    }
    return out;
  }
  std::string PodUid(const std::string& key) {
    rapidjson::Document doc;
    doc.Parse(api_->ControlGet("objects?resource=pods").c_str());
    for (const auto& item : doc["items"].GetArray()) {
      if (StringMember(item["metadata"], "namespace") + "/" +
              StringMember(item["metadata"], "name") ==
          key)
        return StringMember(item["metadata"], "uid");
    }
    return "";
  }
  // Event writes (POST or PATCH under .../events) logged by the double after `since`.
  int EventWritesSince(int64_t since) {
    rapidjson::Document doc;
    doc.Parse(api_->ControlGet("requests?since=" + std::to_string(since)).c_str());
    int n = 0;
    for (const auto& r : doc["requests"].GetArray()) {
      const std::string path = r["path"].GetString();
      const std::string method = r["method"].GetString();
      if (path.find("/events") != std::string::npos && (method == "POST" || method == "PATCH")) ++n;
    }
    return n;
  }
  int64_t LastSeq() {
    rapidjson::Document doc;
    doc.Parse(api_->ControlGet("requests").c_str());
    const auto& all = doc["requests"];
    return all.Empty() ? 0 : all[all.Size() - 1]["seq"].GetInt64();
  }

  ApiServerDouble& api() { return *api_; }
  ExtenderProcess& extender() { return extender_; }

 private:
  capext::testing::TempDir dir_;
  std::string kubeconfig_;
  std::unique_ptr<ApiServerDouble> api_;
  ExtenderProcess extender_;  // declared last: stopped before the double
};

struct Expected {
  std::string pod, reason, action;
  std::vector<std::string> note_parts;  // the note contains each
};

const std::vector<Expected>& Waiting() {
  static const std::vector<Expected> expected = {
      {"eq1/big",
       "QuotaExceeded",
       "QuotaCheck",
       {"pod eq1/big rejected: ElasticQuota eq1/eq1 would exceed max: cpu used 8 + request 5 > "
        "max 10"}},
      {"eq2/wide",
       "QuotaExceeded",
       "QuotaCheck",
       {"pod eq2/wide rejected: total ElasticQuota usage would exceed the sum of all mins: cpu "
        "used 11 + request 8 > min 18"}},
      {"eq2/job-2",
       "ReclaimRefused",
       "Reclaim",
       {"reclaim for pod eq2/job-2 refused: every candidate's eviction was refused by a "
        "PodDisruptionBudget (eq1/job-b on node n2: HTTP 429 TooManyRequests: Cannot evict pod "
        "as it would violate the pod's disruption budget.",
        "The disruption budget job-b needs 1 healthy pods and has 1 currently",
        "retrying with backoff"}},
  };
  return expected;
}

}  // namespace

TEST_CASE("events: over max, behind the sum of mins, refused by a PDB - one Event each, counting",
          "[e2e][live][events]") {
  Cluster cluster;
  cluster.LoadSeed002WithPdb();
  cluster.StartExtender({"--event-refresh-interval", "5s"});

  cluster.Pod("eq1", "big", 5, "");
  cluster.Pod("eq2", "wide", 8, "");
  cluster.Pod("eq2", "job-2", 5, "");

  // One Event per pod, with the reason and the numbers. (The wait is generous so that a loaded
  // machine does not fail it: what is checked is the Events, not how soon they come.)
  const bool all_there = Poll(
      [&] {
        auto events = cluster.EventsByPod();
        for (const auto& w : Waiting())
          if (events[w.pod].empty()) return false;
        return true;
      },
      30s);
  INFO(cluster.extender().Log());
  REQUIRE(all_there);
  const auto seen = Clock::now();
  std::map<std::string, std::string> first_name;
  {
    auto events = cluster.EventsByPod();
    for (const auto& w : Waiting()) {
      INFO(w.pod);
      REQUIRE(events[w.pod].size() == 1);
      const StoredEvent& e = events[w.pod][0];
      CHECK(e.reason == w.reason);
      CHECK(e.action == w.action);
      CHECK(e.type == "Warning");
      CHECK(e.controller == "capacity-extender");
      CHECK(e.pod_uid == cluster.PodUid(w.pod));
      for (const auto& part : w.note_parts) {
        INFO(e.note);
        CHECK(e.note.find(part) != std::string::npos);
      }
      first_name[w.pod] = e.name;
    }
  }

  // GET /pending says the same, and job-2 is backing off from the refused eviction.
  {
    capext::test::ClientResponse r = cluster.Get("/pending");
    REQUIRE(r.status == 200);
    rapidjson::Document doc;
    doc.Parse(r.body.c_str());
    REQUIRE(doc.IsObject());
    CHECK(doc["ready"].GetBool());
    std::map<std::string, const rapidjson::Value*> by_pod;
    for (const auto& p : doc["pending"].GetArray())
      by_pod[StringMember(p, "namespace") + "/" + StringMember(p, "name")] = &p;
    for (const auto& w : Waiting()) {
      INFO(w.pod);
      REQUIRE(by_pod.count(w.pod) == 1);
      CHECK(StringMember(*by_pod[w.pod], "reason") == w.reason);
      CHECK(StringMember(*by_pod[w.pod], "message").find(w.note_parts[0]) != std::string::npos);
      CHECK((*by_pod[w.pod])["waitingSeconds"].IsNumber());
    }
    CHECK(StringMember((*by_pod["eq2/job-2"])["reclaim"], "state") == "backoff");
    CHECK(StringMember((*by_pod["eq1/big"])["reclaim"], "state") == "none");
  }

  // 12 s after they were seen (two refreshes or more): still exactly one Event per pod (the same
  // object), its count grown.
  std::this_thread::sleep_until(seen + 12s);
  {
    auto events = cluster.EventsByPod();
    for (const auto& w : Waiting()) {
      INFO(w.pod);
      REQUIRE(events[w.pod].size() == 1);
      const StoredEvent& e = events[w.pod][0];
      CHECK(e.name == first_name[w.pod]);
      CHECK(e.reason == w.reason);
      CHECK(e.series_count >= 2);
      WARN(w.pod << ": series.count " << e.series_count << " 12 s on (refresh every 5 s)");
    }
  }

  // They bind (the quota was raised, job-b's owner scaled it down...): nothing more is written.
  cluster.Bind("eq1", "big", "n1");
  cluster.Bind("eq2", "wide", "n2");
  cluster.Bind("eq2", "job-2", "n2");
  const bool gone = Poll(
      [&] {
        capext::test::ClientResponse r = cluster.Get("/pending");
        return r.status == 200 && r.body.find("\"pending\":[]") != std::string::npos;
      },
      30s);
  REQUIRE(gone);
  const auto after_bind = cluster.EventsByPod();
  const int64_t since = cluster.LastSeq();
  std::this_thread::sleep_for(12s);  // more than two refresh intervals
  CHECK(cluster.EventWritesSince(since) == 0);
  auto later = cluster.EventsByPod();
  for (const auto& w : Waiting()) {
    INFO(w.pod);
    REQUIRE(later[w.pod].size() == 1);
    CHECK(later[w.pod][0].resource_version == after_bind.at(w.pod)[0].resource_version);
  }
  CHECK(cluster.extender().Log().find("event write failed") == std::string::npos);
}
}  // namespace pending_events_test
