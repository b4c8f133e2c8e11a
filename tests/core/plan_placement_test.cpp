// PlanPlacement on PlanWhatIf (docs/reclaim-plan.md#the-what-if-and-the-placement) against
// PlaceTogether on a copy of the state with the same pods deleted: on random small clusters
// (nodes of random size, some unschedulable or labelled, bound pods, pending pods nominated with
// random priorities, members of random shapes, some with a nodeSelector), a first placement and
// then a sequence of put-backs (Refit, undone when it fails, as the search does) must give the
// nodes the full first fit gives, and the same "placed" count when it fails.
#include <fmt/format.h>

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "core/group_placement.h"
#include "core/plan_placement.h"
#include "core/plan_what_if.h"
#include "tests/support/builders.h"
#include "tests/support/seeded_random.h"

namespace capext::testing {
namespace plan_placement_test {
namespace {

struct Reference {
  std::vector<std::string> nodes;  // empty: no placement
  int placed = 0;
};

// The full first fit on a copy of `state` without `removed`.
Reference FullRun(const ClusterState& state, const std::vector<const NormalizedPod*>& removed,
                  const std::vector<std::string>& members) {
  ClusterState copy(state);
  for (const NormalizedPod* pod : removed)
    copy.DeletePod(pod->store_key());
  Reference out;
  if (auto nodes = PlaceTogether(&copy, members, 0, &out.placed)) out.nodes = std::move(*nodes);
  return out;
}

std::vector<std::string> NamesOf(const PlanWhatIf& what_if, const PlanPlacement& placement) {
  std::vector<std::string> out;
  for (const int node : placement.nodes())
    out.push_back(what_if.record(node).name);
  return out;
}

TEST_CASE("plan placement: a put-back's re-placement is the full first fit", "[plan_placement]") {
  int compared = 0, refits_failed = 0, moved = 0;
  for (uint64_t seed = 1; seed <= 300; ++seed) {
    SeededRandom r(seed * 104729 + 11);
    ClusterState s;
    const int node_count = r.Between(2, 6);
    for (int n = 0; n < node_count; ++n) {
      Node node =
          MakeNode(fmt::format("n{}", n), 1000 * r.Between(2, 8), 64 * kGi,
                   r.Below(4) == 0 ? std::optional<int64_t>(3) : std::optional<int64_t>(110));
      if (r.Below(6) == 0) node.unschedulable = true;
      if (r.Below(2) == 0) node.labels["zone"] = "a";
      s.UpsertNode(node);
    }
    std::vector<std::string> bound;
    for (int p = 0; p < node_count * 3; ++p) {
      const std::string name = fmt::format("b{}", p);
      s.UpsertPod(MakePod("other", name)
                      .Cpu(500 * r.Between(1, 4))
                      .BoundTo(fmt::format("n{}", r.Below(node_count))));
      bound.push_back(StoreKeyOf(*s.FindPodByName("other", name)));
    }
    for (int p = 0; p < r.Below(3); ++p) {
      s.UpsertPod(MakePod("other", fmt::format("nominated{}", p))
                      .Cpu(500 * r.Between(1, 3))
                      .Priority(r.Between(-1, 1))
                      .NominatedTo(fmt::format("n{}", r.Below(node_count))));
    }
    std::vector<std::string> keys;
    std::vector<const NormalizedPod*> members;
    const int member_count = r.Between(1, 4);
    for (int m = 0; m < member_count; ++m) {
      PodBuilder pod = MakePod("team", fmt::format("w{}", m)).Cpu(500 * r.Between(1, 4));
      if (r.Below(4) == 0) pod.NodeSelector("zone", "a");
      s.UpsertPod(pod);
    }
    for (int m = 0; m < member_count; ++m) {
      members.push_back(s.FindPodByName("team", fmt::format("w{}", m)));
      keys.push_back(members.back()->store_key());
    }

    PlanWhatIf what_if(s);
    PlanPlacement placement(&what_if, members);
    // Remove every bound pod, then put them back one at a time, in a random order.
    std::vector<const NormalizedPod*> removed;
    for (const std::string& key : bound)
      removed.push_back(s.FindPod(key));
    for (const NormalizedPod* pod : removed)
      what_if.Remove({pod}, {what_if.NodeOf(*pod)});
    int placed = 0;
    bool holds = placement.PlaceFrom(0, &placed);
    Reference ref = FullRun(s, removed, keys);
    REQUIRE(holds == !ref.nodes.empty());
    REQUIRE(placed == ref.placed);
    if (!holds) continue;
    REQUIRE(NamesOf(what_if, placement) == ref.nodes);
    for (std::size_t i = removed.size(); i > 1; --i) {
      std::swap(removed[static_cast<std::size_t>(r.Below(static_cast<int>(i)))], removed[i - 1]);
    }
    std::vector<const NormalizedPod*> out;  // put back and failed: removed for good
    const auto gone = [&] {
      std::vector<const NormalizedPod*> all = removed;
      all.insert(all.end(), out.begin(), out.end());
      return all;
    };
    while (!removed.empty()) {
      const NormalizedPod* pod = removed.back();
      removed.pop_back();
      const std::vector<int> nodes{what_if.NodeOf(*pod)};
      what_if.Restore({pod}, nodes);
      const std::vector<int> before = placement.nodes();
      int64_t checked = 0;
      holds = placement.Refit(nodes, &placed, &checked);
      ref = FullRun(s, gone(), keys);
      REQUIRE(holds == !ref.nodes.empty());
      ++compared;
      if (holds) {
        REQUIRE(NamesOf(what_if, placement) == ref.nodes);
        moved += placement.nodes() != before ? 1 : 0;
        continue;
      }
      REQUIRE(placed == ref.placed);
      ++refits_failed;
      // The search's way: the room given back, the placement before restored.
      placement.Undo();
      what_if.Remove({pod}, nodes);
      out.push_back(pod);
      REQUIRE(placement.nodes() == before);
      REQUIRE(NamesOf(what_if, placement) == FullRun(s, gone(), keys).nodes);
    }
  }
  std::printf("plan placement: %d put-backs compared, %d moved members, %d failed\n", compared,
              moved, refits_failed);
  CHECK(compared > 500);
  CHECK(moved > 50);
  CHECK(refits_failed > 50);
}

}  // namespace
}  // namespace plan_placement_test
}  // namespace capext::testing
