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
  ReclaimPlanForPod plan = PlanReclaim(state, state.Normalize(job2), MoreImportantPod, {});
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
        PlanReclaim(state, state.Normalize(job2), MoreImportantPod, options);
    // On n1 eq1 stops giving victims at its min after job-a: 3 cpu free is not enough.
    CHECK(elsewhere.decision == ReclaimDecision::kNoCandidate);
  }
  SECTION("a reclaim in flight is not started again") {
    state.Nominate(UidOf(job2), "n2", 120000);
    ReclaimPlanForPod again = PlanReclaim(state, state.Normalize(job2), MoreImportantPod, {});
    CHECK(again.decision == ReclaimDecision::kInFlight);
    CHECK(again.why.message() == reasons::kReclaimInFlight);
  }
}

TEST_CASE("seed 002: a borrower may only preempt lower-priority pods of its namespace",
          "[reclaim_planner]") {
  ClusterState state = Seed002();
  state.DeletePod("uid-eq1-job-b");
  state.UpsertPod(MakePod("eq2", "job-2").Cpu(5000).BoundTo("n2"));
  Pod job_b2 = MakePod("eq1", "job-b2").Cpu(2000);
  state.UpsertPod(job_b2);
  ReclaimPlanForPod plan = PlanReclaim(state, state.Normalize(job_b2), MoreImportantPod, {});
  CHECK(plan.decision == ReclaimDecision::kNoCandidate);
  CHECK(plan.victims.empty());
}

TEST_CASE("PlanReclaim: nothing to do", "[reclaim_planner]") {
  ClusterState state = Seed002();
  SECTION("the pod fits now") {
    ReclaimPlanForPod plan = PlanReclaim(state, state.Normalize(MakePod("eq2", "small").Cpu(1000)),
                                         MoreImportantPod, {});
    CHECK(plan.decision == ReclaimDecision::kFitsNow);
  }
  SECTION("a namespace without a quota is left to kube-scheduler unless asked") {
    Pod pod = MakePod("free", "p").Cpu(8000).Priority(10);
    CHECK(PlanReclaim(state, state.Normalize(pod), MoreImportantPod, {}).decision ==
          ReclaimDecision::kNotEligible);
    ReclaimOptions options;
    options.include_pods_without_quota = true;
    // No pod without a quota to preempt.
    CHECK(PlanReclaim(state, state.Normalize(pod), MoreImportantPod, options).decision ==
          ReclaimDecision::kNoCandidate);
  }
  SECTION("preemptionPolicy Never") {
    ReclaimPlanForPod plan =
        PlanReclaim(state, state.Normalize(MakePod("eq2", "never").Cpu(5000).PreemptionNever()),
                    MoreImportantPod, {});
    CHECK(plan.decision == ReclaimDecision::kNotEligible);
    CHECK(plan.why.message() == reasons::kPreemptionPolicyNever);
  }
  SECTION("a request above max can never be helped") {
    ReclaimPlanForPod plan = PlanReclaim(state, state.Normalize(MakePod("eq2", "huge").Cpu(15000)),
                                         MoreImportantPod, {});
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
}  // namespace capext
