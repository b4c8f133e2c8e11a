// A plan for a placement (docs/reclaim-plan.md): the worked examples of
// docs/reclaim-plan.md#worked-example-a-4-pod-gang-on-4-full-nodes, a single pod across nodes,
// whole units, PDB-violating units put back first, the budget and the stop callback.
#include "core/reclaim_plan.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "core/admission_queue.h"
#include "core/placement.h"
#include "tests/support/builders.h"
#include "tests/support/workload_pods.h"

namespace capext {
namespace reclaim_plan_test {
namespace {

using testing::AdmittedAt;
using testing::CpuList;
using testing::Gated;
using testing::MakeNode;
using testing::MakePdb;
using testing::MakePod;
using testing::MakeQuota;
using testing::Member;
using testing::PodGroupOf;

std::vector<std::string> Names(const std::vector<const NormalizedPod*>& pods) {
  std::vector<std::string> out;
  for (const NormalizedPod* p : pods)
    out.push_back(p->name);
  return out;
}

// team-a {min 12, max 16}, team-b {min `b_min`, max 16}; n1..n4 of 4 cpu, each full with one
// team-b borrower b1..b4 (4 cpu, started 1..4); gang team-a/train: 4 pending pods of `cpu`.
// `spare`: the min of a third quota that runs nothing (room in the sum of mins).
ClusterState FullNodes(int64_t cpu, int64_t b_min = 0, int64_t spare = 0) {
  ClusterState state;
  state.UpsertQuota(MakeQuota("team-a", CpuList(12000), CpuList(16000)));
  state.UpsertQuota(MakeQuota("team-b", CpuList(b_min), CpuList(16000)));
  if (spare > 0) state.UpsertQuota(MakeQuota("spare", CpuList(spare), CpuList(spare)));
  for (int i = 1; i <= 4; ++i) {
    const std::string n = "n" + std::to_string(i);
    state.UpsertNode(MakeNode(n, 4000));
    state.UpsertPod(
        MakePod("team-b", "b" + std::to_string(i)).Cpu(4000).BoundTo(n).Started(i * 1000));
  }
  state.UpsertPodGroup(PodGroupOf("team-a", "train", 4));
  for (int i = 0; i < 4; ++i) {
    state.UpsertPod(
        Member(MakePod("team-a", "w-" + std::to_string(i)).Cpu(cpu).Created(10'000 + i), "train"));
  }
  return state;
}

ReclaimPlan Plan(const ClusterState& state, const std::string& ns, const std::string& name,
                 const ReclaimPlanBudget& budget = {}) {
  return SearchReclaimPlan(state, *state.FindPodByName(ns, name), PriorityThenStartTimeOrder(),
                           budget);
}

TEST_CASE("a 4-pod gang on 4 full nodes takes the 4 borrowers, one per node", "[reclaim-plan]") {
  const ClusterState state = FullNodes(3000);
  const ReclaimPlan plan = Plan(state, "team-a", "w-0");
  INFO(plan.why.message());
  REQUIRE(plan.found());
  CHECK(Names(plan.members) == std::vector<std::string>{"w-0", "w-1", "w-2", "w-3"});
  CHECK(plan.nodes == std::vector<std::string>{"n1", "n2", "n3", "n4"});
  // Eviction order: least important first (the most recently started).
  CHECK(Names(plan.Victims()) == std::vector<std::string>{"b4", "b3", "b2", "b1"});
  CHECK(plan.units.size() == 4);
  // Any member asks the same plan.
  CHECK(Names(Plan(state, "team-a", "w-2").Victims()) == Names(plan.Victims()));
}

TEST_CASE("the plan's hold: members pass /filter on their nodes, re-created borrowers do not",
          "[reclaim-plan]") {
  // docs/reclaim-plan.md#3-the-freed-room-is-held: the victims gone, each member nominated on
  // its planned node. A member's need counts its gang once (not need 12 + the siblings'
  // nominated 9 > max 16); a re-created borrower is held off the nodes and out of the quota.
  ClusterState state = FullNodes(3000);
  const ReclaimPlan plan = Plan(state, "team-a", "w-0");
  REQUIRE(plan.found());
  std::vector<std::pair<std::string, std::string>> holds;
  for (std::size_t i = 0; i < plan.members.size(); ++i)
    holds.emplace_back(plan.members[i]->store_key(), plan.nodes[i]);
  for (const NormalizedPod* v : plan.Victims())
    state.DeletePod(std::string(v->store_key()));
  for (const auto& [key, node] : holds)
    state.Nominate(key, node, 1'000'000);
  for (int i = 0; i < 4; ++i) {
    const NormalizedPod& w = *state.FindPodByName("team-a", "w-" + std::to_string(i));
    const PodFilter filter(state, w);
    INFO(filter.quota().message());
    CHECK(filter.quota().ok());
    CHECK(filter.CheckNode("n" + std::to_string(i + 1)).ok());
  }
  state.UpsertPod(MakePod("team-b", "b1-again").Cpu(4000).Created(30'000));
  const NormalizedPod& again = *state.FindPodByName("team-b", "b1-again");
  const PodFilter filter(state, again);
  CHECK_FALSE(filter.quota().ok());
  for (int i = 1; i <= 4; ++i)
    CHECK_FALSE(filter.CheckNode("n" + std::to_string(i)).ok());
}

TEST_CASE("put-back keeps the borrowers the gang does not need, the most important first",
          "[reclaim-plan]") {
  // Sum of mins 12: the gang's 8 leaves room for 4 of borrowing: b1 back (4 + 8 <= 12), b2 not.
  ClusterState state = FullNodes(2000);
  ReclaimPlan plan = Plan(state, "team-a", "w-0");
  REQUIRE(plan.found());
  CHECK(Names(plan.Victims()) == std::vector<std::string>{"b4", "b3", "b2"});
  CHECK(plan.nodes == std::vector<std::string>{"n2", "n2", "n3", "n3"});
  // A spare min of 8 (sum 20): the nodes decide: b1 and b2 back, b3 and b4 go.
  state = FullNodes(2000, 0, 8000);
  plan = Plan(state, "team-a", "w-0");
  REQUIRE(plan.found());
  CHECK(Names(plan.Victims()) == std::vector<std::string>{"b4", "b3"});
  CHECK(plan.nodes == std::vector<std::string>{"n3", "n3", "n4", "n4"});
}

TEST_CASE("a giver stops at its min: no plan, with the count placed", "[reclaim-plan]") {
  // team-b's min 4 keeps b1: three nodes freed for four 3-cpu pods.
  const ClusterState state = FullNodes(3000, 4000);
  const ReclaimPlan plan = Plan(state, "team-a", "w-0");
  CHECK(plan.outcome == ReclaimPlanOutcome::kNoPlacement);
  CHECK(plan.placed == 3);
  CHECK(plan.why.message() == "no plan: 3 of 4 pods placed after removing every eligible unit");
  CHECK(plan.units.empty());
}

TEST_CASE("a borrower finds no unit of another quota", "[reclaim-plan]") {
  ClusterState state = FullNodes(3000);
  state.UpsertPod(MakePod("team-b", "more").Cpu(1000).Created(20'000));
  const ReclaimPlan plan = Plan(state, "team-b", "more");
  CHECK(plan.outcome == ReclaimPlanOutcome::kNoVictims);
  CHECK(plan.why.message() == "no plan: no unit the rules let go");
}

TEST_CASE("a single pod across nodes: the least important borrower goes", "[reclaim-plan]") {
  ClusterState state;
  state.UpsertQuota(MakeQuota("team-a", CpuList(8000), CpuList(8000)));
  state.UpsertQuota(MakeQuota("team-b", CpuList(0), CpuList(8000)));
  state.UpsertNode(MakeNode("n1", 2000));
  state.UpsertNode(MakeNode("n2", 2000));
  state.UpsertPod(MakePod("team-b", "high").Cpu(2000).Priority(100).BoundTo("n1").Started(1));
  state.UpsertPod(MakePod("team-b", "low").Cpu(2000).Priority(0).BoundTo("n2").Started(2));
  state.UpsertPod(MakePod("team-a", "p").Cpu(2000).Created(3));
  const ReclaimPlan plan = Plan(state, "team-a", "p");
  REQUIRE(plan.found());
  CHECK(Names(plan.Victims()) == std::vector<std::string>{"low"});
  CHECK(plan.nodes == std::vector<std::string>{"n2"});
}

TEST_CASE("a victim gang goes whole: its core on every node, never part of it", "[reclaim-plan]") {
  // team-b runs gang job (minMember 2): j0 on n1, j1 on n2, plus a surplus j2 on n3. team-a
  // needs one node of 4 cpu. The surplus goes first; the core is never split.
  ClusterState state;
  state.UpsertQuota(MakeQuota("team-a", CpuList(12000), CpuList(16000)));
  state.UpsertQuota(MakeQuota("team-b", CpuList(0), CpuList(16000)));
  for (int i = 1; i <= 3; ++i)
    state.UpsertNode(MakeNode("n" + std::to_string(i), 4000));
  state.UpsertPodGroup(PodGroupOf("team-b", "job", 2));
  for (int i = 0; i < 3; ++i) {
    state.UpsertPod(Member(MakePod("team-b", "j" + std::to_string(i))
                               .Cpu(4000)
                               .BoundTo("n" + std::to_string(i + 1))
                               .Started(1000 * (i + 1)),
                           "job"));
  }
  state.UpsertPod(MakePod("team-a", "p").Cpu(4000).Created(5000));
  ReclaimPlan plan = Plan(state, "team-a", "p");
  REQUIRE(plan.found());
  CHECK(Names(plan.Victims()) == std::vector<std::string>{"j2"});
  CHECK(plan.units.at(0).kind == VictimUnitKind::kSurplus);

  // Two nodes wanted (a gang of two 4-cpu pods): the surplus and then the core whole (three
  // pods), since the core cannot be split; put-back cannot return the surplus alone.
  state.UpsertPodGroup(PodGroupOf("team-a", "pair", 2));
  state.DeletePod(state.FindPodByName("team-a", "p")->store_key());
  for (int i = 0; i < 2; ++i) {
    state.UpsertPod(
        Member(MakePod("team-a", "q" + std::to_string(i)).Cpu(4000).Created(6000 + i), "pair"));
  }
  plan = Plan(state, "team-a", "q0");
  REQUIRE(plan.found());
  CHECK(Names(plan.Victims()) == std::vector<std::string>{"j2", "j1", "j0"});
  REQUIRE(plan.units.size() == 1);
  CHECK(plan.units[0].kind == VictimUnitKind::kCore);
}

TEST_CASE("PDB-violating units are put back first", "[reclaim-plan]") {
  // Two equal borrowers, one room needed: without a PDB the newer goes; with a PDB protecting
  // the newer (no disruption allowed), it is tried first for put-back and stays.
  ClusterState state;
  state.UpsertQuota(MakeQuota("team-a", CpuList(8000), CpuList(8000)));
  state.UpsertQuota(MakeQuota("team-b", CpuList(0), CpuList(8000)));
  state.UpsertNode(MakeNode("n1", 2000));
  state.UpsertNode(MakeNode("n2", 2000));
  state.UpsertPod(MakePod("team-b", "old").Cpu(2000).BoundTo("n1").Started(1));
  state.UpsertPod(MakePod("team-b", "new").Cpu(2000).BoundTo("n2").Started(2).Label("app", "db"));
  state.UpsertPod(MakePod("team-a", "p").Cpu(2000).Created(3));
  CHECK(Names(Plan(state, "team-a", "p").Victims()) == std::vector<std::string>{"new"});
  state.UpsertPdb(MakePdb("team-b", "db", {{"app", "db"}}, 0));
  const ReclaimPlan plan = Plan(state, "team-a", "p");
  REQUIRE(plan.found());
  CHECK(Names(plan.Victims()) == std::vector<std::string>{"old"});
  CHECK(plan.pdb_violations == 0);
}

TEST_CASE("the budget and the stop callback end the search: no plan, approximate",
          "[reclaim-plan]") {
  const ClusterState state = FullNodes(3000);
  const ReclaimPlan full = Plan(state, "team-a", "w-0");
  REQUIRE(full.found());
  // Deterministic: the same budget gives the same answer; one step short is approximate.
  ReclaimPlanBudget budget;
  budget.max_steps = full.steps;
  CHECK(Plan(state, "team-a", "w-0", budget).found());
  budget.max_steps = full.steps - 1;
  const ReclaimPlan cut = Plan(state, "team-a", "w-0", budget);
  CHECK(cut.approximate());
  CHECK(cut.units.empty());
  CHECK(cut.why.message().rfind("no plan (search budget exhausted: approximate)", 0) == 0);
  int asked = 0;
  ReclaimPlanBudget stop;
  stop.should_stop = [&] { return ++asked > 3; };
  const ReclaimPlan stopped = Plan(state, "team-a", "w-0", stop);
  CHECK(stopped.approximate());
  CHECK(stopped.steps == 4);
}

// docs/reclaim-plan.md#3-the-freed-room-is-held, gate mode: the gang waits under our gate; the
// admission loop asks the plan for its unit (the oldest members under our gate alone), holds the
// room with nominations, evicts, and the admission queue lifts the gates once the room is free.
TEST_CASE("a gated gang within its min: the plan is its admission unit's, then the queue admits it",
          "[reclaim-plan]") {
  ClusterState state = FullNodes(3000);
  for (int i = 0; i < 4; ++i) {
    state.UpsertPod(Gated(Member(
        MakePod("team-a", "w-" + std::to_string(i)).Cpu(3000).Created(10'000 + i), "train")));
  }
  // Waiting: the quota (sum of mins: 16 + 12 > 12) and the nodes stand in its way.
  const AdmissionRound before = PlanAdmissions(state, {}, 50'000);
  CHECK(before.admit.empty());
  const ReclaimPlan plan = Plan(state, "team-a", "w-0");
  INFO(plan.why.message());
  REQUIRE(plan.found());
  CHECK(Names(plan.members) == std::vector<std::string>{"w-0", "w-1", "w-2", "w-3"});
  CHECK(plan.nodes == std::vector<std::string>{"n1", "n2", "n3", "n4"});
  CHECK(Names(plan.Victims()) == std::vector<std::string>{"b4", "b3", "b2", "b1"});

  std::vector<std::pair<std::string, std::string>> holds;
  for (std::size_t i = 0; i < plan.members.size(); ++i)
    holds.emplace_back(plan.members[i]->store_key(), plan.nodes[i]);
  for (const auto& [key, node] : holds)
    state.Nominate(key, node, 1'000'000);
  // While the victims are still there, nothing is admitted; a re-created borrower waits too.
  CHECK(PlanAdmissions(state, {}, 50'000).admit.empty());
  for (const NormalizedPod* v : plan.Victims())
    state.DeletePod(std::string(v->store_key()));
  state.UpsertPod(Gated(MakePod("team-b", "b1-again").Cpu(4000).Created(60'000)));
  const AdmissionRound after = PlanAdmissions(state, {}, 70'000);
  REQUIRE(after.admit.size() == 1);
  CHECK(after.admit[0].kind == AdmissionUnitKind::kGroup);
  CHECK(after.admit[0].nodes == std::vector<std::string>{"n1", "n2", "n3", "n4"});
  CHECK(after.waiting.count(state.FindPodByName("team-b", "b1-again")->store_key()) == 1);
  // The gates lifted (admitted-at): each member is held and still nominated. At /filter its
  // siblings count once, by their holds, not again by their nominations
  // (docs/workloads.md#2-holds-quota-without-a-node): 9 + 3 <= max 16, and its own node fits.
  for (int i = 0; i < 4; ++i) {
    state.UpsertPod(AdmittedAt(
        Member(MakePod("team-a", "w-" + std::to_string(i)).Cpu(3000).Created(10'000 + i), "train"),
        70'000));
  }
  for (int i = 0; i < 4; ++i) {
    const NormalizedPod& w = *state.FindPodByName("team-a", "w-" + std::to_string(i));
    REQUIRE(state.FindHold(w.store_key()) != nullptr);
    REQUIRE(state.FindOurNomination(w.store_key()) != nullptr);
    const PodFilter filter(state, w);
    INFO(filter.quota().message());
    CHECK(filter.quota().ok());
    CHECK(filter.CheckNode("n" + std::to_string(i + 1)).ok());
  }
}

TEST_CASE("a gated gang with a member under another gate has no plan: its unit is short",
          "[reclaim-plan]") {
  ClusterState state = FullNodes(3000);
  for (int i = 0; i < 4; ++i) {
    Pod pod = Gated(
        Member(MakePod("team-a", "w-" + std::to_string(i)).Cpu(3000).Created(10'000 + i), "train"));
    pod.other_gates = i == 3;
    state.UpsertPod(pod);
  }
  CHECK(PlanMembers(state, *state.FindPodByName("team-a", "w-0")).empty());
  CHECK_FALSE(Plan(state, "team-a", "w-0").found());
}

}  // namespace
}  // namespace reclaim_plan_test
}  // namespace capext
