// The reclaim controller's plans across nodes for a gang
// (docs/reclaim-plan.md#3-the-freed-room-is-held): the worked example of
// docs/reclaim-plan.md#worked-example-a-4-pod-gang-on-4-full-nodes played by the controller: one
// eviction round, every member nominated on its node, the plan not made again while in flight,
// re-created borrowers held off, and a hold that expires unbound counted as wasted evictions.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "extender/explain.h"
#include "tests/extender/reclaim/reclaim_harness.h"
#include "tests/support/workload_pods.h"

namespace capext {
namespace reclaim_gang_plan_test {
namespace {

using namespace reclaim_testing;  // NOLINT: the harness of this folder
using testing::Member;
using testing::PodGroupOf;

bool MetricsContain(Harness& h, const std::string& line) {
  return h.metrics.Render().find(line) != std::string::npos;
}

// team-a {min 12, max 16}, team-b {min 0, max 16}; n1..n4 of 4 cpu, each full with a team-b
// borrower b1..b4; gang team-a/train (minMember 4) of four pending 3-cpu pods.
void LoadFullNodes(Harness& h) {
  h.cache.Write([](ClusterState& s) {
    s.UpsertQuota(MakeQuota("team-a", CpuList(12000), CpuList(16000)));
    s.UpsertQuota(MakeQuota("team-b", CpuList(0), CpuList(16000)));
    s.UpsertPodGroup(PodGroupOf("team-a", "train", 4));
    for (int i = 1; i <= 4; ++i) {
      const std::string n = "n" + std::to_string(i);
      s.UpsertNode(MakeNode(n, 4000));
      s.UpsertPod(MakePod("team-b", "b" + std::to_string(i))
                      .Uid("u-b" + std::to_string(i))
                      .Cpu(4000)
                      .BoundTo(n)
                      .Started(kStartMs - 10'000 + i));
    }
    for (int i = 0; i < 4; ++i) {
      s.UpsertPod(Member(MakePod("team-a", "w-" + std::to_string(i))
                             .Uid("u-w-" + std::to_string(i))
                             .Cpu(3000)
                             .Created(kStartMs - 1000 + i),
                         "train"));
    }
    return 0;
  });
}

TEST_CASE("a gang's plan: the 4 borrowers evicted once, every member held on its node",
          "[reclaim][reclaim-plan]") {
  Harness h;
  LoadFullNodes(h);
  // explain shows the plan before anything is done.
  const std::string explained = h.cache.Read([](const ClusterState& s) {
    return ExplainPodText(s, *s.FindPod("u-w-0"), PriorityThenStartTimeOrder());
  });
  CHECK(explained.find("plan across nodes: found") != std::string::npos);
  CHECK(explained.find("team-a/w-3 -> n4; victims: single team-b/b4, single team-b/b3, single "
                       "team-b/b2, single team-b/b1") != std::string::npos);
  CHECK(h.controller->RunOnce() == 1);
  CHECK(h.evictor.calls ==
        std::vector<std::string>{"team-b/b4", "team-b/b3", "team-b/b2", "team-b/b1"});
  for (int i = 0; i < 4; ++i) {
    const Nomination* n = h.OurNomination("u-w-" + std::to_string(i));
    REQUIRE(n != nullptr);
    CHECK(n->node == "n" + std::to_string(i + 1));
  }
  CHECK(h.controller->InFlight().size() == 4);
  CHECK(MetricsContain(h, "capacity_extender_reclaim_plans_total{outcome=\"found\"} 1"));
  CHECK(MetricsContain(h, "capacity_extender_reclaim_plan_victims_total 4"));

  // In flight: not planned again.
  h.now += 1000;
  CHECK(h.controller->RunOnce() == 0);
  CHECK(h.evictor.calls.size() == 4);

  // The borrowers come back (their ReplicaSet): borrowers take nothing from team-a.
  for (int i = 1; i <= 4; ++i) {
    h.Add(MakePod("team-b", "b" + std::to_string(i) + "-r")
              .Uid("u-b" + std::to_string(i) + "-r")
              .Cpu(4000)
              .Created(h.now + i));
  }
  h.now += 1000;
  CHECK(h.controller->RunOnce() == 0);
  CHECK(h.evictor.calls.size() == 4);
  const auto verdict = h.Verdict("u-b1-r");
  REQUIRE(verdict);
  CHECK(verdict->verdict.code != VerdictCode::kWaitingForReclaim);

  // The hold expires with nothing bound: the 4 victims were wasted; nothing left to take.
  h.now += ReclaimControllerOptions{}.nomination_ttl_ms;
  CHECK(h.controller->RunOnce() == 0);
  CHECK(MetricsContain(h, "capacity_extender_reclaim_wasted_evictions_total 4"));
  CHECK(h.evictor.calls.size() == 4);
}

TEST_CASE("a gang's plan cut short after two evictions is made again for what is missing",
          "[reclaim][reclaim-plan]") {
  Harness h;
  LoadFullNodes(h);
  h.evictor.fail = {"team-b/b2"};  // once: the API server answers 500, then goes on
  CHECK(h.controller->RunOnce() == 1);
  CHECK(h.evictor.calls == std::vector<std::string>{"team-b/b4", "team-b/b3", "team-b/b2"});
  for (int i = 0; i < 4; ++i)
    CHECK(h.OurNomination("u-w-" + std::to_string(i)) != nullptr);  // what was freed is held
  h.evictor.fail.clear();

  // Within the backoff: nothing more.
  h.now += 1000;
  h.controller->RunOnce();
  CHECK(h.evictor.calls.size() == 3);

  // After it: planned again, with the rooms of n3 and n4 the members': only b2 and b1 go.
  h.now += ReclaimControllerOptions{}.refusal_backoff_ms;
  h.controller->RunOnce();
  CHECK(h.evictor.calls ==
        std::vector<std::string>{"team-b/b4", "team-b/b3", "team-b/b2", "team-b/b2", "team-b/b1"});
  for (int i = 0; i < 4; ++i)
    CHECK(h.OurNomination("u-w-" + std::to_string(i)) != nullptr);
  CHECK(MetricsContain(h, "capacity_extender_reclaims_resumed_total 1"));
  // Done: nothing is taken a second time.
  h.now += 1000;
  h.controller->RunOnce();
  CHECK(h.evictor.calls.size() == 5);
}

TEST_CASE("a gang's plan: an Event on each victim names the gang and the plan; /pending shows it",
          "[reclaim][reclaim-plan]") {
  Harness h;
  h.RecordEvents();
  LoadFullNodes(h);
  CHECK(h.controller->RunOnce() == 1);
  h.controller->FlushEvents();
  std::vector<std::string> victims;
  for (const auto& e : h.sink.creates) {
    if (e.reason != "Reclaimed") continue;
    victims.push_back(e.ns + "/" + e.pod_name);
    CHECK(e.type == "Normal");
    // The plan is the gang's, though one member asked
    // (docs/reclaim-plan.md#5-where-a-user-sees-it).
    CHECK(e.note.find("evicted by quota reclaim for gang team-a/train: plan for gang team-a/train: "
                      "team-a/w-0 -> n1, team-a/w-1 -> n2") != std::string::npos);
  }
  CHECK(victims == std::vector<std::string>{"team-b/b4", "team-b/b3", "team-b/b2", "team-b/b1"});
  // Written once: the next flush writes none again.
  const std::size_t written = h.sink.creates.size();
  h.controller->FlushEvents();
  for (std::size_t i = written; i < h.sink.creates.size(); ++i)
    CHECK(h.sink.creates[i].reason != "Reclaimed");
  // The asking member's verdict carries the plan's fields.
  const auto verdict = h.Verdict("u-w-0");
  REQUIRE(verdict);
  REQUIRE(verdict->verdict.plan);
  const PlanView& plan = *verdict->verdict.plan;
  CHECK(plan.outcome == "found");
  CHECK(plan.preemptor == "gang team-a/train");
  REQUIRE(plan.members.size() == 4);
  CHECK(plan.members[3] == std::pair<std::string, std::string>{"team-a/w-3", "n4"});
  CHECK(plan.units == std::vector<std::string>{"single team-b/b4", "single team-b/b3",
                                               "single team-b/b2", "single team-b/b1"});
  CHECK(plan.hold_expires_ms == kStartMs + ReclaimControllerOptions{}.nomination_ttl_ms);
}

TEST_CASE("a gang without a plan says why, with the count placed", "[reclaim][reclaim-plan]") {
  Harness h;
  LoadFullNodes(h);
  // team-b's min 4 keeps one borrower: three nodes for four pods.
  h.cache.Write([](ClusterState& s) {
    s.UpsertQuota(MakeQuota("team-b", CpuList(4000), CpuList(16000)));
    return 0;
  });
  CHECK(h.controller->RunOnce() == 0);
  CHECK(h.evictor.calls.empty());
  const auto verdict = h.Verdict("u-w-0");
  REQUIRE(verdict);
  CHECK(verdict->verdict.message.find("3 of 4 pods placed") != std::string::npos);
}

}  // namespace
}  // namespace reclaim_gang_plan_test
}  // namespace capext
