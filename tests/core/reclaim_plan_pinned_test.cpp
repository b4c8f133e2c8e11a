// The plan of a mid-size case, pinned (docs/reclaim-plan.md#2-the-search): 24 full nodes, two
// borrowing quotas with pods of several sizes, priorities and start times, a running gang (its
// surplus and its core are units), PodDisruptionBudgets, a nomination that holds room, and a
// waiting gang of members of two shapes, one of them with a nodeSelector. The search's victims,
// their order, the members' nodes and the steps spent are written out: a change that makes the
// search cheaper must give exactly this answer (issue 21), and one that changes the answer must
// say so here.
#include <fmt/format.h>

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "core/reclaim_plan.h"
#include "tests/support/builders.h"
#include "tests/support/workload_pods.h"

namespace capext {
namespace reclaim_plan_pinned_test {
namespace {

using testing::CpuList;
using testing::MakeNode;
using testing::MakePdb;
using testing::MakePod;
using testing::MakeQuota;
using testing::Member;
using testing::PodGroupOf;

constexpr int kNodes = 24;
constexpr int64_t kNodeCpu = 16'000;

std::string NodeName(int i) {
  return fmt::format("n{:02}", i);
}

// team-a waits (min 40); team-b and team-c borrow nearly all of 384 cpu against a min of 8
// each; spare keeps room in the sum of mins. Nodes n18..n23 are the "gpu" pool. Each node is
// filled in turn with pods of 1 to 4 cpu (team-b and team-c alternating, every fifth at priority
// 100, every seventh of team-b under a PDB that allows no disruption) until under 1 cpu is free;
// team-c's gang job (minMember 3, five 4-cpu pods) runs on n02, n07, n11, n15 and n20; a pending
// team-b pod of priority 100 is nominated to n09 (its room is held).
ClusterState MidSizeCluster() {
  ClusterState state;
  state.UpsertQuota(MakeQuota("team-a", CpuList(40'000), CpuList(64'000)));
  state.UpsertQuota(MakeQuota("team-b", CpuList(8'000), CpuList(400'000)));
  state.UpsertQuota(MakeQuota("team-c", CpuList(8'000), CpuList(400'000)));
  state.UpsertQuota(MakeQuota("spare", CpuList(400'000), CpuList(400'000)));
  std::vector<int64_t> free(kNodes, kNodeCpu);
  for (int i = 0; i < kNodes; ++i) {
    Node node = MakeNode(NodeName(i), kNodeCpu);
    if (i >= 18) node.labels["pool"] = "gpu";
    state.UpsertNode(node);
  }
  state.UpsertPodGroup(PodGroupOf("team-c", "job", 3));
  const int job_nodes[] = {2, 7, 11, 15, 20};
  for (int k = 0; k < 5; ++k) {
    state.UpsertPod(Member(MakePod("team-c", fmt::format("job-{}", k))
                               .Cpu(4'000)
                               .BoundTo(NodeName(job_nodes[k]))
                               .Started(500 + 37 * k),
                           "job"));
    free[static_cast<std::size_t>(job_nodes[k])] -= 4'000;
  }
  state.UpsertPod(MakePod("team-b", "nominated").Cpu(4'000).Priority(100).Created(90'000));
  state.Nominate(state.FindPodByName("team-b", "nominated")->store_key(), NodeName(9), 1'000'000);
  state.UpsertPdb(MakePdb("team-b", "db", {{"app", "db"}}, 0));
  int index = 0;
  for (int i = 0; i < kNodes; ++i) {
    for (auto& room = free[static_cast<std::size_t>(i)]; room >= 1'000; ++index) {
      const int64_t cpu = std::min<int64_t>(room, 1'000 * (1 + (index * 5 + i) % 4));
      const bool b = index % 2 == 0;
      auto pod = MakePod(b ? "team-b" : "team-c", fmt::format("{}{}", b ? "b" : "c", index))
                     .Cpu(cpu)
                     .BoundTo(NodeName(i))
                     .Priority(index % 5 == 0 ? 100 : 0)
                     .Started(1'000 + (index * 7919) % 10'007);
      if (b && index % 7 == 0) pod.Label("app", "db");
      state.UpsertPod(pod);
      room -= cpu;
    }
  }
  state.UpsertPodGroup(PodGroupOf("team-a", "train", 6));
  for (int k = 0; k < 6; ++k) {
    auto pod = MakePod("team-a", fmt::format("w-{}", k)).Cpu(k < 4 ? 5'000 : 3'000);
    if (k == 5) pod.NodeSelector("pool", "gpu");
    state.UpsertPod(Member(pod.Priority(50).Created(100'000 + k), "train"));
  }
  return state;
}

std::vector<std::string> Names(const std::vector<const NormalizedPod*>& pods) {
  std::vector<std::string> out;
  for (const NormalizedPod* p : pods)
    out.push_back(p->name);
  return out;
}

TEST_CASE("a mid-size plan, pinned: victims, their order, the members' nodes and the steps",
          "[reclaim-plan]") {
  const ClusterState state = MidSizeCluster();
  const ReclaimPlan plan =
      SearchReclaimPlan(state, *state.FindPodByName("team-a", "w-0"), PriorityThenStartTimeOrder());
  INFO(plan.why.message());
  REQUIRE(plan.found());
  const std::vector<std::string> victims = Names(plan.Victims());
  INFO("victims: " << fmt::format("{}", fmt::join(victims, " ")));
  INFO("nodes: " << fmt::format("{}", fmt::join(plan.nodes, " ")));
  INFO("steps: " << plan.steps);
  CHECK(Names(plan.members) == std::vector<std::string>{"w-0", "w-1", "w-2", "w-3", "w-4", "w-5"});
  // team-c's surplus members first (their gang keeps its minMember), then single borrowers, in
  // eviction order; w-5 (nodeSelector pool=gpu) in the gpu pool.
  CHECK(victims == std::vector<std::string>{"job-4", "job-3", "b24", "b72", "c53", "c101", "b34",
                                            "b58", "c39", "b68"});
  CHECK(plan.nodes == std::vector<std::string>{"n05", "n08", "n10", "n15", "n03", "n20"});
  REQUIRE(plan.units.size() == 10);
  CHECK(plan.units[0].kind == VictimUnitKind::kSurplus);
  CHECK(plan.units[1].kind == VictimUnitKind::kSurplus);
  CHECK(plan.units[2].kind == VictimUnitKind::kSingle);
  CHECK(plan.pdb_violations == 0);
  CHECK(plan.steps == 471);
}

}  // namespace
}  // namespace reclaim_plan_pinned_test
}  // namespace capext
