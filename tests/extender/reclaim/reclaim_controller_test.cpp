// Tests of the reclaim controller (extender/reclaim/reclaim_controller.h,
// docs/capacity-semantics.md#8-the-reclaim-controller):
// the harness of reclaim_harness.h (a cache with a test clock, fake Evictor and RequeueNudger that
// record their calls, and the ExtenderService's Filter to see what a nomination holds against
// other pods).
#include "extender/reclaim/reclaim_controller.h"

#include <rapidjson/document.h>

#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <catch2/catch.hpp>

#include "extender/explain.h"
#include "tests/extender/reclaim/reclaim_harness.h"

namespace capext {
namespace reclaim_controller_test {
namespace {

using namespace reclaim_testing;  // NOLINT: the harness of this folder

std::string PodJson(const std::string& ns, const std::string& name, const std::string& uid,
                    const std::string& cpu, int priority) {
  return fmt::format(
      R"({{"metadata":{{"name":"{}","namespace":"{}","uid":"{}","creationTimestamp":"2027-01-01T00:00:00Z"}},)"
      R"("spec":{{"containers":[{{"name":"c","image":"nginx","resources":{{"requests":{{"cpu":"{}"}}}}}}],)"
      R"("priority":{},"preemptionPolicy":"PreemptLowerPriority"}},"status":{{"phase":"Pending"}}}})",
      name, ns, uid, cpu, priority);
}

struct FilterAnswer {
  std::vector<std::string> passed;
  std::vector<std::string> failed;
  std::string error;
};

FilterAnswer Filter(Harness& h, const std::string& pod_json,
                    const std::vector<std::string>& nodes) {
  std::string names;
  for (const auto& n : nodes)
    names += (names.empty() ? "\"" : ",\"") + n + "\"";
  std::string body = fmt::format(R"({{"Pod":{},"Nodes":null,"NodeNames":[{}]}})", pod_json, names);
  http::Response response = h.service.Filter(body);
  REQUIRE(response.status == 200);
  rapidjson::Document doc;
  doc.Parse(response.body.c_str());
  REQUIRE(doc.IsObject());
  FilterAnswer answer;
  for (const auto& n : doc["NodeNames"].GetArray())
    answer.passed.emplace_back(n.GetString());
  for (const char* key : {"FailedNodes", "FailedAndUnresolvableNodes"}) {
    for (auto m = doc[key].MemberBegin(); m != doc[key].MemberEnd(); ++m)
      answer.failed.emplace_back(m->name.GetString());
  }
  answer.error = doc["Error"].GetString();
  return answer;
}

bool MetricsContain(Harness& h, const std::string& line) {
  return h.metrics.Render().find(line) != std::string::npos;
}

TEST_CASE("seed-002 event 5: one eviction of eq1/job-b, job-2 nominated on n2, nudged when gone",
          "[reclaim]") {
  Harness h;
  LoadSeed002(h);
  h.evictor.delete_victims = false;  // the victim lingers in its grace period first

  CHECK(h.controller->RunOnce() == 1);
  CHECK(h.evictor.calls == std::vector<std::string>{"eq1/job-b"});
  const Nomination* n = h.OurNomination("u-job-2");
  REQUIRE(n != nullptr);
  CHECK(n->node == "n2");
  CHECK(n->expires_ms == kStartMs + ReclaimControllerOptions{}.nomination_ttl_ms);
  CHECK(h.controller->InFlight() == std::map<std::string, std::string>{{"eq2/job-2", "n2"}});
  CHECK(h.nudger.calls.empty());

  // While the victim is still there: no nudge, and no second reclaim for the pod in flight.
  h.now += 1000;
  CHECK(h.controller->RunOnce() == 0);
  CHECK(h.evictor.calls.size() == 1);
  CHECK(h.nudger.calls.empty());

  // The watch shows the victim gone: the pod is nudged, once.
  h.cache.Write([](ClusterState& s) {
    s.DeletePod("u-job-b");
    return 0;
  });
  h.now += 1000;
  CHECK(h.controller->RunOnce() == 0);
  CHECK(h.nudger.calls == std::vector<std::string>{"eq2/job-2"});
  h.now += 1000;
  CHECK(h.controller->RunOnce() == 0);
  CHECK(h.nudger.calls.size() == 1);
  CHECK(h.evictor.calls.size() == 1);

  // Untouched: the NoteBooks, job-a, job-1.
  for (const char* uid : {"u-job-a", "u-nb-a", "u-nb-b", "u-job-1"})
    CHECK(h.Exists(uid));
  CHECK(MetricsContain(h, "capacity_extender_evictions_total{namespace=\"eq1\"} 1"));
  CHECK(MetricsContain(h, "capacity_extender_reclaims_started_total 1"));
}

TEST_CASE("reclaim: no second reclaim for a pod in flight", "[reclaim]") {
  Harness h;
  LoadSeed002(h);
  CHECK(h.controller->RunOnce() == 1);
  CHECK(h.controller->RunOnce() == 0);
  h.now += 10'000;
  CHECK(h.controller->RunOnce() == 0);
  CHECK(h.evictor.calls == std::vector<std::string>{"eq1/job-b"});
  CHECK(h.OurNomination("u-job-2") != nullptr);
}

TEST_CASE(
    "reclaim: the nomination holds the freed room against a lower-priority pod until its "
    "TTL",
    "[reclaim]") {
  ReclaimControllerOptions options;
  options.nomination_ttl_ms = 120'000;
  Harness h(options);
  LoadSeed002(h);
  REQUIRE(h.controller->RunOnce() == 1);
  REQUIRE(h.OurNomination("u-job-2") != nullptr);

  // n2 has 6 cpu free, 5 of them held for job-2: a 2-cpu pod of priority -1 fits nowhere.
  const std::string low = PodJson("eq2", "low", "u-low", "2", -1);
  FilterAnswer blocked = Filter(h, low, {"n1", "n2"});
  CHECK(blocked.error.empty());
  CHECK(blocked.passed.empty());
  CHECK(blocked.failed == std::vector<std::string>{"n1", "n2"});

  // The nominated pod itself passes on n2 (its own nomination does not count against it).
  const std::string job2 = PodJson("eq2", "job-2", "u-job-2", "5", 0);
  FilterAnswer own = Filter(h, job2, {"n1", "n2"});
  CHECK(own.error.empty());
  CHECK(own.passed == std::vector<std::string>{"n2"});

  // Still held one millisecond before the TTL, and no reclaim is started for `low`
  // (eq1 is back at its min: nothing may be taken from it).
  h.now += options.nomination_ttl_ms - 1;
  CHECK(h.controller->RunOnce() == 0);
  CHECK(h.OurNomination("u-job-2") != nullptr);
  CHECK(Filter(h, low, {"n2"}).passed.empty());
  CHECK(h.evictor.calls.size() == 1);

  // TTL expiry releases the room.
  h.now += 1;
  CHECK(h.controller->RunOnce() == 0);
  CHECK(h.OurNomination("u-job-2") == nullptr);
  CHECK(Filter(h, low, {"n1", "n2"}).passed == std::vector<std::string>{"n2"});
  CHECK(h.controller->InFlight().empty());
  CHECK(MetricsContain(h, "capacity_extender_reclaims_expired_total 1"));
  CHECK(h.evictor.calls.size() == 1);
}

TEST_CASE("reclaim: an eviction refused by a PDB makes reclaim choose another node", "[reclaim]") {
  Harness h;
  LoadTwoReclaims(h, 1);
  SECTION("without a refusal n2 is chosen (a4 started last)") {
    CHECK(h.controller->RunOnce() == 1);
    CHECK(h.evictor.calls == std::vector<std::string>{"eq1/a4"});
    REQUIRE(h.OurNomination("uid-eq2-p1") != nullptr);
    CHECK(h.OurNomination("uid-eq2-p1")->node == "n2");
  }
  SECTION("a4's eviction refused: n1 with victim a3") {
    h.evictor.refuse.insert("eq1/a4");
    CHECK(h.controller->RunOnce() == 1);
    CHECK(h.evictor.calls == std::vector<std::string>{"eq1/a4", "eq1/a3"});
    REQUIRE(h.OurNomination("uid-eq2-p1") != nullptr);
    CHECK(h.OurNomination("uid-eq2-p1")->node == "n1");
    CHECK(h.Exists("uid-eq1-a4"));
    CHECK_FALSE(h.Exists("uid-eq1-a3"));
    CHECK(MetricsContain(h, "capacity_extender_evictions_refused_total{namespace=\"eq1\"} 1"));
  }
  SECTION("every candidate refused: no nomination, nothing evicted") {
    h.evictor.refuse = {"eq1/a3", "eq1/a4"};
    CHECK(h.controller->RunOnce() == 0);
    CHECK(h.OurNomination("uid-eq2-p1") == nullptr);
    CHECK(h.Exists("uid-eq1-a3"));
    CHECK(h.Exists("uid-eq1-a4"));
  }
}

TEST_CASE("reclaim: a refused eviction takes nothing from the eviction rate limit", "[reclaim]") {
  ReclaimControllerOptions options;
  options.max_evictions_per_second = 1;
  Harness h(options);
  LoadTwoReclaims(h, 1);
  h.evictor.refuse.insert("eq1/a4");
  // a4 (n2) is refused; its token comes back, so a3 (n1) is evicted in the same pass.
  CHECK(h.controller->RunOnce() == 1);
  CHECK(h.evictor.calls == std::vector<std::string>{"eq1/a4", "eq1/a3"});
  REQUIRE(h.OurNomination("uid-eq2-p1") != nullptr);
  CHECK(h.OurNomination("uid-eq2-p1")->node == "n1");
}

TEST_CASE("reclaim: a pod whose every candidate was refused backs off before trying again",
          "[reclaim]") {
  ReclaimControllerOptions options;
  options.refusal_backoff_ms = 5'000;
  options.max_refusal_backoff_ms = 8'000;
  Harness h(options);
  LoadTwoReclaims(h, 1);
  h.evictor.refuse = {"eq1/a3", "eq1/a4"};
  CHECK(h.controller->RunOnce() == 0);
  CHECK(h.evictor.calls.size() == 2);
  CHECK(MetricsContain(
      h, "capacity_extender_decisions_total{verb=\"reclaim\",outcome=\"refused\"} 1"));

  SECTION("the backoff doubles up to its max, and a success ends it") {
    h.now += 4'999;
    CHECK(h.controller->RunOnce() == 0);
    CHECK(h.evictor.calls.size() == 2);  // still waiting
    h.now += 1;
    CHECK(h.controller->RunOnce() == 0);
    CHECK(h.evictor.calls.size() == 4);  // tried both again, refused again: now 8 s (max)
    h.now += 7'999;
    CHECK(h.controller->RunOnce() == 0);
    CHECK(h.evictor.calls.size() == 4);
    h.evictor.refuse.clear();
    h.now += 1;
    CHECK(h.controller->RunOnce() == 1);
    CHECK(h.evictor.calls.size() == 5);
    CHECK(h.OurNomination("uid-eq2-p1") != nullptr);
  }
  SECTION("a longer Retry-After from the API server wins") {
    h.evictor.retry_after_seconds = 30;
    h.now += 5'000;
    CHECK(h.controller->RunOnce() == 0);
    CHECK(h.evictor.calls.size() == 4);
    h.now += 29'999;
    CHECK(h.controller->RunOnce() == 0);
    CHECK(h.evictor.calls.size() == 4);
    h.now += 1;
    CHECK(h.controller->RunOnce() == 0);
    CHECK(h.evictor.calls.size() == 6);
  }
}

TEST_CASE("reclaim: dry-run evicts nothing and records the plan", "[reclaim]") {
  ReclaimControllerOptions options;
  options.mode = ReclaimMode::kDryRun;
  Harness h(options);
  LoadSeed002(h);
  CHECK(h.controller->RunOnce() == 0);
  h.now += 1000;
  CHECK(h.controller->RunOnce() == 0);
  CHECK(h.evictor.calls.empty());
  CHECK(h.OurNomination("u-job-2") == nullptr);
  CHECK(h.Exists("u-job-b"));
  // Logged (and counted) once per distinct plan.
  CHECK(MetricsContain(
      h, "capacity_extender_decisions_total{verb=\"reclaim\",outcome=\"dry-run\"} 1"));
}

TEST_CASE("reclaim: the eviction rate limit lets one reclaim start per second", "[reclaim]") {
  SECTION("control: with room in the budget both pending pods start a reclaim in one pass") {
    Harness h;
    LoadTwoReclaims(h, 2);
    CHECK(h.controller->RunOnce() == 2);
    CHECK(h.evictor.calls.size() == 2);
  }
  SECTION("max 1 eviction per second") {
    ReclaimControllerOptions options;
    options.max_evictions_per_second = 1;
    Harness h(options);
    LoadTwoReclaims(h, 2);
    CHECK(h.controller->RunOnce() == 1);
    CHECK(h.evictor.calls.size() == 1);
    CHECK(MetricsContain(
        h, "capacity_extender_decisions_total{verb=\"reclaim\",outcome=\"rate-limited\"} 1"));
    h.now += 999;
    CHECK(h.controller->RunOnce() == 0);
    CHECK(h.evictor.calls.size() == 1);
    h.now += 1;
    CHECK(h.controller->RunOnce() == 1);
    CHECK(h.evictor.calls.size() == 2);
    CHECK(h.OurNomination("uid-eq2-p1") != nullptr);
    CHECK(h.OurNomination("uid-eq2-p2") != nullptr);
  }
}

TEST_CASE("reclaim: a pod with preemptionPolicy Never starts no reclaim", "[reclaim]") {
  Harness h;
  LoadSeed002(h, /*job2_never_preempts=*/true);
  CHECK(h.controller->RunOnce() == 0);
  h.now += 5000;
  CHECK(h.controller->RunOnce() == 0);
  CHECK(h.evictor.calls.empty());
  CHECK(h.OurNomination("u-job-2") == nullptr);
}

TEST_CASE("reclaim: pods of a quota within its min are never evicted for a borrower", "[reclaim]") {
  Harness h;
  h.cache.Write([&](ClusterState& s) {
    s.UpsertNode(MakeNode("n1", 8000, 32 * kGi));
    s.UpsertQuota(MakeQuota("eq1", CpuList(8000), CpuList(8000)));
    s.UpsertQuota(MakeQuota("eq2", CpuList(2000), CpuList(8000)));
    s.UpsertPod(MakePod("eq1", "e1").Cpu(4000).BoundTo("n1").Started(kStartMs - 2000));
    s.UpsertPod(MakePod("eq1", "e2").Cpu(4000).BoundTo("n1").Started(kStartMs - 1000));
    return 0;
  });
  SECTION("a borrower of higher priority") {
    // eq2 would use 4 > min 2: it may only preempt its own lower-priority pods (there are none).
    h.Add(MakePod("eq2", "hungry").Cpu(4000).Priority(1000).Created(kStartMs));
  }
  SECTION("a pod within its own min, but nobody borrows") {
    h.Add(MakePod("eq2", "entitled").Cpu(2000).Priority(1000).Created(kStartMs));
  }
  CHECK(h.controller->RunOnce() == 0);
  CHECK(h.evictor.calls.empty());
  CHECK(h.Exists("uid-eq1-e1"));
  CHECK(h.Exists("uid-eq1-e2"));
}

TEST_CASE("reclaim: seed-002 after the reclaim, eq1 is at its min and gives no more victims",
          "[reclaim]") {
  Harness h;
  LoadSeed002(h);
  REQUIRE(h.controller->RunOnce() == 1);
  // job-3 (eq2, 2 cpu) is entitled (3 + 5 nominated + 2 <= min 12) but eq1 is back at min 6.
  h.Add(MakePod("eq2", "job-3").Cpu(2000).Created(kStartMs));
  h.now += 2000;
  CHECK(h.controller->RunOnce() == 0);
  CHECK(h.evictor.calls == std::vector<std::string>{"eq1/job-b"});
  for (const char* uid : {"u-job-a", "u-nb-a", "u-nb-b", "u-job-1"})
    CHECK(h.Exists(uid));
}

// A binder whose bindings stay in flight until the test completes them (live mode's POST that has
// not been answered yet).
class HeldBinder final : public PodBinder {
 public:
  void Bind(const BindRequest& /*request*/, BindDone done) override { pending = std::move(done); }
  BindDone pending;
};

// Issue 18, point 2 (docs/capacity-semantics.md#6-accounting-used-reservations-nominations and
// docs/capacity-semantics.md#8-the-reclaim-controller): while /bind is placing eq1/job-b2 on n2,
// the reclaim for eq2/job-2 takes job-b and job-b2, not the NoteBook nb-b, and evicts the reserved
// pod like any other. Its bind then fails (the pod is gone) or had succeeded; either way the
// reservation ends with the pod and nothing is left held.
TEST_CASE("reclaim: a pod whose bind is in flight is evicted like a bound one; nothing stays held",
          "[reclaim][issue18]") {
  Harness h;
  LoadSeed002(h);
  h.Add(MakePod("eq1", "job-b2").Uid("u-job-b2").Cpu(2000).Created(kStartMs - 500'000));
  HeldBinder held;
  ExtenderService binding(&h.cache, &h.metrics, NodeScoring::kLeastAllocated,
                          PriorityThenStartTimeOrder(), &held, ServiceOptions{});
  std::string body = R"({"PodName":"job-b2","PodNamespace":"eq1","PodUID":"u-job-b2","Node":"n2"})";
  std::string answer;
  binding.Bind(body, [&](http::Response r) { answer = r.body; });
  REQUIRE(held.pending);
  REQUIRE(h.cache.Read([](const ClusterState& s) { return s.Used("eq1").Get("cpu"); }) == 10000);

  // explain (and POST /explain) shows the plan with the reserved victim, marked as such.
  const std::string explained = h.cache.Read([](const ClusterState& s) {
    return ExplainPodText(s, *s.FindPod("u-job-2"), PriorityThenStartTimeOrder());
  });
  CHECK_THAT(explained, Catch::Contains("evicting eq1/job-b (priority 0), eq1/job-b2 (priority 0, "
                                        "bind in flight) on node n2"));

  CHECK(h.controller->RunOnce() == 1);
  CHECK(h.evictor.calls == std::vector<std::string>{"eq1/job-b2", "eq1/job-b"});
  const Nomination* n = h.OurNomination("u-job-2");
  REQUIRE(n != nullptr);
  CHECK(n->node == "n2");
  for (const char* uid : {"u-job-a", "u-nb-a", "u-nb-b", "u-job-1"})
    CHECK(h.Exists(uid));
  // The eviction deleted the pod: its reservation ended with it.
  auto held_room = [&] {
    return h.cache.Read([](const ClusterState& s) {
      return std::make_pair(s.reservations().size(), s.Used("eq1").Get("cpu"));
    });
  };
  CHECK(held_room() == std::make_pair(std::size_t{0}, int64_t{6000}));

  SECTION("the binding then fails: the error goes back, nothing is held") {
    held.pending(BindOutcome{false, 404, R"(pods "job-b2" not found)", false});
    CHECK_THAT(answer, Catch::Contains("binding failed"));
  }
  SECTION("the binding had succeeded: nothing is held either") {
    held.pending(BindOutcome{true, 201, "", false});
    CHECK_THAT(answer, Catch::Contains(R"("Error":"")"));
  }
  CHECK(held_room() == std::make_pair(std::size_t{0}, int64_t{6000}));
  h.now += 1000;
  CHECK(h.controller->RunOnce() == 0);
  CHECK(h.evictor.calls.size() == 2);
}

// docs/capacity-semantics.md#8-the-reclaim-controller: the pod's /bind reservation replaces our
// nomination; when it ends without a binding (an unanswered Binding past reservationTTL), the
// nomination comes back for the rest of its TTL, so the room freed stays the pod's (the fault
// suite's connection-reset run: eq1/job-b2 was bound into it, then evicted again).
TEST_CASE(
    "reclaim: a reservation that ends without a binding gives the room back to the "
    "nomination until its TTL",
    "[reclaim]") {
  ReclaimControllerOptions options;
  options.nomination_ttl_ms = 10'000;
  Harness h(options);
  LoadSeed002(h);
  const int64_t started = h.now;
  REQUIRE(h.controller->RunOnce() == 1);
  REQUIRE(h.OurNomination("u-job-2") != nullptr);
  Change(h, [&](ClusterState& s) { s.Reserve("u-job-2", "n2", h.now, h.now + 3000); });
  CHECK(h.OurNomination("u-job-2") == nullptr);  // the reservation holds the room now
  Pass(h);
  CHECK(h.controller->InFlight() == std::map<std::string, std::string>{{"eq2/job-2", "n2"}});
  CHECK(h.OurNomination("u-job-2") == nullptr);

  Change(h, [](ClusterState& s) { s.ReleaseReservation("u-job-2"); });  // unanswered, expired
  Pass(h);
  const Nomination* back = h.OurNomination("u-job-2");
  REQUIRE(back != nullptr);
  CHECK(back->node == "n2");
  CHECK(h.controller->InFlight() == std::map<std::string, std::string>{{"eq2/job-2", "n2"}});
  CHECK(h.evictor.calls.size() == 1);  // nothing evicted again

  // At the nomination's own expiry the reclaim ends, as it would have without the bind.
  h.now = started + options.nomination_ttl_ms - 1000;
  Pass(h);  // now = the expiry
  CHECK(h.controller->InFlight().empty());
}

}  // namespace
}  // namespace reclaim_controller_test
}  // namespace capext

namespace capext {
namespace reclaim_controller_test {
namespace {

using namespace reclaim_testing;  // NOLINT: the harness of this folder

// docs/workloads-live.md#the-admission-loop, why a pod waits: a gated pod is the admission loop's;
// the reclaim controller neither plans nor lists it until its gate is lifted.
TEST_CASE("reclaim: a gated pod is not planned until its gate is lifted", "[reclaim]") {
  Harness h;
  LoadSeed002(h);
  Pod job2 = MakePod("eq2", "job-2").Uid("u-job-2").Cpu(5000).Created(kStartMs - 480'000);
  job2.quota_gated = true;
  h.Add(job2);
  CHECK(h.controller->RunOnce() == 0);
  CHECK(h.evictor.calls.empty());
  CHECK_FALSE(h.Verdict("u-job-2").has_value());
  job2.quota_gated = false;  // the admission loop lifted it
  h.Add(job2);
  CHECK(h.controller->RunOnce() == 1);
  CHECK(h.evictor.calls == std::vector<std::string>{"eq1/job-b"});
}

}  // namespace
}  // namespace reclaim_controller_test
}  // namespace capext
