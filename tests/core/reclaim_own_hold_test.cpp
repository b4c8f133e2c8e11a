// The reclaim of an admitted pod (docs/workloads.md#2-holds-quota-without-a-node): the pod's own
// hold is left out of the victim rule's "within its min" check and of the candidate search's
// bounds. The bug this names (groups-sim's
// tests/scenarios/groups/recreated-victims-gated-again.yaml, events 1-2): an admitted pod's own
// hold counted in reclaim's "within its min" check, so a pod admitted within its guarantee
// (used 0 + 6 <= min 10) was judged above it (held 6 + 6 > 10) and never reclaimed for.
#include <catch2/catch.hpp>
#include <string>

#include "core/reclaim_planner.h"
#include "tests/support/builders.h"
#include "tests/support/workload_pods.h"

namespace capext {
namespace reclaim_own_hold_test {
namespace {

using testing::AdmittedAt;
using testing::CpuList;
using testing::KeysOf;
using testing::MakeNode;
using testing::MakePod;
using testing::MakeQuota;
using testing::Member;
using testing::PodGroupOf;

TEST_CASE(
    "reclaim for an admitted pod leaves its own hold out of 'within its min' "
    "(an admitted pod's own hold counted in reclaim)",
    "[reclaim_planner][workloads][holds]") {
  // The scenario after event 0: eq1's 2-pod job (2 x 3 cpu) bound on n1 (8 cpu), eq1 borrows 4
  // above its min 2; eq2's service (6 cpu, min 10) admitted through the gate: a derived hold.
  ClusterState state;
  state.UpsertNode(MakeNode("n1", 8000));
  state.UpsertQuota(MakeQuota("eq1", CpuList(2000), CpuList(8000)));
  state.UpsertQuota(MakeQuota("eq2", CpuList(10000), CpuList(10000)));
  state.UpsertPodGroup(PodGroupOf("eq1", "train", 2));
  for (int i = 0; i < 2; ++i) {
    state.UpsertPod(Member(
        MakePod("eq1", "train-" + std::to_string(i)).Cpu(3000).Started(1000 + i).BoundTo("n1"),
        "train"));
  }
  state.UpsertPod(AdmittedAt(MakePod("eq2", "svc").Cpu(6000).Created(60000), 60000));
  const NormalizedPod& svc = *state.FindPod(StoreKeyOf(MakePod("eq2", "svc")));
  REQUIRE(state.Used("eq2").Get("cpu") == 6000);  // its own hold
  const ReclaimPlanForPod plan = PlanReclaim(state, svc, PriorityThenStartTimeOrder(), {});
  CHECK(ReclaimDecisionName(plan.decision) == std::string("evict"));
  CHECK(plan.node == "n1");
  // The job's core, taken whole: both pods.
  CHECK(KeysOf(plan.victims).size() == 2);
  // The same pod without the annotation (no hold) is planned the same way.
  ClusterState unheld(state);
  unheld.UpsertPod(MakePod("eq2", "svc").Cpu(6000).Created(60000));
  const ReclaimPlanForPod same = PlanReclaim(
      unheld, *unheld.FindPod(StoreKeyOf(MakePod("eq2", "svc"))), PriorityThenStartTimeOrder(), {});
  CHECK(same.decision == plan.decision);
  CHECK(KeysOf(same.victims) == KeysOf(plan.victims));
}

}  // namespace
}  // namespace reclaim_own_hold_test
}  // namespace capext
