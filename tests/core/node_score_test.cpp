// Node scoring (core/node_score.h) and PickNode.
#include "core/node_score.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "tests/support/builders.h"

namespace capext {
namespace node_score_test {
namespace {

using testing::kGi;
using testing::MakeNode;
using testing::MakePod;

struct ScoreCase {
  NodeScoring scoring;
  int64_t used_cpu;
  int64_t used_memory;
  int want;
};

TEST_CASE("scores: the average cpu/memory utilisation after placing the pod, 0..10",
          "[node_score]") {
  // Node 10 cpu / 10Gi; the pod asks for 1 cpu and 1Gi.
  const std::vector<ScoreCase> cases = {
      {NodeScoring::kLeastAllocated, 0, 0, 9},
      {NodeScoring::kMostAllocated, 0, 0, 1},
      {NodeScoring::kLeastAllocated, 4000, 4 * kGi, 5},
      {NodeScoring::kMostAllocated, 4000, 4 * kGi, 5},
      {NodeScoring::kLeastAllocated, 9000, 9 * kGi, 0},
      {NodeScoring::kMostAllocated, 9000, 9 * kGi, 10},
      // Over-committed resources count as full, never beyond.
      {NodeScoring::kMostAllocated, 20000, 20 * kGi, 10},
      {NodeScoring::kLeastAllocated, 20000, 0, 4},
      {NodeScoring::kNone, 4000, 4 * kGi, 0},
  };
  for (const auto& c : cases) {
    INFO(c.scoring->name() << " cpu " << c.used_cpu << " memory " << c.used_memory);
    Node node = MakeNode("n1", 10000, 10 * kGi);
    NodeUsage usage;
    usage.requested = ResourceList{{"cpu", c.used_cpu}, {"memory", c.used_memory}};
    const Pod pod = MakePod("ns", "p").Cpu(1000).Memory(kGi);
    const int score = ScoreNode(c.scoring, pod, NodeInfo{node, &usage});
    CHECK(score == c.want);
    CHECK(score >= 0);
    CHECK(score <= kMaxNodeScore);
  }
}

TEST_CASE("PickNode: the highest score, then the first name", "[node_score]") {
  ClusterState state;
  state.UpsertNode(MakeNode("b-empty", 10000, 10 * kGi));
  state.UpsertNode(MakeNode("a-busy", 10000, 10 * kGi));
  state.UpsertNode(MakeNode("c-empty", 10000, 10 * kGi));
  state.UpsertPod(MakePod("ns", "x").Cpu(8000).Memory(8 * kGi).BoundTo("a-busy"));
  Pod p = MakePod("ns", "p").Cpu(1000).Memory(kGi);
  const std::vector<std::string> feasible = {"c-empty", "a-busy", "b-empty"};
  CHECK(PickNode(NodeScoring::kLeastAllocated, state, p, feasible) == "b-empty");
  CHECK(PickNode(NodeScoring::kMostAllocated, state, p, feasible) == "a-busy");
  CHECK(PickNode(NodeScoring::kNone, state, p, feasible) == "a-busy");
}

}  // namespace
}  // namespace node_score_test
}  // namespace capext
