// Two replicas, one actor (architecture.md): the reclaim controller writes nothing while its
// Leadership does not lead, records each reclaim on its pod before the first eviction, follows
// a record written by another replica as its own reclaim in flight, and stops between two
// evictions when its tenure ends. The harness of reclaim_harness.h, plus a switchable
// Leadership and a recorder that writes the record into the cache as the watch would deliver it.
#include <algorithm>
#include <atomic>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <catch2/catch.hpp>

#include "core/placement.h"
#include "extender/reclaim/reclaim_controller.h"
#include "tests/extender/reclaim/reclaim_harness.h"
#include "tests/support/switchable_leadership.h"

namespace capext {
namespace reclaim_controller_replicas_test {
namespace {

using namespace reclaim_testing;  // NOLINT: the harness of this folder

using testing::SwitchableLeadership;

// Writes the record into the cache's pod, as the watch delivers the annotation.
class CacheRecorder final : public ReclaimRecorder {
 public:
  explicit CacheRecorder(SchedulerCache* cache) : cache_(cache) {}
  std::optional<std::string> Record(const Pod& pod, const std::string& node) override {
    calls.push_back("record " + pod.Key() + " " + node);
    if (fail) return std::nullopt;
    const std::string record = fmt::format("{}@t{}", node, ++written_);
    Set(pod, record);
    return record;
  }
  bool Clear(const Pod& pod) override {
    calls.push_back("clear " + pod.Key());
    Set(pod, "");
    return true;
  }
  std::vector<std::string> calls;
  bool fail = false;

 private:
  void Set(const Pod& pod, const std::string& record) {
    cache_->Write([&](ClusterState& s) {
      const NormalizedPod* now = s.FindPod(StoreKeyOf(pod));
      if (now == nullptr) return 0;
      Pod updated = *now;
      updated.reclaim_record = record;
      s.UpsertPod(std::move(updated));
      return 0;
    });
  }
  SchedulerCache* cache_;
  int written_ = 0;
};

std::string RecordOf(Harness& h, const std::string& uid) {
  return h.cache.Read([&](const ClusterState& s) {
    const NormalizedPod* p = s.FindPod(uid);
    return p != nullptr ? p->reclaim_record.str() : std::string("(gone)");
  });
}

void SetRecord(Harness& h, const std::string& uid, const std::string& record) {
  Change(h, [&](ClusterState& s) {
    Pod updated = *s.FindPod(uid);
    updated.reclaim_record = record;
    s.UpsertPod(std::move(updated));
  });
}

void MakeTerminating(Harness& h, const std::string& uid) {
  Change(h, [&](ClusterState& s) {
    Pod updated = *s.FindPod(uid);
    updated.terminating = true;
    s.UpsertPod(std::move(updated));
  });
}

void Bind(Harness& h, const std::string& uid, const std::string& node) {
  Change(h, [&](ClusterState& s) {
    Pod updated = *s.FindPod(uid);
    updated.node_name = node;
    updated.phase = PodPhase::kRunning;
    s.UpsertPod(std::move(updated));
  });
}

// Would a new 2-cpu pod of eq1 pass the filter on n2? (The room freed there is held for job-2.)
bool Eq1PodFitsN2(Harness& h) {
  return h.cache.Read([&](const ClusterState& s) {
    NormalizedPod probe =
        s.Normalize(MakePod("eq1", "job-b2").Uid("u-job-b2").Cpu(2000).Created(kStartMs));
    return CheckBind(s, probe, "n2").ok();
  });
}

struct Replica {
  explicit Replica(bool leads) : leadership(leads), recorder(&h.cache) {
    h.controller->FollowLeadership(&leadership);
    h.controller->RecordReclaimsWith(&recorder);
    h.RecordEvents();
  }
  Harness h;
  SwitchableLeadership leadership;
  CacheRecorder recorder;
};

TEST_CASE("replicas: a follower plans but writes nothing; once it acts it records, then evicts",
          "[reclaim][replicas]") {
  Replica r(false);
  LoadSeed002(r.h);
  CHECK(r.h.controller->RunOnce() == 0);
  r.h.controller->FlushEvents();
  CHECK(r.h.evictor.calls.empty());
  CHECK(r.recorder.calls.empty());
  CHECK(r.h.nudger.calls.empty());
  CHECK(r.h.sink.creates.empty());
  CHECK(r.h.OurNomination("u-job-2") == nullptr);
  auto verdict = r.h.Verdict("u-job-2");
  REQUIRE(verdict.has_value());
  CHECK(verdict->verdict.message.find("this replica does not act") != std::string::npos);
  CHECK(verdict->verdict.message.find("evicting eq1/job-b") != std::string::npos);

  // Nothing changed in the cluster, yet the new actor plans job-2 again at its first pass.
  r.leadership.Set(true);
  CHECK(r.h.controller->RunOnce() == 1);
  CHECK(r.recorder.calls == std::vector<std::string>{"record eq2/job-2 n2"});
  CHECK(r.h.evictor.calls == std::vector<std::string>{"eq1/job-b"});
  CHECK(RecordOf(r.h, "u-job-2") == "n2@t1");
  REQUIRE(r.h.OurNomination("u-job-2") != nullptr);
  r.h.controller->FlushEvents();
  // WaitingForReclaim and the victim's Reclaimed, written by the actor.
  CHECK(r.h.sink.creates.size() == 2);
}

TEST_CASE(
    "replicas: a reclaim recorded by another replica is followed: the room is held, no "
    "victim is chosen again, the pod is nudged once it fits, and the reclaim completes",
    "[reclaim][replicas]") {
  Replica b(false);
  LoadSeed002(b.h);
  b.h.evictor.delete_victims = false;
  b.h.controller->RunOnce();
  // Replica a (the actor then) recorded its reclaim on job-2 and evicted job-b, which is in its
  // grace period: still on n2, terminating.
  SetRecord(b.h, "u-job-2", "n2@2026-01-01T00:00:00.000Z");
  MakeTerminating(b.h, "u-job-b");
  Pass(b.h);
  const Nomination* n = b.h.OurNomination("u-job-2");
  REQUIRE(n != nullptr);
  CHECK(n->node == "n2");
  CHECK(n->expires_ms == b.h.now + ReclaimControllerOptions{}.nomination_ttl_ms);
  CHECK(b.h.controller->InFlight() == std::map<std::string, std::string>{{"eq2/job-2", "n2"}});
  auto verdict = b.h.Verdict("u-job-2");
  REQUIRE(verdict.has_value());
  CHECK(verdict->verdict.code == VerdictCode::kWaitingForReclaim);
  CHECK(verdict->verdict.message.find("recorded on the pod") != std::string::npos);

  // The lease moves to b. job-b is still terminating on n2: without the record, job-2 would not
  // fit and job-b would be chosen (and evicted) again.
  b.leadership.Set(true);
  Pass(b.h);
  Pass(b.h);
  CHECK(b.h.evictor.calls.empty());
  CHECK(b.recorder.calls.empty());
  CHECK(b.h.nudger.calls.empty());  // job-2 does not fit n2 yet
  CHECK_FALSE(Eq1PodFitsN2(b.h));   // the 6 cpus n2 will have are held for job-2

  Change(b.h, [](ClusterState& s) { s.DeletePod("u-job-b"); });
  Pass(b.h);
  CHECK(b.h.nudger.calls == std::vector<std::string>{"eq2/job-2"});
  CHECK_FALSE(Eq1PodFitsN2(b.h));
  Pass(b.h);
  CHECK(b.h.nudger.calls.size() == 1);

  Bind(b.h, "u-job-2", "n2");
  Pass(b.h);
  CHECK(b.h.controller->InFlight().empty());
  CHECK(b.h.metrics.Render().find("capacity_extender_reclaims_completed_total 1") !=
        std::string::npos);
  CHECK(b.h.evictor.calls.empty());
}

TEST_CASE(
    "replicas: the same record is followed once; a follower's followed reclaim is not "
    "nudged until it acts",
    "[reclaim][replicas]") {
  Replica b(false);
  LoadSeed002(b.h);
  b.h.controller->RunOnce();
  SetRecord(b.h, "u-job-2", "n2@t-a");
  Change(b.h, [](ClusterState& s) { s.DeletePod("u-job-b"); });  // the victim is gone already
  Pass(b.h);
  REQUIRE(b.h.OurNomination("u-job-2") != nullptr);
  Pass(b.h);
  CHECK(b.h.nudger.calls.empty());  // it fits, but a follower does not nudge
  b.leadership.Set(true);
  Pass(b.h);
  CHECK(b.h.nudger.calls == std::vector<std::string>{"eq2/job-2"});
  CHECK(b.h.metrics.Render().find("capacity_extender_reclaims_adopted_total 1") !=
        std::string::npos);
}

// One 8-cpu node filled by four 2-cpu pods of the borrower eq1 {min 0}; eq2 {min 8} has p
// (4 cpu) pending: two victims, b3 and b4 (the latest started), evicted most important first.
void LoadTwoVictims(Harness& h) {
  Change(h, [](ClusterState& s) {
    s.UpsertNode(MakeNode("n1", 8000, 32 * kGi));
    s.UpsertQuota(MakeQuota("eq1", CpuList(0), CpuList(16000)));
    s.UpsertQuota(MakeQuota("eq2", CpuList(8000), CpuList(8000)));
    const int64_t t0 = kStartMs - 600'000;
    for (int i = 1; i <= 4; ++i) {
      s.UpsertPod(MakePod("eq1", fmt::format("b{}", i))
                      .Uid(fmt::format("u-b{}", i))
                      .Cpu(2000)
                      .BoundTo("n1")
                      .Created(t0 + i * 1000)
                      .Started(t0 + i * 1000));
    }
    s.UpsertPod(MakePod("eq2", "p").Uid("u-p").Cpu(4000).Created(t0 + 10'000));
  });
}

// Evicts like the harness's evictor, and ends the tenure after the first eviction.
class TenureEndingEvictor final : public Evictor {
 public:
  TenureEndingEvictor(Evictor* inner, SwitchableLeadership* leadership)
      : inner_(inner), leadership_(leadership) {}
  EvictOutcome Evict(const Pod& victim, const std::string& reason) override {
    EvictOutcome out = inner_->Evict(victim, reason);
    leadership_->Set(false);
    return out;
  }

 private:
  Evictor* inner_;
  SwitchableLeadership* leadership_;
};

TEST_CASE(
    "replicas: a tenure that ends between two evictions stops the plan; the room freed is "
    "held until the nomination expires, then the next actor removes the record and "
    "finishes with the other victim, each evicted once",
    "[reclaim][replicas]") {
  SwitchableLeadership leadership(true);
  Harness h;
  TenureEndingEvictor evictor(&h.evictor, &leadership);
  h.controller =
      std::make_unique<ReclaimController>(&h.cache, &h.metrics, h.service.victim_order(), &evictor,
                                          &h.nudger, ReclaimControllerOptions{});
  CacheRecorder recorder(&h.cache);
  h.controller->FollowLeadership(&leadership);
  h.controller->RecordReclaimsWith(&recorder);
  LoadTwoVictims(h);

  h.controller->RunOnce();
  // Least important first: b4 (started after b3) goes before the tenure ends.
  CHECK(h.evictor.calls == std::vector<std::string>{"eq1/b4"});
  CHECK(RecordOf(h, "u-p") == "n1@t1");        // left for the next actor
  REQUIRE(h.OurNomination("u-p") != nullptr);  // the 2 cpus freed are held for p
  CHECK(h.controller->InFlight() == std::map<std::string, std::string>{{"eq2/p", "n1"}});

  // Acting again (this replica, or another that followed the record): nothing more is evicted
  // while the nomination holds.
  leadership.Set(true);
  Pass(h);
  leadership.Set(true);
  Pass(h);
  CHECK(h.evictor.calls.size() == 1);
  CHECK(h.nudger.calls.empty());  // p does not fit n1 yet

  // The nomination expires: the actor removes the record and plans p again: b3 goes.
  h.now += ReclaimControllerOptions{}.nomination_ttl_ms;
  leadership.Set(true);
  h.controller->RunOnce();
  CHECK(h.evictor.calls == std::vector<std::string>{"eq1/b4", "eq1/b3"});
  CHECK(std::count(recorder.calls.begin(), recorder.calls.end(), "clear eq2/p") == 1);
  CHECK(RecordOf(h, "u-p") == "n1@t2");  // the new reclaim's record
}

TEST_CASE(
    "replicas: a reclaim that evicts nothing removes its record; without a record "
    "nothing is evicted",
    "[reclaim][replicas]") {
  SECTION("every candidate refused") {
    Replica r(true);
    LoadSeed002(r.h);
    r.h.evictor.refuse.insert("eq1/job-b");
    r.h.controller->RunOnce();
    CHECK(r.h.evictor.calls == std::vector<std::string>{"eq1/job-b"});
    CHECK(r.recorder.calls == std::vector<std::string>{"record eq2/job-2 n2", "clear eq2/job-2"});
    CHECK(RecordOf(r.h, "u-job-2").empty());
    CHECK(r.h.OurNomination("u-job-2") == nullptr);
    // The record and its removal are this replica's own: never followed.
    Pass(r.h);
    CHECK(r.h.controller->InFlight().empty());
  }
  SECTION("the record cannot be written") {
    Replica r(true);
    LoadSeed002(r.h);
    r.recorder.fail = true;
    r.h.controller->RunOnce();
    CHECK(r.h.evictor.calls.empty());
    auto verdict = r.h.Verdict("u-job-2");
    REQUIRE(verdict.has_value());
    CHECK(verdict->verdict.code == VerdictCode::kReclaimBackoff);
    CHECK(verdict->verdict.message.find("could not be recorded on the pod") != std::string::npos);
  }
}

TEST_CASE("replicas: a record naming an unknown node holds nothing", "[reclaim][replicas]") {
  Replica b(false);
  LoadSeed002(b.h);
  b.h.controller->RunOnce();
  SetRecord(b.h, "u-job-2", "n9@t");
  Pass(b.h);
  CHECK(b.h.OurNomination("u-job-2") == nullptr);
  SetRecord(b.h, "u-job-2", "no-at-sign");
  Pass(b.h);
  CHECK(b.h.OurNomination("u-job-2") == nullptr);
  CHECK(b.h.controller->InFlight().empty());
}

TEST_CASE("ReclaimRecordNode", "[reclaim][replicas]") {
  CHECK(ReclaimRecordNode("n2@2026-01-01T00:00:00.000Z") == "n2");
  CHECK(ReclaimRecordNode("@x").empty());
  CHECK(ReclaimRecordNode("n2").empty());
}

}  // namespace
}  // namespace reclaim_controller_replicas_test
}  // namespace capext
