// The two placement searches of core/placement_search.h decide alike: DensePlacement::Find (and
// ScanNodes, the simulator's call) equals FindPlacement for random starts, limits and scorings, on
// random states and through random changes of the state, with one DensePlacement kept across the
// changes (its memoised masks and scores must follow them).
#include "core/placement_search.h"

#include <fmt/format.h>
#include <catch2/catch.hpp>

#include "tests/support/random_changes.h"

namespace capext {
namespace placement_search_test {
namespace {

using testing::RandomChanges;
using testing::RandomCluster;

std::string Describe(const PlacementResult& r) {
  if (!r.quota.ok())
    return fmt::format("quota {}: {}", StatusCodeName(r.quota.code()), r.quota.message());
  return fmt::format("best {} feasible [{}] examined {}", r.best, fmt::join(r.feasible, ","),
                     r.examined);
}

PlacementQuery RandomQuery(testing::SeededRandom& rng, int total) {
  PlacementQuery q;
  q.start = total > 0 ? rng.Below(total) : 0;
  switch (rng.Below(4)) {
    case 0:
      break;  // every node
    case 1:
      q.limit = 1;
      break;
    default:
      q.limit = static_cast<std::size_t>(rng.Between(1, std::max(1, total)));
  }
  q.scoring =
      rng.Pick({NodeScoring::kLeastAllocated, NodeScoring::kMostAllocated, NodeScoring::kNone});
  return q;
}

}  // namespace

TEST_CASE("DensePlacement equals FindPlacement through random changes",
          "[core][dense][placement]") {
  int64_t compared = 0, feasible_found = 0, limited = 0;
  for (uint64_t seed = 1; seed <= 150; ++seed) {
    RandomCluster gen(seed);
    const testing::ClusterCase c = gen.Generate();
    ClusterState state;
    testing::BuildDenseState(gen, c, &state);
    DensePlacement placement(state);  // kept across every change below
    RandomChanges changes(&gen, c.decode_options());
    std::string last_change = "none";
    for (int step = 0; step <= 30; ++step) {
      if (step > 0) last_change = changes.Apply(&state);
      const int total = static_cast<int>(state.nodes().size());
      for (int k = 0; k < 4; ++k) {
        const NormalizedPod pod = testing::QuestionFor(gen, state, c.decode_options());
        // An identical pod under another name shares the original's profile (the simulator
        // stamps one prototype per group of identical pods).
        NormalizedPod twin = pod;
        twin.SetIdentity("twin-uid", "twin", pod.creation_ms);
        for (int q = 0; q < 3; ++q) {
          const PlacementQuery query = RandomQuery(gen.rng(), total);
          INFO("seed " << seed << " step " << step << " after [" << last_change << "] pod "
                       << pod.Key() << " requests " << pod.requests.ToString() << " start "
                       << query.start << " limit " << query.limit << " scoring "
                       << query.scoring->name());
          const PlacementResult plain = FindPlacement(state, pod, query);
          CHECK(Describe(placement.Find(pod, query)) == Describe(plain));
          const DensePlacement::Profile profile = placement.ProfileOf(pod, query.scoring);
          if (plain.quota.ok()) {
            CHECK(Describe(placement.ScanNodes(pod, profile, query)) == Describe(plain));
            // (The twin is another pod for the quota: the original's nomination counts for it.)
            const PlacementResult plain_twin = FindPlacement(state, twin, query);
            if (plain_twin.quota.ok())
              CHECK(Describe(placement.ScanNodes(twin, profile, query)) == Describe(plain_twin));
            for (int n = 0; n < total; ++n) {
              const bool in = std::find(plain.feasible.begin(), plain.feasible.end(), n) !=
                              plain.feasible.end();
              if (query.limit >= static_cast<std::size_t>(total))
                CHECK(placement.FitsNode(pod, profile, n) == in);
            }
          }
          ++compared;
          feasible_found += plain.best >= 0 ? 1 : 0;
          limited += plain.quota.ok() && plain.examined < total ? 1 : 0;
        }
      }
    }
  }
  // The searches must have had something to find (about a fifth of the questions: quota trees
  // reject more than flat quotas), and limits that cut scans short.
  CHECK(feasible_found * 6 > compared);
  CHECK(limited * 20 > compared);
}

}  // namespace placement_search_test
}  // namespace capext
