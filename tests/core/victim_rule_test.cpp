// VictimRule::ScopesByTreeNode (every leaf's scope in one pass over the tree) against
// ScopeOfLeaf (one walk up from each leaf), for preemptors of every kind on random clusters, flat
// and in trees, through random changes of the state (quotas edited and re-parented among them).
#include "core/victim_rule.h"

#include <string>
#include <vector>

#include <fmt/format.h>
#include <catch2/catch.hpp>

#include "core/victim_selection.h"
#include "tests/support/random_changes.h"

namespace capext {
namespace victim_rule_test {
namespace {

using testing::RandomChanges;
using testing::RandomCluster;

std::string Describe(const VictimRule::Scope& s) {
  return fmt::format("any {} lower {} recheck {} leaf {} top {} distance {}", s.any,
                     s.lower_priority_only, s.recheck, s.leaf, s.top, s.distance);
}

}  // namespace

TEST_CASE("ScopesByTreeNode gives every leaf the scope ScopeOfLeaf gives it",
          "[core][preemption]") {
  int64_t compared = 0, in_trees = 0, allowed = 0;
  for (uint64_t seed = 1; seed <= 120; ++seed) {
    RandomCluster gen(seed);
    const testing::ClusterCase c = gen.Generate();
    ClusterState state;
    testing::BuildDenseState(gen, c, &state);
    RandomChanges changes(&gen, c.decode_options());
    for (int step = 0; step <= 15; ++step) {
      if (step > 0) changes.Apply(&state);
      const QuotaTree& tree = state.ledger().tree();
      for (int k = 0; k < 3; ++k) {
        const NormalizedPod pod = testing::QuestionFor(gen, state, c.decode_options());
        const PreemptorContext ctx = MakePreemptorContext(state, pod);
        std::vector<VictimRule::Scope> by_node;
        ctx.rule->ScopesByTreeNode(&by_node);
        REQUIRE(by_node.size() == static_cast<std::size_t>(tree.size()));
        for (int node = 0; node < tree.size(); ++node) {
          if (!tree.children(node).empty()) continue;  // only leaves hold namespaces
          const VictimRule::Scope one = ctx.rule->ScopeOfLeaf(node);
          INFO("seed " << seed << " step " << step << " pod " << pod.Key() << " leaf " << node);
          CHECK(Describe(by_node[static_cast<std::size_t>(node)]) == Describe(one));
          ++compared;
          in_trees += tree.flat() ? 0 : 1;
          allowed += one.any ? 1 : 0;
        }
      }
    }
  }
  // Trees were among the states, and scopes that allow victims as well as ones that do not.
  CHECK(in_trees * 4 > compared);
  CHECK(allowed * 10 > compared);
  CHECK(allowed < compared);
}

}  // namespace victim_rule_test
}  // namespace capext
