#include "policies/node_scorers.h"

namespace capext {
namespace {

PolicyTable<const NodeScorer*>& NodeScorerTable() {
  static PolicyTable<const NodeScorer*> table(
      "scoring",
      {{NodeScoring::kLeastAllocated->name(),
        "spread: prefer the node with the most free cpu and memory",
        [] { return &NodeScoring::kLeastAllocated.scorer(); }},
       {NodeScoring::kMostAllocated->name(), "bin-pack: prefer the fullest node that fits",
        [] { return &NodeScoring::kMostAllocated.scorer(); }},
       {NodeScoring::kNone->name(), "score every node 0 (kube-scheduler's own scores decide)",
        [] { return &NodeScoring::kNone.scorer(); }}});
  return table;
}

}  // namespace

const PolicyTable<const NodeScorer*>& NodeScoringPolicies() {
  return NodeScorerTable();
}

NodeScorerRegistration::NodeScorerRegistration(std::string_view help, const NodeScorer* (*make)()) {
  NodeScorerTable().Add({make()->name(), help, make});
}

}  // namespace capext
