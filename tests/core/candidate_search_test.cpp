// SearchCandidates (core/candidate_search.h) chooses what FindPreemption chooses over the same
// pool of nodes — pruned and exhaustive, from a rotating start, with every node in the pool or
// only the first few — on random states and through random changes of the state, with one
// DensePlacement kept across the changes.
#include "core/candidate_search.h"

#include <fmt/format.h>
#include <catch2/catch.hpp>

#include "tests/support/random_changes.h"

namespace capext {
namespace candidate_search_test {
namespace {

using testing::RandomChanges;
using testing::RandomCluster;

std::string DescribeVictims(const NodeVictims& c) {
  std::vector<std::string> uids;
  for (const NormalizedPod* v : c.victims)
    uids.push_back(v->store_key());
  return fmt::format("{}:[{}] pdb {}", c.node, fmt::join(uids, ","), c.pdb_violations);
}

std::string Describe(const PreemptionPlan& plan, bool every_candidate) {
  switch (plan.outcome) {
    case PreemptionPlan::Outcome::kNotEligible:
      return "not eligible: " + plan.why.message();
    case PreemptionPlan::Outcome::kNoCandidate:
      return "no candidate";
    case PreemptionPlan::Outcome::kFound:
      break;
  }
  std::string out = "chose " + DescribeVictims(plan.chosen);
  if (every_candidate) {
    for (const NodeVictims& c : plan.candidates)
      out += "; " + DescribeVictims(c);
  }
  return out;
}

}  // namespace

TEST_CASE("SearchCandidates chooses what FindPreemption chooses over the same pool",
          "[core][dense][preemption]") {
  int64_t searches = 0, found = 0, pruned = 0;
  for (uint64_t seed = 1; seed <= 150; ++seed) {
    RandomCluster gen(seed);
    const testing::ClusterCase c = gen.Generate();
    ClusterState state;
    testing::BuildDenseState(gen, c, &state);
    DensePlacement placement(state);
    RandomChanges changes(&gen, c.decode_options());
    std::string last_change = "none";
    for (int step = 0; step <= 25; ++step) {
      if (step > 0) last_change = changes.Apply(&state);
      const int total = static_cast<int>(state.dense_nodes()->size());
      for (int k = 0; k < 3; ++k) {
        const NormalizedPod pod = testing::QuestionFor(gen, state, c.decode_options());
        const PreemptionPlan all = FindPreemption(state, pod, PriorityThenStartTimeOrder());
        INFO("seed " << seed << " step " << step << " after [" << last_change << "] pod "
                     << pod.Key() << " priority " << pod.priority << " requests "
                     << pod.requests.ToString() << "; FindPreemption: " << Describe(all, true));
        for (const bool exhaustive : {false, true}) {
          CandidateSearchOptions options;
          options.start = total > 0 ? gen.rng().Below(total) : 0;
          options.exhaustive = exhaustive;
          const CandidateSearchResult r =
              SearchCandidates(state, placement, pod, PriorityThenStartTimeOrder(), options);
          INFO("exhaustive " << exhaustive << " start " << options.start << " pool " << r.pool
                             << " examined " << r.examined);
          CHECK(Describe(r.plan, exhaustive) == Describe(all, exhaustive));
          ++searches;
          found += all.found() ? 1 : 0;
          pruned += !exhaustive && r.examined < r.pool ? 1 : 0;
        }
        // A pool of the first few nodes (from the start) that may give a candidate: the choice
        // over exactly the nodes the search went through.
        CandidateSearchOptions few;
        few.start = total > 0 ? gen.rng().Below(total) : 0;
        few.max_pool = static_cast<std::size_t>(gen.rng().Between(1, std::max(1, total)));
        const CandidateSearchResult r =
            SearchCandidates(state, placement, pod, PriorityThenStartTimeOrder(), few);
        std::vector<std::string> processed;
        for (int i = 0; i < r.processed; ++i)
          processed.push_back(state.dense_nodes()->name((few.start + i) % total));
        INFO("max pool " << few.max_pool << " start " << few.start << " processed "
                         << fmt::format("{}", fmt::join(processed, ",")));
        // Nothing processed: the search saw that no node can give a candidate (as over all).
        const PreemptionPlan over_pool =
            processed.empty() ? all
                              : FindPreemption(state, pod, PriorityThenStartTimeOrder(), processed);
        CHECK(Describe(r.plan, false) == Describe(over_pool, false));
      }
    }
  }
  // Enough searches found a candidate, and the pruned search skipped nodes on some.
  CHECK(found * 20 > searches);
  CHECK(pruned > 0);
}

}  // namespace candidate_search_test
}  // namespace capext
