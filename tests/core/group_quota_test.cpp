// Filter mode's group rule (docs/workloads.md#4-filter-mode) in the shared /filter decision
// path (PodFilter): a pending member of a starting group passes only if the quota admits the
// group's need; the members to hold; held members and surplus members are single pods.
#include "core/group_quota.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "core/placement.h"
#include "tests/support/builders.h"
#include "tests/support/workload_pods.h"

namespace capext {
namespace group_quota_test {
namespace {

using testing::CpuList;
using testing::MakeNode;
using testing::MakePod;
using testing::MakeQuota;
using testing::Member;
using testing::PodGroupOf;

std::string Key(const std::string& name) {
  return StoreKeyOf(MakePod("eq1", name));
}

ClusterState StateWithGang(int64_t max_cpu, int members, int min_member) {
  ClusterState state;
  state.UpsertNode(MakeNode("n1", 100000));
  state.UpsertQuota(MakeQuota("eq1", CpuList(max_cpu), CpuList(max_cpu)));
  state.UpsertPodGroup(PodGroupOf("eq1", "g", min_member));
  for (int i = 0; i < members; ++i) {
    state.UpsertPod(
        Member(MakePod("eq1", "g-" + std::to_string(i)).Cpu(1000).Created(10 + i), "g"));
  }
  return state;
}

TEST_CASE("filter mode: a member passes only when the quota admits the group's need",
          "[workloads][filter]") {
  ClusterState state = StateWithGang(4000, 4, 4);
  state.UpsertPod(MakePod("eq1", "other").Cpu(1000).BoundTo("n1"));
  const NormalizedPod& last = *state.FindPod(Key("g-3"));
  // One pod alone would fit (1 + 1 of 4), the group's 4 do not.
  CHECK(CheckQuota(state, last).ok());
  const PodFilter filter(state, last);
  CHECK(filter.quota().code() == StatusCode::kUnschedulable);
  CHECK(filter.quota().message() ==
        "gang eq1/g: 4 pods need cpu 4: ElasticQuota eq1/eq1 would exceed max: cpu used 1 + "
        "request 4 > max 4");
  CHECK_FALSE(filter.CheckNode("n1").ok());
  CHECK(filter.group_hold().empty());
  // A need above the max alone can never be admitted.
  ClusterState small = StateWithGang(3000, 4, 4);
  const Status never = PodFilter(small, *small.FindPod(Key("g-0"))).quota();
  CHECK(never.code() == StatusCode::kUnschedulableAndUnresolvable);
  CHECK(never.message() ==
        "gang eq1/g: 4 pods need cpu 4: its request alone exceeds the max of ElasticQuota "
        "eq1/eq1: cpu request 4 > max 3");
}

TEST_CASE("filter mode: the first pass names the members to hold; the held siblings then pass",
          "[workloads][filter]") {
  ClusterState state = StateWithGang(4000, 5, 4);  // one more member than minMember
  const NormalizedPod& g3 = *state.FindPod(Key("g-3"));
  std::vector<std::string> hold;
  {
    const PodFilter filter(state, g3);
    REQUIRE(filter.quota().ok());
    hold = filter.group_hold();
  }
  // The pod itself and the 3 oldest other pending members.
  CHECK(hold == std::vector<std::string>{Key("g-3"), Key("g-0"), Key("g-1"), Key("g-2")});
  for (const auto& key : hold)
    state.Hold(key, 100, 100000);
  CHECK(state.Used("eq1").Get("cpu") == 4000);
  CHECK(state.FindGroup(GroupKeyOf(g3))->need() == 0);
  // A held sibling passes on its own hold; the fifth member is a surplus single pod that the
  // quota now refuses.
  CHECK(PodFilter(state, *state.FindPod(Key("g-0"))).quota().ok());
  CHECK(PodFilter(state, *state.FindPod(Key("g-0"))).group_hold().empty());
  const Status surplus = PodFilter(state, *state.FindPod(Key("g-4"))).quota();
  CHECK(surplus.message() ==
        "pod eq1/g-4 rejected: ElasticQuota eq1/eq1 would exceed max: cpu used 4 + request 1 > "
        "max 4");
}

TEST_CASE("filter mode: too few members wait; bound members are already in used",
          "[workloads][filter]") {
  ClusterState few = StateWithGang(100000, 2, 4);
  const Status waits = PodFilter(few, *few.FindPod(Key("g-0"))).quota();
  CHECK(waits.message() == "gang eq1/g: 2 of 4 pods exist");

  ClusterState state = StateWithGang(3000, 4, 4);
  state.UpsertPod(Member(MakePod("eq1", "g-0").Cpu(1000).BoundTo("n1"), "g"));
  state.UpsertPod(Member(MakePod("eq1", "g-1").Cpu(1000).BoundTo("n1"), "g"));
  // need 2: used 2 + request 2 > max 3.
  const Status two = PodFilter(state, *state.FindPod(Key("g-3"))).quota();
  CHECK(two.message() ==
        "gang eq1/g: 2 pods need cpu 2: ElasticQuota eq1/eq1 would exceed max: cpu used 2 + "
        "request 2 > max 3");
  state.UpsertQuota(MakeQuota("eq1", CpuList(4000), CpuList(4000)));
  const PodFilter passes(state, *state.FindPod(Key("g-3")));
  CHECK(passes.quota().ok());
  CHECK(passes.group_hold() == std::vector<std::string>{Key("g-3"), Key("g-2")});
}

TEST_CASE("filter mode: pods without a gang are untouched", "[workloads][filter]") {
  ClusterState state = StateWithGang(3000, 4, 1);  // minMember 1: single pods
  const PodFilter filter(state, *state.FindPod(Key("g-3")));
  CHECK(filter.quota().ok());
  CHECK(filter.group_hold().empty());
}

TEST_CASE("filter mode: a member passes only where every member of the need has a place together",
          "[workloads][filter]") {
  // 4 x 2 cpu, quota room for 10, but one node of 3 cpu: one member would fit, the gang never.
  ClusterState state;
  state.UpsertNode(MakeNode("n1", 3000));
  state.UpsertQuota(MakeQuota("eq1", CpuList(10000), CpuList(10000)));
  state.UpsertPodGroup(PodGroupOf("eq1", "g", 4));
  for (int i = 0; i < 4; ++i)
    state.UpsertPod(
        Member(MakePod("eq1", "g-" + std::to_string(i)).Cpu(2000).Created(10 + i), "g"));
  const PodFilter filter(state, *state.FindPod(Key("g-0")));
  CHECK(filter.quota().code() == StatusCode::kUnschedulable);
  CHECK(filter.quota().message() ==
        "gang eq1/g: 4 pods fit the quota but not the nodes together: 1 of 4 placed");
  CHECK(filter.group_hold().empty());
  // A second node of 4 cpu: 1 on n1 and 2 on n2, still 3 of 4; a third makes room for all.
  state.UpsertNode(MakeNode("n2", 4000));
  CHECK(PodFilter(state, *state.FindPod(Key("g-0"))).quota().message() ==
        "gang eq1/g: 4 pods fit the quota but not the nodes together: 3 of 4 placed");
  state.UpsertNode(MakeNode("n3", 2000));
  const PodFilter passes(state, *state.FindPod(Key("g-0")));
  CHECK(passes.quota().ok());
  CHECK(passes.group_hold().size() == 4);
  // The what-if left the state untouched: nothing reserved, nothing held.
  CHECK(state.reservations().empty());
  CHECK(state.holds().empty());
}

}  // namespace
}  // namespace group_quota_test
}  // namespace capext
