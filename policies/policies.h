// The policy tables (policy_table.h) of the project: one per choice, read by config validation,
// `--help`, /quotas and capacity-sim.
#pragma once

#include <string_view>

#include "core/node_score.h"
#include "core/quota_semantics.h"
#include "core/victim_selection.h"
#include "policies/policy_table.h"

namespace capext {

// Which of two pods is kept longer when victims are chosen
// (docs/capacity-semantics.md#4-victims-on-one-node).
const PolicyTable<MoreImportantFn>& VictimOrderPolicies();
// How /prioritize and the simulator rank the nodes a pod fits (core/node_score.h).
const PolicyTable<NodeScoring>& NodeScoringPolicies();
// Which resources a quota governs and how
// (docs/capacity-semantics.md#2-which-resources-a-quota-governs-two-semantics).
const PolicyTable<QuotaSemantics>& QuotaSemanticsPolicies();

// The name of a value in its table (the default's name when the value is not listed).
std::string_view NodeScoringName(NodeScoring scoring);
std::string_view QuotaSemanticsName(QuotaSemantics semantics);

}  // namespace capext
