// A gang holds whole or not at all (docs/workloads.md#2-holds-quota-without-a-node): when a
// member on a node leaves and the gang is then below its minMember, it has lost its core: its
// explicit holds end at once, its derived holds (gate mode) time out at once in the admission
// loop (evicted with a controller, else their admission revoked), and with no member left on a node
// it is starting again. A surplus member leaving ends only its own hold. The bug this names: filter
// mode kept the holds of a gang's unbound members when a reclaim took its bound ones ("admitted
// members not in victim units"), so a gang held quota while none of it could run.
#include <catch2/catch.hpp>
#include <string>

#include "core/admission_queue.h"
#include "core/cluster_state.h"
#include "core/reclaim_planner.h"
#include "tests/support/builders.h"
#include "tests/support/workload_pods.h"

namespace capext {
namespace gang_lost_core_test {
namespace {

using testing::AdmittedAt;
using testing::CpuList;
using testing::Gated;
using testing::KeysOf;
using testing::MakeNode;
using testing::MakePod;
using testing::MakeQuota;
using testing::Member;
using testing::PodGroupOf;

std::string Key(const std::string& name) {
  return StoreKeyOf(MakePod("eq1", name));
}

testing::PodBuilder Raw(int i) {
  return MakePod("eq1", "w-" + std::to_string(i)).Cpu(1000).Created(10 + i);
}
Pod W(int i) {
  return Member(Raw(i), "w");
}
Pod Bound(int i) {
  return Member(Raw(i).BoundTo("n1").Started(100 + i), "w");
}

const GroupView& Gang(const ClusterState& state) {
  return *state.FindGroup(testing::CoschedulingKey("eq1", "w"));
}

// docs/workloads.md's worked numbers: eq1 max 8, gang w of 4 x 1 cpu, all held by filter mode's
// first pass, w-0 and w-1 bound.
ClusterState FilterModeGangHalfBound() {
  ClusterState state;
  state.UpsertNode(MakeNode("n1", 100000));
  state.UpsertQuota(MakeQuota("eq1", CpuList(0), CpuList(8000)));
  state.UpsertPodGroup(PodGroupOf("eq1", "w", 4));
  for (int i = 0; i < 4; ++i)
    state.UpsertPod(W(i));
  for (int i = 0; i < 4; ++i)
    state.Hold(Key("w-" + std::to_string(i)), 100, 1'000'000);
  state.UpsertPod(Bound(0));
  state.UpsertPod(Bound(1));
  return state;
}

TEST_CASE(
    "filter mode: a gang that loses its core releases every member's hold at once "
    "(admitted members not in victim units)",
    "[workloads][holds]") {
  ClusterState state = FilterModeGangHalfBound();
  REQUIRE(state.Used("eq1").Get("cpu") == 4000);  // 2 bound + 2 held
  REQUIRE(Gang(state).admitted == 2);
  SECTION("a reclaim takes the core (both bound members deleted)") {
    state.DeletePod(Key("w-1"));  // the most recently started goes first
    state.DeletePod(Key("w-0"));
    CHECK(state.FindHold(Key("w-2")) == nullptr);
    CHECK(state.FindHold(Key("w-3")) == nullptr);
    CHECK(state.Used("eq1").Get("cpu") == 0);
    CHECK(Gang(state).active() == 0);
    CHECK(Gang(state).need() == 4);
    CHECK(Gang(state).starting());
  }
  SECTION("a bound member fails (terminal): the same") {
    state.UpsertPod(Member(Raw(0).BoundTo("n1").Started(100).Phase(PodPhase::kFailed), "w"));
    CHECK(state.FindHold(Key("w-2")) == nullptr);
    CHECK(state.FindHold(Key("w-3")) == nullptr);
    CHECK(state.Used("eq1").Get("cpu") == 1000);  // w-1 is still bound
    CHECK(Gang(state).admitted == 0);
  }
  SECTION("a pending, held member that goes ends only its own hold") {
    state.DeletePod(Key("w-3"));
    CHECK(state.FindHold(Key("w-2")) != nullptr);
    CHECK(state.Used("eq1").Get("cpu") == 3000);
  }
}

TEST_CASE("a surplus member leaving its node keeps the other members' holds",
          "[workloads][holds]") {
  // minMember 2: w-0, w-1 bound (complete), w-2 held; w-0 goes: 1 bound + 1 held = 2, not below.
  ClusterState state;
  state.UpsertNode(MakeNode("n1", 100000));
  state.UpsertQuota(MakeQuota("eq1", CpuList(0), CpuList(8000)));
  state.UpsertPodGroup(PodGroupOf("eq1", "w", 2));
  for (int i = 0; i < 3; ++i)
    state.UpsertPod(W(i));
  state.UpsertPod(Bound(0));
  state.UpsertPod(Bound(1));
  state.Hold(Key("w-2"), 100, 1'000'000);
  REQUIRE(Gang(state).complete);
  state.DeletePod(Key("w-0"));
  CHECK(state.FindHold(Key("w-2")) != nullptr);
  CHECK(Gang(state).complete);
  CHECK(Gang(state).orphaned.empty());
  // Now w-1 goes too: 0 on nodes, 1 held < 2: the core is lost, the hold ends, the gang starts
  // again.
  state.DeletePod(Key("w-1"));
  CHECK(state.FindHold(Key("w-2")) == nullptr);
  CHECK_FALSE(Gang(state).complete);
  CHECK(Gang(state).need() == 2);
}

TEST_CASE("gate mode: a gang that loses its core has its admitted members timed out at once",
          "[workloads][holds][admission]") {
  ClusterState state;
  state.UpsertNode(MakeNode("n1", 100000));
  state.UpsertQuota(MakeQuota("eq1", CpuList(8000), CpuList(8000)));
  state.UpsertPodGroup(PodGroupOf("eq1", "w", 3, /*timeout_ms=*/600'000));
  // w-0, w-1 bound, w-2 admitted through the gate (a derived hold), w-3 re-created, gated.
  state.UpsertPod(AdmittedAt(Bound(0), 1000));
  state.UpsertPod(AdmittedAt(Bound(1), 1000));
  state.UpsertPod(AdmittedAt(W(2), 1000));
  Pod no_controller = AdmittedAt(W(4), 1000);
  no_controller.has_controller = false;
  state.UpsertPod(no_controller);
  state.UpsertPod(Gated(W(3)));
  REQUIRE(state.Used("eq1").Get("cpu") == 4000);
  REQUIRE(PlanAdmissions(state, {}, 2000).timed_out.empty());
  state.DeletePod(Key("w-1"));
  // 1 bound + 2 admitted = 3: not below minMember, nothing happens.
  REQUIRE(Gang(state).orphaned.empty());
  state.DeletePod(Key("w-0"));
  // 0 on nodes, 2 admitted < 3: lost its core. The derived holds end at once (their admission
  // revoked); the loop evicts or removes the annotation.
  CHECK(Gang(state).orphaned == std::vector<std::string>{Key("w-2"), Key("w-4")});
  CHECK(state.Used("eq1").Get("cpu") == 0);
  const ClusterState copy(state);
  CHECK(Gang(copy).orphaned == Gang(state).orphaned);
  const AdmissionRound round = PlanAdmissions(state, {}, 2000);  // well within the timeout
  REQUIRE(round.timed_out.size() == 1);
  const GroupTimeout& t = round.timed_out.front();
  CHECK(t.timeout_ms == 0);
  CHECK(t.evict == std::vector<std::string>{Key("w-2")});
  CHECK(t.reported.empty());
  // Without a controller: its admission is revoked (the loop's), not left alone.
  CHECK(t.revoke == std::vector<std::string>{Key("w-4")});
  CHECK(t.active == 0);
  CHECK(t.min_member == 3);
  CHECK(t.release_holds == std::vector<std::string>{Key("w-2")});
  // The gated member waits until they are gone, then the gang is admitted afresh, whole.
  CHECK(round.admit.empty());
  REQUIRE(round.waiting.count(Key("w-3")) == 1);
  CHECK(round.waiting.at(Key("w-3")).message ==
        "gang eq1/w: lost its core: 2 admitted members are released first");
  // Their annotation still on them: a watch event does not make them admitted again.
  state.UpsertPod(AdmittedAt(W(2), 1000));
  CHECK(state.Used("eq1").Get("cpu") == 0);
  state.DeletePod(Key("w-2"));
  state.DeletePod(Key("w-4"));
  CHECK(Gang(state).orphaned.empty());
  state.UpsertPod(Gated(W(5)));
  state.UpsertPod(Gated(W(6)));
  const AdmissionRound afresh = PlanAdmissions(state, {}, 3000);
  CHECK(afresh.timed_out.empty());
  REQUIRE(afresh.admit.size() == 1);
  CHECK(afresh.admit.front().pods.size() == 3);
}

TEST_CASE("taking a core releases its admitted members' holds in the what-if; they are no victims",
          "[workloads][holds][victim_selection]") {
  // n1 has 3 cpu: w-0, w-1 (1 cpu each) of gang w (minMember 3, eq1 min 0) bound there, w-2
  // held. eq2 (min 3) asks for 3 cpu: within its min, but the sum of all mins is 3 and the
  // cluster uses 3 (2 bound + 1 held). Taking the core frees 2 on n1 and, with its hold, 1 more:
  // 0 + 3 <= 3. Counting the hold as kept would leave 1 + 3 > 3: no plan.
  ClusterState state;
  state.UpsertNode(MakeNode("n1", 3000));
  state.UpsertQuota(MakeQuota("eq1", CpuList(0), CpuList(8000)));
  state.UpsertQuota(MakeQuota("eq2", CpuList(3000), CpuList(3000)));
  state.UpsertPodGroup(PodGroupOf("eq1", "w", 3));
  state.UpsertPod(Bound(0));
  state.UpsertPod(Bound(1));
  state.UpsertPod(W(2));
  state.Hold(Key("w-2"), 500, 1'000'000);
  const NormalizedPod p = state.Normalize(MakePod("eq2", "p").Cpu(3000).Created(900));
  const ReclaimPlanForPod plan = PlanReclaim(state, p, PriorityThenStartTimeOrder(), {});
  CHECK(ReclaimDecisionName(plan.decision) == std::string("evict"));
  CHECK(KeysOf(plan.victims) == std::vector<std::string>{"eq1/w-0", "eq1/w-1"});
  // Evicting them ends the hold: what the what-if counted.
  state.DeletePod(Key("w-1"));
  state.DeletePod(Key("w-0"));
  CHECK(state.FindHold(Key("w-2")) == nullptr);
  CHECK(CheckQuota(state, p).ok());
}

}  // namespace
}  // namespace gang_lost_core_test
}  // namespace capext
