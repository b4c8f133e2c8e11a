// End to end, two replicas, one actor (docs/architecture.md): two `capacity-extender serve`
// processes in live mode (--leader-election follow-scheduler, identities replica-a and replica-b)
// against one API-server TEST DOUBLE (tests/apiserver_double/apiserver_double.py), which logs
// every request with its User-Agent (capacity-extender/<identity>). The test plays kube-scheduler's
// leader election: it writes the Lease kube-system/kube-scheduler as client-go does (holder
// "<identity>_<uuid>", renewals every 250 ms by PUT with the resourceVersion it read, 2 s
// duration). The extenders judge it with --lease-renew-deadline 1200ms (a margin of 800 ms).
//
// The seed-002 cluster (nodes n1, n2 and a tainted master of 8 cpu; eq1 {min 6, max 10} borrows
// with job-a, job-b, nb-a, nb-b; eq2 {min 12, max 14} runs job-1) and job-2 (eq2, 5 cpu) pending:
// reclaim must evict job-b, whose deletion takes 5 s (the double's graceful deletion).
//   1. replica-a's scheduler holds the lease: a leads, b follows (/readyz, /metrics);
//   2. a records the reclaim on job-2 and evicts job-b;
//   3. mid-reclaim (job-b terminating, job-2 not bound), a's scheduler stops renewing; 2 s later
//      b's scheduler acquires the lease (leaseTransitions 1) and renews it;
//   4. b holds the room for job-2 (a new eq1 pod is refused n2), never evicts job-b again, nudges
//      job-2 once job-b is gone, and job-2 binds through b: the reclaim completes on b.
// From the double's request log: job-b evicted exactly once; every write (eviction, record,
// nudge, status.used, Event, binding) of a before b's scheduler acquired the lease, every write of
// b after it; b nudged job-2; a wrote status.used and the record before the move.
#include <rapidjson/document.h>

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "extender/kube/api_writes.h"
#include "tests/support/apiserver_double_process.h"
#include "tests/support/extender_process.h"
#include "tests/support/http_client.h"
#include "tests/support/scheduler_leases.h"

namespace two_replicas_test {
namespace {

using capext::kube::RestClient;
using capext::kube::RestResponse;
using capext::kube::testing::ApiServerDouble;
using capext::kube::testing::Eventually;
using capext::kube::testing::SchedulerLeases;
using capext::test::ExtenderProcess;
using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

constexpr char kToken[] = "two-replicas-token";

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

std::string Node(const std::string& name, bool tainted = false) {
  return R"({"metadata":{"name":")" + name + R"("},"spec":{)" +
         (tainted
              ? R"("taints":[{"key":"node-role.kubernetes.io/control-plane","effect":"NoSchedule"}])"
              : "") +
         R"(},"status":{"allocatable":{"cpu":"8","memory":"32Gi","pods":"110"},)"
         R"("conditions":[{"type":"Ready","status":"True"}]}})";
}

std::string Quota(const std::string& ns, int min, int max) {
  return R"({"apiVersion":"scheduling.x-k8s.io/v1alpha1","kind":"ElasticQuota","metadata":{"name":")" +
         ns + R"(","namespace":")" + ns + R"("},"spec":{"min":{"cpu":")" + std::to_string(min) +
         R"("},"max":{"cpu":")" + std::to_string(max) + R"("}}})";
}

// A running pod bound to `node`, or (node "") pending; `unschedulable` as kube-scheduler marks it.
std::string PodJson(const std::string& ns, const std::string& name, int cpu,
                    const std::string& node, const std::string& start = "2026-01-01T00:00:00Z",
                    const std::string& pc = "", bool unschedulable = false) {
  std::string spec =
      R"("containers":[{"name":"c","image":"nginx","resources":{"requests":{"cpu":")" +
      std::to_string(cpu) + R"("}}}])";
  if (!node.empty()) spec += R"(,"nodeName":")" + node + R"(")";
  if (!pc.empty()) spec += R"(,"priorityClassName":")" + pc + R"(")";
  const std::string status =
      !node.empty() ? R"({"phase":"Running","startTime":")" + start +
                          R"(","conditions":[{"type":"PodScheduled","status":"True"}]})"
      : unschedulable
          ? R"({"phase":"Pending","conditions":[{"type":"PodScheduled","status":"False","reason":"Unschedulable"}]})"
          : R"({"phase":"Pending"})";
  return R"({"metadata":{"name":")" + name + R"(","namespace":")" + ns + R"("},"spec":{)" + spec +
         R"(},"status":)" + status + "}";
}

std::string StringAt(const rapidjson::Value& v, std::initializer_list<const char*> path) {
  const rapidjson::Value* at = &v;
  for (const char* key : path) {
    if (!at->IsObject() || !at->HasMember(key)) return "";
    at = &(*at)[key];
  }
  return at->IsString() ? at->GetString() : "";
}

struct Logged {
  int64_t seq = 0;
  std::string method, path, body, user_agent;
  int status = 0;
  bool write() const { return method != "GET"; }
};

std::vector<Logged> Requests(ApiServerDouble& api) {
  std::vector<Logged> out;
  rapidjson::Document doc;
  doc.Parse(api.ControlGet("requests").c_str());
  if (!doc.IsObject()) return out;
  for (const auto& e : doc["requests"].GetArray()) {
    out.push_back({e["seq"].GetInt64(), e["method"].GetString(), e["path"].GetString(),
                   e["body"].GetString(), e["user_agent"].GetString(), e["status"].GetInt()});
  }
  return out;
}

std::string Fetch(ExtenderProcess& e, const std::string& method, const std::string& target,
                  const std::string& body = "") {
  return capext::test::Fetch("127.0.0.1", e.port(), method, target, body).body;
}

// The NodeNames of a /filter answer; {"?"} when it is not one.
std::vector<std::string> Passed(const std::string& answer) {
  rapidjson::Document doc;
  doc.Parse(answer.c_str());
  if (!doc.IsObject() || !doc.HasMember("NodeNames")) return {"?"};
  std::vector<std::string> out;
  if (doc["NodeNames"].IsArray())
    for (const auto& n : doc["NodeNames"].GetArray())
      out.emplace_back(n.GetString());
  return out;
}

bool Leads(ExtenderProcess& e) {
  rapidjson::Document doc;
  doc.Parse(Fetch(e, "GET", "/readyz").c_str());
  return doc.IsObject() && doc.HasMember("leader") && doc["leader"]["leads"].GetBool();
}

TEST_CASE(
    "two replicas: the lease moves during a reclaim; job-b is evicted exactly once, only "
    "the leader writes, and the reclaim completes on the new leader",
    "[e2e][live][replicas]") {
  ApiServerDouble::Options options;
  options.token = kToken;
  ApiServerDouble api(options);
  INFO(api.error());
  REQUIRE(api.started());
  RestClient* control = api.ControlClient();
  auto create = [&](const std::string& collection, const std::string& json) {
    RestResponse r = control->Post(collection, json);
    INFO(collection << " " << r.status << " " << r.body);
    REQUIRE(r.status == 201);
  };
  for (const char* n : {"n1", "n2"})
    create("/api/v1/nodes", Node(n));
  create("/api/v1/nodes", Node("master", true));
  create("/apis/scheduling.k8s.io/v1/priorityclasses",
         R"({"metadata":{"name":"notebook"},"value":1000000,"preemptionPolicy":"Never"})");
  const std::string eq = "/apis/scheduling.x-k8s.io/v1alpha1/namespaces/";
  create(eq + "eq1/elasticquotas", Quota("eq1", 6, 10));
  create(eq + "eq2/elasticquotas", Quota("eq2", 12, 14));
  const std::string eq1 = "/api/v1/namespaces/eq1/pods", eq2 = "/api/v1/namespaces/eq2/pods";
  create(eq1, PodJson("eq1", "job-a", 2, "n1", "2026-01-01T00:00:00Z"));
  create(eq1, PodJson("eq1", "job-b", 2, "n2", "2026-01-01T00:00:01Z"));
  create(eq2, PodJson("eq2", "job-1", 3, "n1", "2026-01-01T00:00:02Z"));
  create(eq1, PodJson("eq1", "nb-a", 2, "n1", "2026-01-01T00:01:00Z", "notebook"));
  create(eq1, PodJson("eq1", "nb-b", 2, "n2", "2026-01-01T00:01:01Z", "notebook"));
  REQUIRE(!api.Control("graceful_deletion", R"({"seconds":5})").empty());

  SchedulerLeases leases(&api);
  leases.Create("replica-a_8d1f5c2e-0a6b-4c1e-9f7d-2b3c4d5e6f70");

  capext::kube::testing::TempDir dir;
  const std::string kubeconfig = dir.Write("kubeconfig", api.KubeconfigText());
  auto args = [&](const std::string& identity) {
    return std::vector<std::string>{"--kubeconfig",
                                    kubeconfig,
                                    "--reclaim-interval",
                                    "200ms",
                                    "--status-update-interval",
                                    "200ms",
                                    "--leader-election",
                                    "follow-scheduler",
                                    "--leader-identity",
                                    identity,
                                    "--lease-duration",
                                    "2s",
                                    "--lease-renew-deadline",
                                    "1200ms",
                                    "--lease-check-interval",
                                    "100ms"};
  };
  ExtenderProcess a, b;
  REQUIRE(a.Start(args("replica-a")));
  REQUIRE(b.Start(args("replica-b")));
  INFO("replica-a:\n" << a.Log() << "\nreplica-b:\n" << b.Log());

  // 1. a's scheduler holds the lease: a acts, b follows; both are ready.
  REQUIRE(Eventually([&] { return Leads(a); }, 10s));
  CHECK_FALSE(Leads(b));
  CHECK(Contains(Fetch(b, "GET", "/readyz"), "\"status\":\"ready\""));
  CHECK(Contains(Fetch(b, "GET", "/readyz"), "\"holder\":\"replica-a_8d1f5c2e"));
  CHECK(Contains(Fetch(a, "GET", "/metrics"), "capacity_extender_leader 1\n"));
  CHECK(Contains(Fetch(b, "GET", "/metrics"), "capacity_extender_leader 0\n"));

  // 2. kube-scheduler marked job-2 unschedulable: a records the reclaim, then evicts job-b.
  create(eq2, PodJson("eq2", "job-2", 5, "", "", "", true));
  auto evictions = [&] {
    std::vector<Logged> out;
    for (auto& r : Requests(api))
      if (r.method == "POST" && Contains(r.path, "/eviction")) out.push_back(r);
    return out;
  };
  REQUIRE(Eventually([&] { return !evictions().empty(); }, 10s));

  // 3. Mid-reclaim: job-b is terminating, job-2 pending. a's scheduler stops renewing; b's
  // acquires once the record stayed unchanged for the lease duration (2 s).
  leases.Pause();
  const Clock::time_point last = leases.last_renewal();
  std::this_thread::sleep_until(last + 2100ms);
  const std::string job_b = control->Get(eq1 + "/job-b").body;
  CHECK(Contains(job_b, "deletionTimestamp"));  // still terminating at the move
  leases.Acquire("replica-b_3e9a7b1c-5d2f-4e8a-b6c0-1f2e3d4c5b6a");
  int64_t acquired_seq = 0;
  for (auto& r : Requests(api))
    if (r.method == "PUT" && Contains(r.body, "replica-b_")) {
      acquired_seq = r.seq;
      break;
    }
  REQUIRE(acquired_seq > 0);

  // 4. b takes over: it acts, a does not; the room on n2 stays held for job-2.
  REQUIRE(Eventually([&] { return Leads(b); }, 10s));
  CHECK_FALSE(Leads(a));
  CHECK(Contains(Fetch(a, "GET", "/readyz"), "is not this replica (replica-a)"));
  create(eq1, PodJson("eq1", "job-b2", 2, ""));
  const std::string b2 = control->Get(eq1 + "/job-b2").body;
  const std::string filter_b2 =
      Fetch(b, "POST", "/filter", R"({"Pod":)" + b2 + R"(,"NodeNames":["n1","n2"]})");
  INFO(filter_b2);
  CHECK(Passed(filter_b2).empty());

  // job-b goes at the end of its grace period; b nudges job-2, which binds through b.
  auto nudged = [&] {
    for (auto& r : Requests(api))
      if (r.method == "PATCH" && Contains(r.path, "/eq2/pods/job-2") &&
          Contains(r.body, "scheduling.capacity-extender.io/retry"))
        return true;
    return false;
  };
  REQUIRE(Eventually(nudged, 10s));
  const std::string job2 = control->Get(eq2 + "/job-2").body;
  CHECK(Passed(Fetch(b, "POST", "/filter", R"({"Pod":)" + job2 + R"(,"NodeNames":["n1","n2"]})")) ==
        std::vector<std::string>{"n2"});
  rapidjson::Document pod;
  pod.Parse(job2.c_str());
  const std::string bind = Fetch(b, "POST", "/bind",
                                 R"({"PodName":"job-2","PodNamespace":"eq2","PodUID":")" +
                                     StringAt(pod, {"metadata", "uid"}) + R"(","Node":"n2"})");
  rapidjson::Document bound;
  bound.Parse(bind.c_str());
  INFO(bind);
  REQUIRE(bound.IsObject());
  CHECK(StringAt(bound, {"Error"}).empty());
  CHECK(b.WaitForLog("reclaim completed", 5s));
  CHECK(Eventually(
      [&] { return Contains(control->Get(eq2 + "/job-2").body, "\"nodeName\":\"n2\""); }, 5s));
  // Wait for b's status.used of eq2 (8 cpu with job-2), then stop both before reading the log.
  CHECK(Eventually(
      [&] {
        return Contains(control->Get(eq + "eq2/elasticquotas/eq2").body,
                        "\"used\":{\"cpu\":\"8\"}");
      },
      5s));
  std::this_thread::sleep_for(500ms);
  a.Stop();
  b.Stop();

  const std::vector<Logged> log = Requests(api);
  const std::string agent_a = "capacity-extender/replica-a",
                    agent_b = "capacity-extender/replica-b";
  int writes_a = 0, writes_b = 0, records_a = 0, status_a = 0, status_b = 0;
  for (const auto& r : log) {
    if (!r.write()) continue;
    INFO(r.seq << " " << r.method << " " << r.path << " " << r.user_agent << " " << r.body);
    if (r.user_agent == agent_a) {
      ++writes_a;
      CHECK(r.seq < acquired_seq);  // nothing after the move
      records_a += Contains(r.body, "scheduling.capacity-extender.io/reclaim") ? 1 : 0;
      status_a += Contains(r.path, "/status") ? 1 : 0;
    } else if (r.user_agent == agent_b) {
      ++writes_b;
      CHECK(r.seq > acquired_seq);  // nothing before it
      CHECK_FALSE(Contains(r.path, "/eviction"));
      status_b += Contains(r.path, "/status") ? 1 : 0;
    }
  }
  CHECK(records_a == 1);  // recorded once, before the eviction
  CHECK(status_a >= 1);
  CHECK(status_b >= 1);
  CHECK(writes_b >= 3);  // the nudge, the binding, status.used (and Events)
  const std::vector<Logged> evicted = evictions();
  REQUIRE(evicted.size() == 1);
  CHECK(evicted[0].path == "/api/v1/namespaces/eq1/pods/job-b/eviction");
  CHECK(evicted[0].user_agent == agent_a);
  CHECK(evicted[0].status == 201);
  // The NoteBooks and the other pods were never touched.
  for (const auto& r : log)
    if (r.write() && r.user_agent.rfind("capacity-extender/", 0) == 0)
      for (const char* kept : {"/nb-a", "/nb-b", "/job-a", "/job-1"})
        CHECK_FALSE(Contains(r.path, kept));
}

}  // namespace
}  // namespace two_replicas_test
