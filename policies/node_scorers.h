// The registry of node scorers (docs/architecture.md#registry-and-profiles): the plugins of the
// node-scoring extension point (core/node_scorer.h) by name. The product's three are listed in
// node_scorers.cpp; another joins with one NodeScorerRegistration line beside its definition.
// A profile picks one by name: the extender config's `scoring`, capacity-sim's `--scoring` and a
// scenario's `scoring:`. The first entry is the default.
// Thread-safety: registration happens during static initialisation only; afterwards every
// function may run from any thread.
#pragma once

#include <string_view>

#include "core/node_scorer.h"
#include "policies/policy_table.h"

namespace capext {

const PolicyTable<const NodeScorer*>& NodeScoringPolicies();

// Adds a scorer to the table (a static object's constructor: registration before main()). The
// entry's name is the plugin's name().
struct NodeScorerRegistration {
  NodeScorerRegistration(std::string_view help, const NodeScorer* (*make)());
};

}  // namespace capext
