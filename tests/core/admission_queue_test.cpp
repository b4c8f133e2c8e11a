// Gate mode's admission queue (docs/workloads.md#3-gate-mode-the-admission-queue): units,
// order, all or nothing, quota and placement both required, the what-if between units, reasons
// with numbers, timeouts.
#include "core/admission_queue.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "tests/support/builders.h"
#include "tests/support/workload_pods.h"

namespace capext {
namespace admission_queue_test {
namespace {

using testing::AdmittedAt;
using testing::CpuList;
using testing::Gated;
using testing::MakeNode;
using testing::MakePod;
using testing::MakeQuota;
using testing::Member;
using testing::PodGroupOf;

std::string Key(const std::string& name) {
  return StoreKeyOf(MakePod("eq1", name));
}

void AddGang(ClusterState* state, const std::string& group, int pods, int64_t created,
             int64_t cpu = 1000, int32_t priority = 0) {
  state->UpsertPodGroup(PodGroupOf("eq1", group, pods));
  for (int i = 0; i < pods; ++i) {
    state->UpsertPod(Gated(Member(MakePod("eq1", group + "-" + std::to_string(i))
                                      .Cpu(cpu)
                                      .Priority(priority)
                                      .Created(created + i),
                                  group)));
  }
}

TEST_CASE("two 4-pod gangs with room for 6: one admitted whole, the other waits with numbers",
          "[workloads][admission]") {
  ClusterState state;
  state.UpsertNode(MakeNode("n1", 4000));
  state.UpsertNode(MakeNode("n2", 4000));
  state.UpsertQuota(MakeQuota("eq1", CpuList(6000), CpuList(6000)));
  AddGang(&state, "a", 4, 100);
  AddGang(&state, "b", 4, 200);
  const AdmissionRound round = PlanAdmissions(state, {}, 1000);
  REQUIRE(round.admit.size() == 1);
  CHECK(round.admit[0].kind == AdmissionUnitKind::kGroup);
  CHECK(round.admit[0].group.name == "a");
  CHECK(round.admit[0].pods ==
        std::vector<std::string>{Key("a-0"), Key("a-1"), Key("a-2"), Key("a-3")});
  CHECK(round.admit[0].nodes.size() == 4);
  REQUIRE(round.waiting.size() == 4);
  const AdmissionWait& wait = round.waiting.at(Key("b-0"));
  CHECK(wait.reason == AdmissionWaitReason::kQuotaExceeded);
  CHECK(wait.message ==
        "gang eq1/b: 4 pods need cpu 4: ElasticQuota eq1/eq1 would exceed max: cpu used 4 + "
        "request 4 > max 6");
  // Once a's pods are admitted (derived holds), b still waits: never 3 + 3.
  for (int i = 0; i < 4; ++i) {
    state.UpsertPod(AdmittedAt(
        Member(MakePod("eq1", "a-" + std::to_string(i)).Cpu(1000).Created(100 + i), "a"), 1000));
  }
  const AdmissionRound next = PlanAdmissions(state, {}, 2000);
  CHECK(next.admit.empty());
  CHECK(next.waiting.at(Key("b-3")).message ==
        "gang eq1/b: 4 pods need cpu 4: ElasticQuota eq1/eq1 would exceed max: cpu used 4 + "
        "request 4 > max 6");
}

// docs/workloads.md#2-holds-quota-without-a-node, a gate removal in flight: the loop's held pods
// still carry the gate.
TEST_CASE("held pods whose gate removal is in flight are admitted: not a unit again, room taken",
          "[workloads][admission]") {
  ClusterState state;
  state.UpsertNode(MakeNode("n1", 4000));
  state.UpsertNode(MakeNode("n2", 4000));
  state.UpsertQuota(MakeQuota("eq1", CpuList(6000), CpuList(6000)));
  AddGang(&state, "a", 4, 100);
  AddGang(&state, "b", 4, 200);
  state.UpsertPod(Gated(MakePod("eq1", "single").Cpu(1000).Created(300)));
  // The loop held a's four members and its patches are in flight: the pods are still gated.
  for (int i = 0; i < 4; ++i)
    state.Hold(Key("a-" + std::to_string(i)), 1000, 60'000);
  const AdmissionRound round = PlanAdmissions(state, {}, 1500);
  // a is not admitted again; b waits on the held room (4 + 4 > 6); the single fits (4 + 1 <= 6).
  REQUIRE(round.admit.size() == 1);
  CHECK(round.admit[0].pods == std::vector<std::string>{Key("single")});
  CHECK(round.waiting.count(Key("a-0")) == 0);
  CHECK(round.waiting.at(Key("b-0")).message ==
        "gang eq1/b: 4 pods need cpu 4: ElasticQuota eq1/eq1 would exceed max: cpu used 4 + "
        "request 4 > max 6");
  const GroupView* a = state.FindGroup(testing::CoschedulingKey("eq1", "a"));
  REQUIRE(a != nullptr);
  CHECK(a->admitted == 4);
  CHECK(a->gated == 0);
  CHECK(a->need() == 0);
}

TEST_CASE("a gang needs placement as well as quota; each member takes its room",
          "[workloads][admission]") {
  ClusterState state;
  state.UpsertNode(MakeNode("n1", 2000));
  state.UpsertNode(MakeNode("n2", 1500));
  state.UpsertQuota(MakeQuota("eq1", CpuList(100000), CpuList(100000)));
  AddGang(&state, "g", 3, 100);  // 3 x 1 cpu: n1 takes 2, n2 one; fits
  AddGang(&state, "h", 2, 200);  // then 0.5 cpu left on n2: places nothing
  const AdmissionRound round = PlanAdmissions(state, {}, 1000);
  REQUIRE(round.admit.size() == 1);
  CHECK(round.admit[0].nodes == std::vector<std::string>{"n1", "n1", "n2"});
  const AdmissionWait& wait = round.waiting.at(Key("h-0"));
  CHECK(wait.reason == AdmissionWaitReason::kNoPlacement);
  CHECK(wait.message ==
        "gang eq1/h: 2 pods fit the quota but not the nodes together: 0 of 2 placed");
  // Without the placement rule, the quota alone decides.
  AdmissionOptions quota_only;
  quota_only.require_placement = false;
  CHECK(PlanAdmissions(state, quota_only, 1000).admit.size() == 2);
}

TEST_CASE("singles go in priority then creation order; the what-if stops overshoot; FIFO skips",
          "[workloads][admission]") {
  ClusterState state;
  state.UpsertNode(MakeNode("n1", 100000));
  state.UpsertQuota(MakeQuota("eq1", CpuList(3000), CpuList(3000)));
  state.UpsertPod(Gated(MakePod("eq1", "old").Cpu(1000).Created(1)));
  state.UpsertPod(Gated(MakePod("eq1", "big").Cpu(5000).Created(2)));  // can never go
  state.UpsertPod(Gated(MakePod("eq1", "new").Cpu(1000).Created(3)));
  state.UpsertPod(Gated(MakePod("eq1", "vip").Cpu(1000).Created(4).Priority(10)));
  state.UpsertPod(Gated(MakePod("eq1", "last").Cpu(1000).Created(5)));
  const AdmissionRound round = PlanAdmissions(state, {}, 1000);
  std::vector<std::string> admitted;
  for (const auto& unit : round.admit) {
    CHECK(unit.kind == AdmissionUnitKind::kSingle);
    admitted.push_back(unit.pods.front());
  }
  CHECK(admitted == std::vector<std::string>{Key("vip"), Key("old"), Key("new")});
  CHECK(round.waiting.at(Key("big")).reason == AdmissionWaitReason::kQuotaNever);
  CHECK(round.waiting.at(Key("last")).message ==
        "pod eq1/last rejected: ElasticQuota eq1/eq1 would exceed max: cpu used 3 + request 1 > "
        "max 3");
}

TEST_CASE("a gang's priority is its highest member's; surplus members go as singles after",
          "[workloads][admission]") {
  ClusterState state;
  state.UpsertNode(MakeNode("n1", 100000));
  state.UpsertQuota(MakeQuota("eq1", CpuList(4000), CpuList(4000)));
  state.UpsertPod(Gated(MakePod("eq1", "single").Cpu(2000).Created(1).Priority(5)));
  AddGang(&state, "g", 3, 100);
  state.UpsertPod(Gated(Member(MakePod("eq1", "g-vip").Cpu(1000).Created(200).Priority(9), "g")));
  const AdmissionRound round = PlanAdmissions(state, {}, 1000);
  // The gang (priority 9, from g-vip) before the older single of priority 5: 3 cpu of 4; then
  // the single's 2 no longer fit.
  REQUIRE(round.admit.size() == 1);
  CHECK(round.admit[0].group.name == "g");
  CHECK(round.admit[0].pods == std::vector<std::string>{Key("g-0"), Key("g-1"), Key("g-2")});
  CHECK(round.admit[0].priority == 9);
  CHECK(round.waiting.at(Key("single")).reason == AdmissionWaitReason::kQuotaExceeded);

  // Once the gang is running with its minMember, the fourth member is a surplus unit.
  ClusterState running;
  running.UpsertNode(MakeNode("n1", 100000));
  running.UpsertQuota(MakeQuota("eq1", CpuList(4000), CpuList(4000)));
  running.UpsertPodGroup(PodGroupOf("eq1", "g", 3));
  for (int i = 0; i < 3; ++i) {
    running.UpsertPod(
        Member(MakePod("eq1", "g-" + std::to_string(i)).Cpu(1000).BoundTo("n1").Started(i), "g"));
  }
  running.UpsertPod(Gated(Member(MakePod("eq1", "g-3").Cpu(1000).Created(9), "g")));
  running.UpsertPod(Gated(Member(MakePod("eq1", "g-4").Cpu(1000).Created(10), "g")));
  const AdmissionRound surplus = PlanAdmissions(running, {}, 1000);
  REQUIRE(surplus.admit.size() == 1);
  CHECK(surplus.admit[0].kind == AdmissionUnitKind::kSurplus);
  CHECK(surplus.admit[0].pods == std::vector<std::string>{Key("g-3")});
  CHECK(surplus.waiting.at(Key("g-4")).reason == AdmissionWaitReason::kQuotaExceeded);
}

TEST_CASE("a gang with too few members waits; other gates wait", "[workloads][admission]") {
  ClusterState state;
  state.UpsertNode(MakeNode("n1", 100000));
  state.UpsertQuota(MakeQuota("eq1", CpuList(100000), CpuList(100000)));
  state.UpsertPodGroup(PodGroupOf("eq1", "g", 4));
  state.UpsertPod(Gated(Member(MakePod("eq1", "g-0").Cpu(1000), "g")));
  state.UpsertPod(Gated(Member(MakePod("eq1", "g-1").Cpu(1000), "g")));
  Pod other = Gated(MakePod("eq1", "o").Cpu(1000));
  other.other_gates = true;
  state.UpsertPod(other);
  const AdmissionRound round = PlanAdmissions(state, {}, 1000);
  CHECK(round.admit.empty());
  CHECK(round.waiting.at(Key("g-0")).reason == AdmissionWaitReason::kGangIncomplete);
  CHECK(round.waiting.at(Key("g-1")).message == "gang eq1/g: 2 of 4 pods exist");
  CHECK(round.waiting.at(Key("o")).reason == AdmissionWaitReason::kOtherGates);
}

TEST_CASE("a starting group past its timeout: members with a controller evicted, others reported",
          "[workloads][admission]") {
  ClusterState state;
  state.UpsertNode(MakeNode("n1", 100000));
  state.UpsertQuota(MakeQuota("eq1", CpuList(100000), CpuList(100000)));
  state.UpsertPodGroup(PodGroupOf("eq1", "g", 3, 60000));
  state.UpsertPod(
      AdmittedAt(Member(MakePod("eq1", "g-0").Cpu(1000).BoundTo("n1").Started(1500), "g"), 1000));
  state.UpsertPod(AdmittedAt(Member(MakePod("eq1", "g-1").Cpu(1000), "g"), 1000));
  Pod orphan = AdmittedAt(Member(MakePod("eq1", "g-2").Cpu(1000), "g"), 1000);
  orphan.has_controller = false;
  state.UpsertPod(orphan);
  CHECK(PlanAdmissions(state, {}, 60999).timed_out.empty());
  const AdmissionRound round = PlanAdmissions(state, {}, 61000);
  REQUIRE(round.timed_out.size() == 1);
  const GroupTimeout& t = round.timed_out[0];
  CHECK(t.timeout_ms == 60000);
  CHECK(t.admitted_ms == 1000);
  CHECK(t.evict == std::vector<std::string>{Key("g-0"), Key("g-1")});
  CHECK(t.reported == std::vector<std::string>{Key("g-2")});
  CHECK(t.release_holds == std::vector<std::string>{Key("g-1"), Key("g-2")});
  // The configured default applies without the object's timeout; a complete group never times out.
  state.UpsertPodGroup(PodGroupOf("eq1", "g", 3, 0));
  AdmissionOptions options;
  options.default_group_timeout_ms = 200000;
  CHECK(PlanAdmissions(state, options, 61000).timed_out.empty());
  CHECK(PlanAdmissions(state, options, 201000).timed_out.size() == 1);
  state.UpsertPodGroup(PodGroupOf("eq1", "g", 1, 0));
  CHECK(PlanAdmissions(state, options, 201000).timed_out.empty());
}

}  // namespace
}  // namespace admission_queue_test
}  // namespace capext
