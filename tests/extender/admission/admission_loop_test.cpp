// Gate mode's admission loop (docs/workloads-live.md#the-admission-loop): a unit is admitted
// whole or not at all; a held pod whose gate removal is in flight is not admitted again; a
// failed patch releases that pod's hold; a follower plans and publishes but writes nothing; a
// timed-out gang is evicted once; gated pods' verdicts carry /filter's words with the numbers.
#include "extender/admission/admission_loop.h"

#include <catch2/catch.hpp>
#include <set>
#include <string>
#include <vector>

#include "extender/leadership/leadership.h"
#include "tests/extender/reclaim/reclaim_harness.h"
#include "tests/support/switchable_leadership.h"
#include "tests/support/workload_pods.h"

namespace capext {
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

// Records each gate removal; fails the pods named in `fail` (by name) once each.
class RecordingOpener final : public GateOpener {
 public:
  GateOpenOutcome Open(const Pod& pod, int64_t /*admitted_ms*/) override {
    calls.push_back(pod.name);
    if (fail.erase(pod.name) != 0) return {false, "HTTP 422 Invalid: test failed"};
    return {true, ""};
  }
  std::vector<std::string> calls;
  std::set<std::string> fail;
};

struct LoopHarness {
  LoopHarness()
      : cache(QuotaSemantics::kCapacityExtender, {}, [this] { return now.load(); }),
        evictor(&cache) {
    cache.set_ready(true);
    AdmissionLoopOptions options;
    options.plan.default_group_timeout_ms = 30'000;
    loop = std::make_unique<AdmissionLoop>(&cache, &metrics, &opener, &evictor, options);
    loop->AttachEvents(&sink);
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
  RecordingOpener opener;
  RecordingEventSink sink;
  std::unique_ptr<AdmissionLoop> loop;
};

TEST_CASE("admission loop: a gang is admitted whole, the other waits with its numbers",
          "[admission_loop]") {
  LoopHarness h;
  h.TwoGangs();
  CHECK(h.loop->RunOnce() == 4);
  CHECK(h.opener.calls == std::vector<std::string>{"a-0", "a-1", "a-2", "a-3"});
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
  CHECK(h.opener.calls == std::vector<std::string>{"a-0", "a-1", "a-2", "a-3"});
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

}  // namespace
}  // namespace capext
