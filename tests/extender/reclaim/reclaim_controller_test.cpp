// Tests of the reclaim controller (extender/reclaim_controller.h, capacity-semantics 4): one
// in-process cache with a test clock, fake Evictor and RequeueNudger that record their calls, and
// the ExtenderService's Filter to see what a nomination holds against other pods.
#include "extender/reclaim/reclaim_controller.h"

#include <rapidjson/document.h>

#include <atomic>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <catch2/catch.hpp>

#include "extender/embedded/embedded_binder.h"
#include "extender/verbs/extender_service.h"
#include "tests/support/builders.h"

namespace capext {
namespace {

using testing::CpuList;
using testing::kGi;
using testing::MakeNode;
using testing::MakePod;
using testing::MakePriorityClass;
using testing::MakeQuota;

constexpr int64_t kStartMs = 1'800'000'000'000;

// Records every eviction; deletes the victim from the cache unless told to keep it (a pod in its
// grace period) or to refuse it (the API server answered 429 for a PDB).
class FakeEvictor final : public Evictor {
 public:
  explicit FakeEvictor(SchedulerCache* cache) : cache_(cache) {}
  EvictOutcome Evict(const Pod& victim, const std::string& /*reason*/) override {
    calls.push_back(victim.Key());
    if (refuse.count(victim.Key()) != 0) {
      return {false, true, "Cannot evict pod: PDB", retry_after_seconds};
    }
    if (delete_victims) {
      cache_->Write([&](ClusterState& state) {
        state.DeletePod(victim.uid);
        return 0;
      });
    }
    return {true, false, ""};
  }
  std::vector<std::string> calls;
  std::set<std::string> refuse;  // "ns/name" answered with refused_by_pdb
  int retry_after_seconds = 0;   // the Retry-After of those refusals
  bool delete_victims = true;

 private:
  SchedulerCache* cache_;
};

class FakeNudger final : public RequeueNudger {
 public:
  bool Nudge(const Pod& pod) override {
    calls.push_back(pod.Key());
    return true;
  }
  std::vector<std::string> calls;
};

// A cache, the fakes, a service (for Filter) and a controller over them.
struct Harness {
  explicit Harness(ReclaimControllerOptions options = {})
      : cache(QuotaSemantics::kCapacityExtender, {}, [this] { return now.load(); }),
        evictor(&cache),
        binder(&cache),
        service(&cache, &metrics, NodeScoring::kLeastAllocated, MoreImportantFn(MoreImportantPod),
                &binder, ServiceOptions{}) {
    cache.set_ready(true);
    controller = std::make_unique<ReclaimController>(&cache, &metrics, service.more_important(),
                                                     &evictor, &nudger, options);
  }
  void Add(const Pod& pod) {
    cache.Write([&](ClusterState& s) {
      s.UpsertPod(pod);
      return 0;
    });
  }
  const Nomination* OurNomination(const std::string& uid) {
    nomination_copy = cache.Read([&](const ClusterState& s) {
      const Nomination* n = s.FindOurNomination(uid);
      return n ? std::optional<Nomination>(*n) : std::nullopt;
    });
    return nomination_copy ? &*nomination_copy : nullptr;
  }
  bool Exists(const std::string& uid) {
    return cache.Read([&](const ClusterState& s) { return s.FindPod(uid) != nullptr; });
  }

  std::atomic<int64_t> now{kStartMs};
  Metrics metrics;
  SchedulerCache cache;
  FakeEvictor evictor;
  FakeNudger nudger;
  EmbeddedBinder binder;
  ExtenderService service;
  std::unique_ptr<ReclaimController> controller;
  std::optional<Nomination> nomination_copy;
};

// seed-002-borrow-and-reclaim after events 0-4, and job-2 (event 5) pending in eq2.
void LoadSeed002(Harness& h, bool job2_never_preempts = false) {
  h.cache.Write([&](ClusterState& s) {
    s.UpsertNode(MakeNode("n1", 8000, 32 * kGi));
    s.UpsertNode(MakeNode("n2", 8000, 32 * kGi));
    Node master = MakeNode("master", 8000, 32 * kGi);
    master.labels.clear();
    master.taints.push_back({"node-role.kubernetes.io/control-plane", "", "NoSchedule"});
    s.UpsertNode(master);
    s.UpsertPriorityClass(MakePriorityClass("priority-class-for-notebook", 1'000'000, false,
                                            PreemptionPolicy::kNever));
    s.UpsertQuota(MakeQuota("eq1", CpuList(6000), CpuList(10000)));
    s.UpsertQuota(MakeQuota("eq2", CpuList(12000), CpuList(14000)));
    const int64_t t0 = kStartMs - 600'000;
    auto running = [&](const char* ns, const char* name, int64_t cpu, const char* node,
                       int64_t since, const char* priority_class = "") {
      s.UpsertPod(MakePod(ns, name)
                      .Uid(std::string("u-") + name)
                      .Cpu(cpu)
                      .PriorityClassName(priority_class)
                      .BoundTo(node)
                      .Created(t0 + since)
                      .Started(t0 + since));
    };
    running("eq1", "job-a", 2000, "n1", 0);
    running("eq1", "job-b", 2000, "n2", 1000);
    running("eq2", "job-1", 3000, "n1", 2000);
    running("eq1", "nb-a", 2000, "n1", 60'000, "priority-class-for-notebook");
    running("eq1", "nb-b", 2000, "n2", 61'000, "priority-class-for-notebook");
    auto job2 = MakePod("eq2", "job-2").Uid("u-job-2").Cpu(5000).Created(t0 + 120'000);
    if (job2_never_preempts) job2.PreemptionNever();
    s.UpsertPod(job2);
    return 0;
  });
}

// Two 8-cpu nodes filled by the borrower eq1 {min 4, max 16} with four 4-cpu pods (a1, a3 on n1;
// a2, a4 on n2); eq2 {min 12, max 16} has `pending` 4-cpu pods waiting, each entitled to its room.
// For p1 the candidates are n1 (victim a3) and n2 (victim a4); 1.3 picks n2 (latest start).
void LoadTwoReclaims(Harness& h, int pending) {
  h.cache.Write([&](ClusterState& s) {
    s.UpsertNode(MakeNode("n1", 8000, 32 * kGi));
    s.UpsertNode(MakeNode("n2", 8000, 32 * kGi));
    s.UpsertQuota(MakeQuota("eq1", CpuList(4000), CpuList(16000)));
    s.UpsertQuota(MakeQuota("eq2", CpuList(12000), CpuList(16000)));
    const int64_t t0 = kStartMs - 600'000;
    const char* nodes[] = {"n1", "n2", "n1", "n2"};
    for (int i = 0; i < 4; ++i) {
      const int64_t start = t0 + 1000 * (i + 1);
      s.UpsertPod(MakePod("eq1", fmt::format("a{}", i + 1))
                      .Cpu(4000)
                      .BoundTo(nodes[i])
                      .Created(start)
                      .Started(start));
    }
    for (int i = 0; i < pending; ++i) {
      s.UpsertPod(MakePod("eq2", fmt::format("p{}", i + 1)).Cpu(4000).Created(t0 + 10'000 + i));
    }
    return 0;
  });
}

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

}  // namespace
}  // namespace capext
