// PlanReclaim: the reclaim controller's decision for one pending pod
// (docs/capacity-semantics.md#8-the-reclaim-controller, steps 1-3), including seed 002's
// cross-namespace reclaim of equal-priority borrowers.
#include "core/reclaim_planner.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "core/reasons.h"
#include "tests/support/builders.h"

namespace capext {
namespace reclaim_planner_test {
namespace {

using testing::CpuList;
using testing::KeysOf;
using testing::MakeNode;
using testing::MakePod;
using testing::MakeQuota;
using testing::UidOf;

// Seed 002 after its first five events: eq1 borrows 2 cpu beyond its min of 6.
ClusterState Seed002() {
  ClusterState state;
  state.UpsertNode(MakeNode("n1", 8000));
  state.UpsertNode(MakeNode("n2", 8000));
  state.UpsertQuota(MakeQuota("eq1", CpuList(6000), CpuList(10000)));
  state.UpsertQuota(MakeQuota("eq2", CpuList(12000), CpuList(14000)));
  state.UpsertPod(MakePod("eq1", "job-a").Cpu(2000).Started(1000).BoundTo("n1"));
  state.UpsertPod(MakePod("eq1", "job-b").Cpu(2000).Started(2000).BoundTo("n2"));
  state.UpsertPod(MakePod("eq2", "job-1").Cpu(3000).Started(3000).BoundTo("n1"));
  state.UpsertPod(MakePod("eq1", "nb-a").Cpu(2000).Priority(1000000).Started(4000).BoundTo("n1"));
  state.UpsertPod(MakePod("eq1", "nb-b").Cpu(2000).Priority(1000000).Started(5000).BoundTo("n2"));
  return state;
}

TEST_CASE("seed 002: an entitled pod reclaims from the borrower, never its NoteBook",
          "[reclaim_planner]") {
  ClusterState state = Seed002();
  Pod job2 = MakePod("eq2", "job-2").Cpu(5000);
  state.UpsertPod(job2);
  ReclaimPlanForPod plan =
      PlanReclaim(state, state.Normalize(job2), PriorityThenStartTimeOrder(), {});
  REQUIRE(plan.decision == ReclaimDecision::kEvict);
  CHECK(plan.node == "n2");
  CHECK(KeysOf(plan.victims) == std::vector<std::string>{"eq1/job-b"});
  CHECK(plan.pdb_violations == 0);
  CHECK_THAT(plan.explanation, Catch::Contains("evicting eq1/job-b (priority 0) on node n2"));
  CHECK_THAT(plan.explanation, Catch::Contains("Insufficient cpu"));
  CHECK(plan.why.code() == StatusCode::kUnschedulable);

  SECTION("an excluded node is not considered") {
    ReclaimOptions options;
    options.excluded_nodes = {"n2"};
    ReclaimPlanForPod elsewhere =
        PlanReclaim(state, state.Normalize(job2), PriorityThenStartTimeOrder(), options);
    // On n1 eq1 stops giving victims at its min after job-a: 3 cpu free is not enough.
    CHECK(elsewhere.decision == ReclaimDecision::kNoCandidate);
  }
  SECTION("a reclaim in flight is not started again") {
    state.Nominate(UidOf(job2), "n2", 120000);
    ReclaimPlanForPod again =
        PlanReclaim(state, state.Normalize(job2), PriorityThenStartTimeOrder(), {});
    CHECK(again.decision == ReclaimDecision::kInFlight);
    CHECK(again.why.message() == reasons::kReclaimInFlight);
  }
}

// Issue 18, point 2, seen on a real cluster: the reclaim for eq2/job-2 was planned while /bind was
// placing eq1/job-b2 (priority 0, 2 cpu) on n2. Counting the reservation as room only, the plan
// evicted job-b and the NoteBook nb-b. A reserved pod is the pod bound to its node (capacity-
// semantics 6, where this case is worked through): job-b and job-b2 make the room, and the
// NoteBooks stay. job-b2 was created before job-b started (it waited): its start for victim
// order is its reservation time, not its creation time.
TEST_CASE("seed 002 with a bind in flight: the reserved pod is a victim, the NoteBook stays",
          "[reclaim_planner][issue18]") {
  constexpr int64_t kReservedMs = 180'000;  // job-b2's bind, after every other pod started
  const testing::PodBuilder job_b2 = MakePod("eq1", "job-b2").Cpu(2000).Created(500);
  ClusterState state = Seed002();
  state.UpsertPod(job_b2);
  state.Reserve(UidOf(job_b2), "n2", kReservedMs, kReservedMs + 60'000);
  // The same state with job-b2 bound to n2, started when it was reserved.
  ClusterState bound = Seed002();
  bound.UpsertPod(testing::PodBuilder(job_b2).Started(kReservedMs).BoundTo("n2"));
  for (ClusterState* s : {&state, &bound}) {
    REQUIRE(s->Used("eq1").Get("cpu") == 10000);
    REQUIRE(s->UsageOf("n2").requested.Get("cpu") == 6000);
  }

  SECTION("job-2 (5 cpu) takes job-b and job-b2") {
    const Pod job2 = MakePod("eq2", "job-2").Cpu(5000).Created(175'000);
    state.UpsertPod(job2);
    bound.UpsertPod(job2);
    const ReclaimPlanForPod plan =
        PlanReclaim(state, state.Normalize(job2), PriorityThenStartTimeOrder(), {});
    REQUIRE(plan.decision == ReclaimDecision::kEvict);
    CHECK(plan.node == "n2");
    CHECK(KeysOf(plan.victims) == std::vector<std::string>{"eq1/job-b", "eq1/job-b2"});
    CHECK(plan.pdb_violations == 0);
    CHECK_THAT(plan.explanation,
               Catch::Contains("evicting eq1/job-b (priority 0), eq1/job-b2 (priority 0, bind in "
                               "flight) on node n2"));
    const ReclaimPlanForPod twin =
        PlanReclaim(bound, bound.Normalize(job2), PriorityThenStartTimeOrder(), {});
    REQUIRE(twin.decision == ReclaimDecision::kEvict);
    CHECK(twin.node == plan.node);
    CHECK(KeysOf(twin.victims) == KeysOf(plan.victims));
    CHECK(twin.pdb_violations == plan.pdb_violations);
  }
  SECTION("a 4-cpu pod needs one victim there: the reserved pod goes before the running job-b") {
    const Pod job3 = MakePod("eq2", "job-3").Cpu(4000).Created(175'000);
    state.UpsertPod(job3);
    bound.UpsertPod(job3);
    for (ClusterState* s : {&state, &bound}) {
      const ReclaimPlanForPod plan =
          PlanReclaim(*s, s->Normalize(job3), PriorityThenStartTimeOrder(), {});
      REQUIRE(plan.decision == ReclaimDecision::kEvict);
      CHECK(plan.node == "n2");
      CHECK(KeysOf(plan.victims) == std::vector<std::string>{"eq1/job-b2"});
    }
  }
}

TEST_CASE("seed 002: a borrower may only preempt lower-priority pods of its namespace",
          "[reclaim_planner]") {
  ClusterState state = Seed002();
  state.DeletePod("uid-eq1-job-b");
  state.UpsertPod(MakePod("eq2", "job-2").Cpu(5000).BoundTo("n2"));
  Pod job_b2 = MakePod("eq1", "job-b2").Cpu(2000);
  state.UpsertPod(job_b2);
  ReclaimPlanForPod plan =
      PlanReclaim(state, state.Normalize(job_b2), PriorityThenStartTimeOrder(), {});
  CHECK(plan.decision == ReclaimDecision::kNoCandidate);
  CHECK(plan.victims.empty());
}

TEST_CASE("PlanReclaim: nothing to do", "[reclaim_planner]") {
  ClusterState state = Seed002();
  SECTION("the pod fits now") {
    ReclaimPlanForPod plan = PlanReclaim(state, state.Normalize(MakePod("eq2", "small").Cpu(1000)),
                                         PriorityThenStartTimeOrder(), {});
    CHECK(plan.decision == ReclaimDecision::kFitsNow);
  }
  SECTION("a namespace without a quota is left to kube-scheduler unless asked") {
    Pod pod = MakePod("free", "p").Cpu(8000).Priority(10);
    CHECK(PlanReclaim(state, state.Normalize(pod), PriorityThenStartTimeOrder(), {}).decision ==
          ReclaimDecision::kNotEligible);
    ReclaimOptions options;
    options.include_pods_without_quota = true;
    // No pod without a quota to preempt.
    CHECK(
        PlanReclaim(state, state.Normalize(pod), PriorityThenStartTimeOrder(), options).decision ==
        ReclaimDecision::kNoCandidate);
  }
  SECTION("preemptionPolicy Never") {
    ReclaimPlanForPod plan =
        PlanReclaim(state, state.Normalize(MakePod("eq2", "never").Cpu(5000).PreemptionNever()),
                    PriorityThenStartTimeOrder(), {});
    CHECK(plan.decision == ReclaimDecision::kNotEligible);
    CHECK(plan.why.message() == reasons::kPreemptionPolicyNever);
  }
  SECTION("a request above max can never be helped") {
    ReclaimPlanForPod plan = PlanReclaim(state, state.Normalize(MakePod("eq2", "huge").Cpu(15000)),
                                         PriorityThenStartTimeOrder(), {});
    CHECK(plan.decision == ReclaimDecision::kNoCandidate);
    CHECK_THAT(plan.why.message(), Catch::Contains("request alone exceeds the max"));
    CHECK(plan.why.code() == StatusCode::kUnschedulableAndUnresolvable);
  }
}

TEST_CASE("ReclaimDecisionName", "[reclaim_planner]") {
  CHECK(std::string(ReclaimDecisionName(ReclaimDecision::kEvict)) == "evict");
  CHECK(std::string(ReclaimDecisionName(ReclaimDecision::kFitsNow)) == "fits-now");
  CHECK(std::string(ReclaimDecisionName(ReclaimDecision::kNotEligible)) == "not-eligible");
  CHECK(std::string(ReclaimDecisionName(ReclaimDecision::kInFlight)) == "in-flight");
  CHECK(std::string(ReclaimDecisionName(ReclaimDecision::kNoCandidate)) == "no-candidate");
}

}  // namespace
}  // namespace reclaim_planner_test
}  // namespace capext
