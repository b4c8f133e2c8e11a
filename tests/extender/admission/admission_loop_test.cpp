// Gate mode's admission loop (docs/workloads-live.md#the-admission-loop): a unit is admitted
// whole or not at all; a held pod whose gate removal is in flight is not admitted again; a
// failed patch releases that pod's hold; a follower plans and publishes but writes nothing; a
// timed-out gang is evicted once; gated pods' verdicts carry /filter's words with the numbers.
#include "extender/admission/admission_loop.h"

#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "extender/leadership/leadership.h"
#include "tests/extender/reclaim/reclaim_harness.h"
#include "tests/support/switchable_leadership.h"
#include "tests/support/workload_pods.h"

namespace capext {
namespace admission_loop_test {
namespace {

using reclaim_testing::FakeEvictor;
using reclaim_testing::kStartMs;
using reclaim_testing::RecordingEventSink;
using testing::AdmittedAt;
using testing::CpuList;
using testing::Gated;
using testing::MakeNode;
using testing::MakePod;
using testing::MakeQuota;
using testing::Member;
using testing::PodGroupOf;
using testing::SwitchableLeadership;

// Records each gate removal; fails the pods named in `fail` (by name) once each. A round sends
// its patches several at once, in no set order: read `calls` between rounds, through Sorted.
class RecordingOpener final : public GateOpener {
 public:
  GateOpenOutcome Open(const Pod& pod, int64_t /*admitted_ms*/) override {
    std::lock_guard<std::mutex> lock(mutex_);
    calls.push_back(pod.name);
    if (fail.erase(pod.name) != 0) return {false, "HTTP 422 Invalid: test failed"};
    return {true, ""};
  }
  std::vector<std::string> calls;
  std::set<std::string> fail;

 private:
  std::mutex mutex_;
};

std::vector<std::string> Sorted(std::vector<std::string> names) {
  std::sort(names.begin(), names.end());
  return names;
}

// Lets each gate removal return only once `width` removals are under way together (or after
// 1 s), and keeps the most that were ever under way at once.
class ConcurrencyOpener final : public GateOpener {
 public:
  explicit ConcurrencyOpener(int width) : width_(width) {}
  GateOpenOutcome Open(const Pod& /*pod*/, int64_t /*admitted_ms*/) override {
    std::unique_lock<std::mutex> lock(mutex_);
    ++inside_;
    most_ = std::max(most_, inside_);
    changed_.notify_all();
    changed_.wait_for(lock, std::chrono::seconds(1), [&] { return inside_ >= width_ || left_; });
    left_ = true;  // the first to leave lets the rest of its batch go too
    if (--inside_ == 0) left_ = false;
    return {true, ""};
  }
  int most() {
    std::lock_guard<std::mutex> lock(mutex_);
    return most_;
  }

 private:
  const int width_;
  std::mutex mutex_;
  std::condition_variable changed_;
  int inside_ = 0;
  int most_ = 0;
  bool left_ = false;
};

struct LoopHarness {
  explicit LoopHarness(bool reclaim = false, double evictions_per_second = 100)
      : cache(QuotaSemantics::kCapacityExtender, {}, [this] { return now.load(); }),
        evictor(&cache),
        evictions(&evictor, &metrics, evictions_per_second, 1000) {
    cache.set_ready(true);
    evictions.QueueVictimEvents("capacity-extender");
    AdmissionLoopOptions options;
    options.plan.default_group_timeout_ms = 30'000;
    if (reclaim) {
      options.reclaim.victim_order = &PriorityThenStartTimeOrder();
      options.reclaim.nomination_ttl_ms = 20'000;
    }
    loop = std::make_unique<AdmissionLoop>(&cache, &metrics, &opener, &evictor, options);
    loop->AttachEvents(&sink);
    loop->ReclaimThrough(&evictions);
  }
  void Write(const std::function<void(ClusterState&)>& f) {
    cache.Write([&](ClusterState& s) {
      f(s);
      return 0;
    });
  }
  // Two 4-cpu nodes, eq1 with room for 6 one-cpu pods, gangs a (older) and b of 4 pods each.
  void TwoGangs() {
    Write([](ClusterState& s) {
      s.UpsertNode(MakeNode("n1", 4000));
      s.UpsertNode(MakeNode("n2", 4000));
      s.UpsertQuota(MakeQuota("eq1", CpuList(6000), CpuList(6000)));
      for (const char* g : {"a", "b"}) {
        s.UpsertPodGroup(PodGroupOf("eq1", g, 4));
        for (int i = 0; i < 4; ++i) {
          const std::string name = std::string(g) + "-" + std::to_string(i);
          s.UpsertPod(Gated(Member(MakePod("eq1", name)
                                       .Uid("u-" + name)
                                       .Cpu(1000)
                                       .Created(kStartMs - (g[0] == 'a' ? 20'000 : 10'000) + i),
                                   g)));
        }
      }
    });
  }
  int64_t Used() {
    return cache.Read([](const ClusterState& s) { return s.Used("eq1").Get("cpu"); });
  }
  bool Held(const std::string& name) {
    return cache.Read([&](const ClusterState& s) { return s.FindHold("u-" + name) != nullptr; });
  }

  std::atomic<int64_t> now{kStartMs};
  Metrics metrics;
  SchedulerCache cache;
  FakeEvictor evictor;
  ReclaimEvictions evictions;  // the reclaim controller's, in serve
  RecordingOpener opener;
  RecordingEventSink sink;
  std::unique_ptr<AdmissionLoop> loop;
};

TEST_CASE("admission loop: a gang is admitted whole, the other waits with its numbers",
          "[admission_loop]") {
  LoopHarness h;
  h.TwoGangs();
  CHECK(h.loop->RunOnce() == 4);
  CHECK(Sorted(h.opener.calls) == std::vector<std::string>{"a-0", "a-1", "a-2", "a-3"});
  CHECK(h.Used() == 4000);  // held before the patches, still gated in the cache
  for (int i = 0; i < 4; ++i) {
    CHECK(h.Held("a-" + std::to_string(i)));
    CHECK_FALSE(h.Held("b-" + std::to_string(i)));
  }
  // b's verdict on /pending: Gated, the quota rule in /filter's words with the numbers.
  const std::vector<PendingPodRecord> gated = h.loop->Gated();
  REQUIRE(gated.size() == 4);
  for (const auto& r : gated) {
    CHECK(r.name.rfind("b-", 0) == 0);
    CHECK(r.quota == "eq1/eq1");
    CHECK(r.verdict.code == VerdictCode::kGated);
    CHECK(r.gate == "QuotaExceeded");
    CHECK(r.verdict.message ==
          "gang eq1/b: 4 pods need cpu 4: ElasticQuota eq1/eq1 would exceed max: cpu used 4 + "
          "request 4 > max 6");
  }
  // One Warning Event per gated pod, not repeated while the reason stays.
  CHECK(h.sink.creates.size() == 4);
  CHECK(h.sink.creates.front().type == "Warning");
  CHECK(h.sink.creates.front().reason == "Gated");
  // a's gate removals are in flight (the watch has not shown them): the next round admits
  // nothing, neither a again nor 2 of b's pods into the room left.
  CHECK(h.loop->RunOnce() == 0);
  CHECK(h.opener.calls.size() == 4);
  CHECK(h.sink.creates.size() == 4);
  // The patches land (ungated, admitted-at): derived holds take over; still never 3 + 3.
  h.Write([](ClusterState& s) {
    for (int i = 0; i < 4; ++i) {
      const std::string name = "a-" + std::to_string(i);
      s.UpsertPod(AdmittedAt(
          Member(MakePod("eq1", name).Uid("u-" + name).Cpu(1000).Created(kStartMs - 20'000 + i),
                 "a"),
          kStartMs));
    }
  });
  CHECK(h.loop->RunOnce() == 0);
  CHECK(h.Used() == 4000);
  CHECK(h.loop->Gated().size() == 4);
}

// The first lists under way: the ElasticQuota list has not arrived.
class QuotasNotListed final : public CacheSyncSource {
 public:
  CacheSyncReport Report(std::chrono::steady_clock::time_point now) const override {
    CacheSyncReport report;
    report.now = now;
    report.max_out_of_sync = std::chrono::seconds(5);
    report.resources.push_back({"elasticquotas", false, false, now, "first list under way"});
    return report;
  }
};

TEST_CASE("admission loop: a round's gate removals are sent four at once, every pod lifted once",
          "[admission_loop]") {
  LoopHarness h;
  h.Write([](ClusterState& s) {
    s.UpsertNode(MakeNode("n1", 16000));
    s.UpsertQuota(MakeQuota("eq1", CpuList(16000), CpuList(16000)));
    for (int i = 0; i < 10; ++i) {
      const std::string name = "p-" + std::to_string(i);
      s.UpsertPod(Gated(MakePod("eq1", name).Uid("u-" + name).Cpu(1000).Created(kStartMs + i)));
    }
  });
  ConcurrencyOpener opener(4);
  AdmissionLoopOptions options;
  options.max_lifts_in_flight = 4;
  AdmissionLoop loop(&h.cache, &h.metrics, &opener, &h.evictor, options);
  CHECK(loop.RunOnce() == 10);
  CHECK(opener.most() == 4);  // one after the other, it would be 1
  CHECK(h.Used() == 10000);
  for (int i = 0; i < 10; ++i)
    CHECK(h.Held("p-" + std::to_string(i)));
  CHECK(h.metrics.Render().find("capacity_extender_admissions_total 10") != std::string::npos);
}

TEST_CASE("admission loop: nothing is admitted while the cache is out of sync",
          "[admission_loop]") {
  LoopHarness h;
  h.TwoGangs();
  QuotasNotListed source;
  h.cache.set_sync_source(&source);
  CHECK(h.loop->RunOnce() == 0);
  CHECK(h.opener.calls.empty());
  CHECK(h.Used() == 0);
  CHECK(h.sink.creates.empty());
  h.cache.set_sync_source(nullptr);  // in sync: the next round admits, as without the wait
  CHECK(h.loop->RunOnce() == 4);
  CHECK(Sorted(h.opener.calls) == std::vector<std::string>{"a-0", "a-1", "a-2", "a-3"});
}

TEST_CASE("admission loop: a failed patch releases that pod's hold; it is admitted again later",
          "[admission_loop]") {
  LoopHarness h;
  h.TwoGangs();
  h.opener.fail = {"a-2"};
  CHECK(h.loop->RunOnce() == 3);
  CHECK_FALSE(h.Held("a-2"));
  CHECK(h.Held("a-0"));
  CHECK(h.Used() == 3000);
  // a needs one more: a-2 alone goes next round (1 cpu fits), never a pod of b.
  CHECK(h.loop->RunOnce() == 1);
  CHECK(h.opener.calls.back() == "a-2");
  CHECK(h.Held("a-2"));
  CHECK(h.Used() == 4000);
  CHECK(h.metrics.Render().find("capacity_extender_admission_failures_total 1") !=
        std::string::npos);
}

TEST_CASE("admission loop: a follower plans and publishes verdicts but writes nothing",
          "[admission_loop]") {
  LoopHarness h;
  SwitchableLeadership leadership(false);
  h.loop->FollowLeadership(&leadership);
  h.TwoGangs();
  CHECK(h.loop->RunOnce() == 0);
  CHECK(h.opener.calls.empty());
  CHECK(h.Used() == 0);
  CHECK(h.sink.creates.empty());
  // Its /pending still says why each pod waits: b on the quota, a on the replica that acts.
  const std::vector<PendingPodRecord> gated = h.loop->Gated();
  REQUIRE(gated.size() == 8);
  CHECK(gated.front().name == "a-0");
  CHECK(gated.front().gate == "NotActing");
  CHECK(gated.front().verdict.message ==
        "gang eq1/a: admitted by the plan: the replica that acts lifts the gate (this replica "
        "does not act)");
  CHECK(gated.back().gate == "QuotaExceeded");
  leadership.Set(true);
  CHECK(h.loop->RunOnce() == 4);
  CHECK(h.Used() == 4000);
  CHECK(h.sink.creates.size() == 4);
}

TEST_CASE("admission loop: a gang past its timeout has its members evicted once",
          "[admission_loop]") {
  LoopHarness h;
  h.evictor.delete_victims = false;  // terminating for a while, as with a grace period
  h.Write([](ClusterState& s) {
    s.UpsertNode(MakeNode("n1", 4000));
    s.UpsertQuota(MakeQuota("eq1", CpuList(6000), CpuList(6000)));
    s.UpsertPodGroup(PodGroupOf("eq1", "t", 4, /*timeout_ms=*/10'000));
    const int64_t admitted = kStartMs - 11'000;
    for (int i = 0; i < 4; ++i) {
      const std::string name = "t-" + std::to_string(i);
      Pod pod = AdmittedAt(
          Member(MakePod("eq1", name).Uid("u-" + name).Cpu(1000).Created(admitted - 100 + i), "t"),
          admitted);
      if (i < 2) {
        pod.node_name = "n1";
        pod.phase = PodPhase::kRunning;
      }
      if (i == 3) pod.has_controller = false;  // reported, left alone
      s.UpsertPod(pod);
    }
  });
  h.loop->RunOnce();
  CHECK(h.evictor.calls == std::vector<std::string>{"eq1/t-0", "eq1/t-1", "eq1/t-2"});
  h.now += 1000;
  h.loop->RunOnce();
  h.loop->RunOnce();
  CHECK(h.evictor.calls.size() == 3);
  CHECK(h.metrics.Render().find("capacity_extender_gang_timeouts_total 1") != std::string::npos);
}

TEST_CASE("admission loop: a follower evicts no timed-out gang", "[admission_loop]") {
  LoopHarness h;
  SwitchableLeadership leadership(false);
  h.loop->FollowLeadership(&leadership);
  h.Write([](ClusterState& s) {
    s.UpsertNode(MakeNode("n1", 4000));
    s.UpsertQuota(MakeQuota("eq1", CpuList(6000), CpuList(6000)));
    s.UpsertPodGroup(PodGroupOf("eq1", "t", 2, 10'000));
    for (int i = 0; i < 2; ++i) {
      const std::string name = "t-" + std::to_string(i);
      s.UpsertPod(AdmittedAt(Member(MakePod("eq1", name).Uid("u-" + name).Cpu(1000), "t"),
                             kStartMs - 20'000));
    }
  });
  h.loop->RunOnce();
  CHECK(h.evictor.calls.empty());
  CHECK(h.Used() == 2000);
}

// docs/reclaim-plan.md#gate-mode-the-admission-loop-plans-for-a-gated-gang: team-a {min 12,
// max 16}, team-b {min `b_min`, max 16}; n1..n4 of 4 cpu, each full with a team-b borrower
// b1..b4 (started 1..4 s); gang team-a/train of four gated 3-cpu pods.
void GatedGangOnFullNodes(LoopHarness* h, int64_t a_min = 12000) {
  h->Write([&](ClusterState& s) {
    s.UpsertQuota(MakeQuota("team-a", CpuList(a_min), CpuList(16000)));
    s.UpsertQuota(MakeQuota("team-b", CpuList(0), CpuList(16000)));
    for (int i = 1; i <= 4; ++i) {
      const std::string n = "n" + std::to_string(i), b = "b" + std::to_string(i);
      s.UpsertNode(MakeNode(n, 4000));
      s.UpsertPod(MakePod("team-b", b).Uid("u-" + b).Cpu(4000).BoundTo(n).Started(i * 1000));
    }
    s.UpsertPodGroup(PodGroupOf("team-a", "train", 4));
    for (int i = 0; i < 4; ++i) {
      const std::string w = "w-" + std::to_string(i);
      s.UpsertPod(Gated(Member(
          MakePod("team-a", w).Uid("u-" + w).Cpu(3000).Created(kStartMs - 10'000 + i), "train")));
    }
  });
}

TEST_CASE("admission loop: a gated gang within its min gets a plan: held, evicted, then admitted",
          "[admission_loop]") {
  LoopHarness h(/*reclaim=*/true);
  h.evictor.delete_victims = false;  // the victims leave later, as the watch shows them gone
  GatedGangOnFullNodes(&h);
  CHECK(h.loop->RunOnce() == 0);
  // The plan's victims, least important first; the room held before the first eviction.
  CHECK(h.evictor.calls ==
        std::vector<std::string>{"team-b/b4", "team-b/b3", "team-b/b2", "team-b/b1"});
  h.cache.Read([](const ClusterState& s) {
    for (int i = 0; i < 4; ++i) {
      const Nomination* n = s.FindOurNomination("u-w-" + std::to_string(i));
      REQUIRE(n != nullptr);
      CHECK(n->node == "n" + std::to_string(i + 1));
      CHECK(n->expires_ms == kStartMs + 20'000);
    }
    return 0;
  });
  const std::vector<PendingPodRecord> gated = h.loop->Gated();
  REQUIRE(gated.size() == 4);
  for (const auto& r : gated) {
    CHECK(r.gate == "ReclaimInFlight");
    CHECK(r.verdict.message.find("team-a/train: reclaim in flight (plan for gang team-a/train: "
                                 "team-a/w-0 -> n1, team-a/w-1 -> n2") != std::string::npos);
  }
  // The plan's fields on /pending, and an Event on each victim naming the gang and the plan.
  REQUIRE(gated.front().verdict.plan);
  CHECK(gated.front().verdict.plan->outcome == "found");
  CHECK(gated.front().verdict.plan->preemptor == "gang team-a/train");
  CHECK(gated.front().verdict.plan->members.size() == 4);
  CHECK(gated.front().verdict.plan->units.size() == 4);
  CHECK(gated.front().verdict.plan->hold_expires_ms == kStartMs + 20'000);
  // The victims' Events wait for the reclaim controller's events thread; none is written by the
  // admission loop itself.
  std::vector<std::string> victims;
  for (const auto& e : h.sink.creates)
    CHECK(e.reason != "Reclaimed");
  for (const auto& e : h.evictions.TakeVictimEvents()) {
    CHECK(e.reason == "Reclaimed");
    victims.push_back(e.ns + "/" + e.pod_name);
    CHECK(e.note.find("evicted by quota reclaim for gang team-a/train: plan for gang "
                      "team-a/train: team-a/w-0 -> n1") != std::string::npos);
  }
  CHECK(victims == std::vector<std::string>{"team-b/b4", "team-b/b3", "team-b/b2", "team-b/b1"});
  for (const auto& e : h.sink.creates) {
    if (e.reason == "Gated") CHECK(e.type == "Normal");
  }
  // In flight: not planned again while the victims leave.
  CHECK(h.loop->RunOnce() == 0);
  CHECK(h.evictor.calls.size() == 4);
  // The victims are gone; team-b's controller re-creates one, gated again by /mutate.
  h.Write([](ClusterState& s) {
    for (int i = 1; i <= 4; ++i)
      s.DeletePod("u-b" + std::to_string(i));
    s.UpsertPod(Gated(MakePod("team-b", "b1-r").Uid("u-b1-r").Cpu(4000).Created(kStartMs)));
  });
  CHECK(h.loop->RunOnce() == 4);
  CHECK(Sorted(h.opener.calls) == std::vector<std::string>{"w-0", "w-1", "w-2", "w-3"});
  // The re-created borrower waits (team-a's held 12 fill the sum of mins), nothing evicted again.
  for (int round = 0; round < 3; ++round)
    CHECK(h.loop->RunOnce() == 0);
  CHECK(h.evictor.calls.size() == 4);
  const std::vector<PendingPodRecord> after = h.loop->Gated();
  REQUIRE(after.size() == 1);
  CHECK(after[0].name == "b1-r");
  CHECK(after[0].gate == "QuotaExceeded");
  const std::string metrics = h.metrics.Render();
  CHECK(metrics.find("capacity_extender_reclaims_started_total 1") != std::string::npos);
  CHECK(metrics.find("capacity_extender_reclaim_plan_victims_total 4") != std::string::npos);
}

TEST_CASE("admission loop: a gated gang's hold that expires is counted and planned afresh",
          "[admission_loop]") {
  LoopHarness h(/*reclaim=*/true);
  h.evictor.delete_victims = false;
  GatedGangOnFullNodes(&h);
  h.loop->RunOnce();
  REQUIRE(h.evictor.calls.size() == 4);
  h.now += 20'000;  // nominationTTL: the victims never left
  h.Write([&](ClusterState& s) { s.Expire(h.now.load()); });
  h.loop->RunOnce();
  const std::string metrics = h.metrics.Render();
  CHECK(metrics.find("capacity_extender_reclaims_expired_total 1") != std::string::npos);
  CHECK(metrics.find("capacity_extender_reclaim_wasted_evictions_total 4") != std::string::npos);
  CHECK(h.evictor.calls.size() == 8);  // planned afresh in the same round
}

// docs/reclaim-plan.md#gate-mode-the-admission-loop-plans-for-a-gated-gang, step 2: one eviction
// rate limit for every reclaim. The reclaim controller (here: its tokens taken directly) has used
// 4 of the 5 evictions of this second: the gang's plan of 4 waits, holding and evicting nothing,
// and says so; the next second it goes whole.
TEST_CASE("admission loop: a gated gang's plan waits for the eviction rate limit it shares",
          "[admission_loop]") {
  LoopHarness h(/*reclaim=*/true, /*evictions_per_second=*/5);
  h.evictor.delete_victims = false;
  GatedGangOnFullNodes(&h);
  REQUIRE(h.evictions.TakeTokens({"x", "x", "x", "x"}, kStartMs));
  CHECK(h.loop->RunOnce() == 0);
  CHECK(h.evictor.calls.empty());
  h.cache.Read([](const ClusterState& s) {
    CHECK(s.FindOurNomination("u-w-0") == nullptr);  // nothing held for a plan not acted on
    return 0;
  });
  for (const auto& r : h.loop->Gated()) {
    CHECK(r.verdict.message.find("gang team-a/train: reclaim postponed by the eviction rate limit "
                                 "(5 per second cluster-wide, 1000 per namespace per minute) for "
                                 "4 victims") != std::string::npos);
  }
  CHECK(h.metrics.Render().find("outcome=\"rate-limited\"") != std::string::npos);
  // Within the same second, still nothing; once the window has passed, the whole plan.
  h.now += 500;
  h.loop->RunOnce();
  CHECK(h.evictor.calls.empty());
  h.now += 600;
  h.loop->RunOnce();
  CHECK(h.evictor.calls ==
        std::vector<std::string>{"team-b/b4", "team-b/b3", "team-b/b2", "team-b/b1"});
  // The controller's next plan finds the second's evictions taken.
  CHECK_FALSE(h.evictions.TakeTokens({"x", "x"}, h.now.load()));
}

// A refused eviction (a PDB's 429 with Retry-After) backs the gang off as the controller backs a
// pod off: the nominations go, nothing is planned again before the Retry-After, whatever changes,
// and the refused victim is tried again only after it.
TEST_CASE("admission loop: a gated gang whose eviction is refused backs off", "[admission_loop]") {
  LoopHarness h(/*reclaim=*/true);
  h.evictor.delete_victims = false;
  h.evictor.refuse = {"team-b/b4"};
  h.evictor.retry_after_seconds = 30;
  GatedGangOnFullNodes(&h);
  CHECK(h.loop->RunOnce() == 0);
  CHECK(h.evictor.calls == std::vector<std::string>{"team-b/b4"});
  h.cache.Read([](const ClusterState& s) {
    for (int i = 0; i < 4; ++i)
      CHECK(s.FindOurNomination("u-w-" + std::to_string(i)) == nullptr);
    return 0;
  });
  for (const auto& r : h.loop->Gated()) {
    CHECK(r.verdict.message.find("gang team-a/train: reclaim refused (team-b/b4 not evicted: "
                                 "Cannot evict pod: PDB); 0 evicted; planned again in 30000 ms") !=
          std::string::npos);
  }
  // A change and the clock: no new plan within the Retry-After.
  h.Write([](ClusterState& s) { s.UpsertNode(MakeNode("n9", 1000)); });
  h.now += 29'000;
  h.loop->RunOnce();
  CHECK(h.evictor.calls.size() == 1);
  // After it, planned again: b4 may go now.
  h.evictor.refuse.clear();
  h.now += 1'000;
  h.loop->RunOnce();
  CHECK(h.evictor.calls ==
        std::vector<std::string>{"team-b/b4", "team-b/b4", "team-b/b3", "team-b/b2", "team-b/b1"});
  const std::string metrics = h.metrics.Render();
  CHECK(metrics.find("capacity_extender_evictions_refused_total{namespace=\"team-b\"} 1") !=
        std::string::npos);
  CHECK(metrics.find("capacity_extender_reclaims_started_total 1") != std::string::npos);
}

// Only the actor evicts: a replica that loses the lease mid-plan stops before the next eviction.
TEST_CASE("admission loop: a gated gang's plan stops at once when the lease is lost",
          "[admission_loop]") {
  LoopHarness h(/*reclaim=*/true);
  h.evictor.delete_victims = false;
  SwitchableLeadership leadership(true);
  h.evictions.FollowLeadership(&leadership);
  h.loop->FollowLeadership(&leadership);
  h.evictor.on_evict = [&] { leadership.Set(false); };  // lost during the first eviction
  GatedGangOnFullNodes(&h);
  h.loop->RunOnce();
  CHECK(h.evictor.calls == std::vector<std::string>{"team-b/b4"});
}

TEST_CASE("admission loop: a gated gang that would borrow gets no reclaim", "[admission_loop]") {
  LoopHarness h(/*reclaim=*/true);
  GatedGangOnFullNodes(&h, /*a_min=*/0);
  CHECK(h.loop->RunOnce() == 0);
  h.loop->RunOnce();
  CHECK(h.evictor.calls.empty());
  for (const auto& r : h.loop->Gated())
    CHECK(r.gate == "QuotaExceeded");
}

// Admission at creation (docs/workloads-live.md#admission-at-creation): eq1 {min = max = cpu 4}
// on one node, nothing gated.
void OneQuota(LoopHarness& h) {
  h.Write([](ClusterState& s) {
    s.UpsertNode(MakeNode("n1", 16000));
    s.UpsertQuota(MakeQuota("eq1", CpuList(4000), CpuList(4000)));
  });
}

// A pod as /mutate decodes it: no uid yet, and no name (generateName).
Pod NewPod(int64_t cpu_milli) {
  Pod pod = MakePod("eq1", "").Cpu(cpu_milli);
  pod.uid.clear();
  return pod;
}

using Verdict = CreationAdmission::Verdict;

TEST_CASE("admission at creation: admitted while the quota admits, its quota held until stored",
          "[admission_loop][admit-at-creation]") {
  LoopHarness h;
  OneQuota(h);
  const CreationAdmission first = h.loop->AdmitAtCreation(NewPod(3000));
  REQUIRE(first.verdict == Verdict::kAdmit);
  CHECK(first.admitted_ms == kStartMs);
  CHECK(first.admitted_at == "2027-01-15T08:00:00.000Z");
  CHECK(h.Used() == 3000);
  // The room is held: 3 + 2 > max 4, gated with /filter's words.
  const CreationAdmission second = h.loop->AdmitAtCreation(NewPod(2000));
  CHECK(second.verdict == Verdict::kGate);
  CHECK(second.why_not.find("would exceed max: cpu used 3 + request 2 > max 4") !=
        std::string::npos);
  CHECK(h.loop->AdmitAtCreation(NewPod(1000)).verdict == Verdict::kAdmit);
  CHECK(h.Used() == 4000);
  // The watch shows the first pod with its annotation: its derived hold takes over.
  h.Write([&](ClusterState& s) {
    s.UpsertPod(AdmittedAt(MakePod("eq1", "w-abcde").Uid("u-w-abcde").Cpu(3000), kStartMs));
  });
  CHECK(h.Used() == 4000);
  CHECK(h.cache.Read([](const ClusterState& s) { return s.creation_holds().size(); }) == 1);
  CHECK(h.Held("w-abcde"));
  // The loop has nothing to lift; the gauge shows the creation hold left.
  CHECK(h.loop->RunOnce() == 0);
  CHECK(h.opener.calls.empty());
  CHECK(h.metrics.Render().find("capacity_extender_admissions_at_creation_total 2") !=
        std::string::npos);
  CHECK(h.metrics.Render().find("capacity_extender_creation_holds 1") != std::string::npos);
  // A re-invoked webhook sees its own admitted-at: nothing more is held.
  Pod again = NewPod(1000);
  again.admitted_ms = kStartMs;
  CHECK(h.loop->AdmitAtCreation(again).verdict == Verdict::kAlreadyAdmitted);
  // An admitted-at of no admission at creation (written by someone else) admits nothing.
  again.admitted_ms = kStartMs - 1;
  CHECK(h.loop->AdmitAtCreation(again).verdict == Verdict::kGate);
  CHECK(h.Used() == 4000);
  // A pod never created: its creation hold ends at reservationTTL (hold_ttl_ms).
  h.Write([](ClusterState& s) { s.Expire(kStartMs + 60'000); });
  CHECK(h.Used() == 3000);
}

TEST_CASE("admission at creation: never past a waiting pod, on a follower or a stale cache",
          "[admission_loop][admit-at-creation]") {
  LoopHarness h;
  OneQuota(h);
  h.Write([](ClusterState& s) {
    s.UpsertPod(Gated(MakePod("eq1", "waits").Uid("u-waits").Cpu(5000)));
  });
  CreationAdmission a = h.loop->AdmitAtCreation(NewPod(1000));
  CHECK(a.verdict == Verdict::kGate);
  CHECK(a.why_not == "1 pods wait in the admission queue");
  h.Write([](ClusterState& s) { s.DeletePod("u-waits"); });
  SwitchableLeadership leadership(false);
  h.loop->FollowLeadership(&leadership);
  a = h.loop->AdmitAtCreation(NewPod(1000));
  CHECK(a.verdict == Verdict::kGate);
  CHECK(a.why_not == "this replica does not act");
  leadership.Set(true);
  QuotasNotListed source;
  h.cache.set_sync_source(&source);
  a = h.loop->AdmitAtCreation(NewPod(1000));
  CHECK(a.verdict == Verdict::kGate);
  CHECK(a.why_not.rfind("the cache is out of sync: ", 0) == 0);
  h.cache.set_sync_source(nullptr);
  CHECK(h.loop->AdmitAtCreation(NewPod(1000)).verdict == Verdict::kAdmit);
  CHECK(h.Used() == 1000);
}

TEST_CASE("admission at creation: concurrent creations never exceed the quota",
          "[admission_loop][admit-at-creation]") {
  LoopHarness h;
  OneQuota(h);
  std::atomic<int> admitted{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 5; ++i) {
        if (h.loop->AdmitAtCreation(NewPod(500)).verdict == Verdict::kAdmit) ++admitted;
      }
    });
  }
  for (auto& t : threads)
    t.join();
  CHECK(admitted == 8);  // 8 x 0.5 = max 4
  CHECK(h.Used() == 4000);
}

}  // namespace
}  // namespace admission_loop_test
}  // namespace capext
