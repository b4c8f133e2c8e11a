// Victim units (docs/workloads.md#5-victim-units-and-their-order): surplus members before single
// pods before group cores at equal priority, a core's priority its highest member's, a core
// taken whole (on every node) or not at all, never leaving a group below its minMember.
#include "core/victim_unit.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "core/victim_selection.h"
#include "tests/support/builders.h"
#include "tests/support/workload_pods.h"

namespace capext {
namespace victim_unit_test {
namespace {

using testing::CpuList;
using testing::MakeNode;
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

// online (min 4) runs 2 x 1 cpu; train (min 2, max 10) runs `train` pods; spare (min 10) makes
// the sum of mins roomy. One node of 8 cpu, full.
ClusterState Cluster(bool grouped) {
  ClusterState state;
  state.UpsertNode(MakeNode("n1", 8000));
  state.UpsertQuota(MakeQuota("online", CpuList(4000), CpuList(8000)));
  state.UpsertQuota(MakeQuota("train", CpuList(2000), CpuList(10000)));
  state.UpsertQuota(MakeQuota("spare", CpuList(10000), CpuList(10000)));
  for (int i = 0; i < 2; ++i) {
    state.UpsertPod(MakePod("online", "o" + std::to_string(i)).Cpu(1000).BoundTo("n1").Started(0));
  }
  if (grouped) state.UpsertPodGroup(PodGroupOf("train", "job", 3));
  for (int i = 1; i <= 5; ++i) {
    Pod pod = MakePod("train", "w" + std::to_string(i)).Cpu(1000).BoundTo("n1").Started(i);
    state.UpsertPod(grouped ? Member(pod, "job") : pod);
  }
  state.UpsertPod(MakePod("train", "solo").Cpu(1000).BoundTo("n1").Started(10));
  return state;
}

NodeVictims Victims(const ClusterState& state, const NormalizedPod& preemptor,
                    const std::string& node = "n1") {
  const PreemptorContext ctx = MakePreemptorContext(state, preemptor);
  return SelectVictimsOnNode(state, ctx, *state.FindNode(node), PriorityThenStartTimeOrder());
}

TEST_CASE("an elastic job gives up its surplus before a single pod and before its core",
          "[workloads][victims]") {
  const ClusterState grouped = Cluster(true);
  const NormalizedPod online = grouped.Normalize(MakePod("online", "new").Cpu(2000));
  const NodeVictims v = Victims(grouped, online);
  REQUIRE(v.candidate);
  // w4, w5 are the surplus (the 3 earliest started are the core); solo, the most recently
  // started single pod, stays.
  CHECK(Names(v.victims) == std::vector<std::string>{"w4", "w5"});
  // Without the group the most recently started go first.
  const ClusterState flat = Cluster(false);
  const NodeVictims f = Victims(flat, flat.Normalize(MakePod("online", "new").Cpu(2000)));
  CHECK(Names(f.victims) == std::vector<std::string>{"w5", "solo"});
}

TEST_CASE("a core is taken whole or not at all: never below minMember", "[workloads][victims]") {
  // train runs exactly its 3-pod core (used 3 against min 2: it borrows 1 cpu).
  ClusterState state;
  state.UpsertNode(MakeNode("n1", 4000));
  state.UpsertQuota(MakeQuota("online", CpuList(4000), CpuList(8000)));
  state.UpsertQuota(MakeQuota("train", CpuList(2000), CpuList(10000)));
  state.UpsertPod(MakePod("online", "o").Cpu(1000).BoundTo("n1"));
  state.UpsertPodGroup(PodGroupOf("train", "job", 3));
  for (int i = 1; i <= 3; ++i) {
    state.UpsertPod(Member(
        MakePod("train", "w" + std::to_string(i)).Cpu(1000).BoundTo("n1").Started(i), "job"));
  }
  const NormalizedPod online = state.Normalize(MakePod("online", "new").Cpu(1000));
  const NodeVictims v = Victims(state, online);
  CHECK_FALSE(v.candidate);
  CHECK(v.victims.empty());
  // As single pods one would go (train borrows 1).
  state.UpsertPodGroup(PodGroupOf("train", "job", 1));
  CHECK(Names(Victims(state, online).victims) == std::vector<std::string>{"w3"});
}

TEST_CASE("a core takes its members on every node; its priority is its highest member's",
          "[workloads][victims]") {
  ClusterState state;
  state.UpsertNode(MakeNode("n1", 2000));
  state.UpsertNode(MakeNode("n2", 2000));
  state.UpsertQuota(MakeQuota("online", CpuList(8000), CpuList(8000)));
  state.UpsertQuota(MakeQuota("train", CpuList(0), CpuList(10000)));
  state.UpsertPodGroup(PodGroupOf("train", "job", 2));
  state.UpsertPod(Member(MakePod("train", "a").Cpu(2000).BoundTo("n1").Started(1), "job"));
  state.UpsertPod(
      Member(MakePod("train", "b").Cpu(1000).BoundTo("n2").Started(2).Priority(5), "job"));
  state.UpsertPod(MakePod("train", "s").Cpu(1000).BoundTo("n2").Started(3).Priority(3));
  const NormalizedPod online = state.Normalize(MakePod("online", "new").Cpu(2000));
  const NodeVictims v = Victims(state, online, "n1");
  REQUIRE(v.candidate);
  CHECK(Names(v.victims) == std::vector<std::string>{"b", "a"});
  // On n2 the single pod (priority 3) goes before the core (priority 5, from b) even though a
  // (priority 0) is in the core.
  const NodeVictims n2 = Victims(state, state.Normalize(MakePod("online", "n").Cpu(1000)), "n2");
  CHECK(Names(n2.victims) == std::vector<std::string>{"s"});
  const VictimUnit core = VictimUnitOf(state, *state.FindPod(StoreKeyOf(MakePod("train", "a"))));
  CHECK(core.kind == VictimUnitKind::kCore);
  CHECK(core.priority == 5);
  CHECK(Names(core.pods) == std::vector<std::string>{"b", "a"});
}

TEST_CASE("the unit order: priority, then surplus < single < core, then the pod order",
          "[workloads][victims]") {
  ClusterState state;
  state.UpsertNode(MakeNode("n1", 100000));
  auto unit = [](VictimUnitKind kind, int32_t priority, const NormalizedPod* rep) {
    VictimUnit u;
    u.kind = kind;
    u.priority = priority;
    u.representative = rep;
    u.pods = {rep};
    return u;
  };
  state.UpsertPod(MakePod("ns", "early").BoundTo("n1").Started(1));
  state.UpsertPod(MakePod("ns", "late").BoundTo("n1").Started(2));
  const NormalizedPod* early = state.FindPod(StoreKeyOf(MakePod("ns", "early")));
  const NormalizedPod* late = state.FindPod(StoreKeyOf(MakePod("ns", "late")));
  auto before = [](const VictimUnit& a, const VictimUnit& b) {
    return VictimUnitBefore(a, b, PriorityThenStartTimeOrder());
  };
  CHECK(before(unit(VictimUnitKind::kCore, 0, early), unit(VictimUnitKind::kSurplus, 1, early)));
  CHECK(before(unit(VictimUnitKind::kSurplus, 1, early), unit(VictimUnitKind::kSingle, 1, late)));
  CHECK(before(unit(VictimUnitKind::kSingle, 1, early), unit(VictimUnitKind::kCore, 1, late)));
  CHECK(before(unit(VictimUnitKind::kSingle, 1, late), unit(VictimUnitKind::kSingle, 1, early)));
  CHECK_FALSE(
      before(unit(VictimUnitKind::kSingle, 1, early), unit(VictimUnitKind::kSingle, 1, late)));
}

}  // namespace
}  // namespace victim_unit_test
}  // namespace capext
