// NodeScorer policies and PickNode.
#include "policies/node_scorer.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "tests/support/builders.h"

namespace capext {
namespace {

using testing::kGi;
using testing::MakeNode;
using testing::MakePod;

TEST_CASE("node scorers are looked up by name", "[node_scorer]") {
  for (const auto& name : NodeScorerNames()) {
    INFO(name);
    auto scorer = MakeNodeScorer(name);
    REQUIRE(scorer != nullptr);
    CHECK(scorer->name() == name);
  }
  CHECK(MakeNodeScorer("random") == nullptr);
}

struct ScoreCase {
  std::string scorer;
  int64_t used_cpu;
  int64_t used_memory;
  int want;
};

TEST_CASE("scores: the average cpu/memory utilisation after placing the pod, 0..10",
          "[node_scorer]") {
  // Node 10 cpu / 10Gi; the pod asks for 1 cpu and 1Gi.
  const std::vector<ScoreCase> cases = {
      {"least-allocated", 0, 0, 9},
      {"most-allocated", 0, 0, 1},
      {"least-allocated", 4000, 4 * kGi, 5},
      {"most-allocated", 4000, 4 * kGi, 5},
      {"least-allocated", 9000, 9 * kGi, 0},
      {"most-allocated", 9000, 9 * kGi, 10},
      // Over-committed resources count as full, never beyond.
      {"most-allocated", 20000, 20 * kGi, 10},
      {"least-allocated", 20000, 0, 4},
      {"none", 4000, 4 * kGi, 0},
  };
  for (const auto& c : cases) {
    INFO(c.scorer << " cpu " << c.used_cpu << " memory " << c.used_memory);
    auto scorer = MakeNodeScorer(c.scorer);
    REQUIRE(scorer != nullptr);
    Node node = MakeNode("n1", 10000, 10 * kGi);
    NodeUsage usage;
    usage.requested = ResourceList{{"cpu", c.used_cpu}, {"memory", c.used_memory}};
    int score = scorer->Score(MakePod("ns", "p").Cpu(1000).Memory(kGi), NodeInfo{node, &usage});
    CHECK(score == c.want);
    CHECK(score >= 0);
    CHECK(score <= kMaxNodeScore);
  }
}

TEST_CASE("PickNode: the highest score, then the first name", "[node_scorer]") {
  ClusterState state;
  state.UpsertNode(MakeNode("b-empty", 10000, 10 * kGi));
  state.UpsertNode(MakeNode("a-busy", 10000, 10 * kGi));
  state.UpsertNode(MakeNode("c-empty", 10000, 10 * kGi));
  state.UpsertPod(MakePod("ns", "x").Cpu(8000).Memory(8 * kGi).BoundTo("a-busy"));
  Pod p = MakePod("ns", "p").Cpu(1000).Memory(kGi);
  const std::vector<std::string> feasible = {"c-empty", "a-busy", "b-empty"};

  auto spread = MakeNodeScorer("least-allocated");
  CHECK(PickNode(*spread, state, p, feasible) == "b-empty");
  auto pack = MakeNodeScorer("most-allocated");
  CHECK(PickNode(*pack, state, p, feasible) == "a-busy");
  auto none = MakeNodeScorer("none");
  CHECK(PickNode(*none, state, p, feasible) == "a-busy");
}

}  // namespace
}  // namespace capext
