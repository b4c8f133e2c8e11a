// The policy tables (policy_table.h) of the project: one per choice, read by config validation,
// `--help`, /quotas and capacity-sim.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/quota_semantics.h"
#include "core/status.h"
#include "policies/policy_table.h"

namespace capext {

// Which resources a quota governs and how
// (docs/capacity-semantics.md#2-which-resources-a-quota-governs-two-semantics).
const PolicyTable<QuotaSemantics>& QuotaSemanticsPolicies();

// A capacity-sim policy (`run --policy`, `compare --policies`): a profile of the registry
// (docs/architecture.md#registry-and-profiles). Every policy runs the same scheduler loop
// (bench/sim/simulation.h: kube-scheduler's queue, filter, score, bind, plus the reclaim
// controller, docs/capacity-semantics.md#8-the-reclaim-controller, and kube-scheduler's own
// lower-priority preemption); a profile says which quota-arithmetic plugin reads the quotas and how
// the quota plan becomes quotas.
struct SimProfile {
  QuotaSemantics semantics;     // the quota-arithmetic plugin
  bool quotas = true;           // create the plan's ElasticQuotas at all
  bool max_equals_min = false;  // replace every max by the min
  // Gate every pod of a quota namespace; core's admission queue lifts the gates, borrowers in
  // order of their share after admission (docs/fair-sharing.md).
  bool fair_sharing = false;
  // The reclaim controller also reclaims between borrowers, as serve does with fairSharing
  // (docs/fair-sharing.md#6-reclaim-between-borrowers).
  bool fair_reclaim = false;
  bool compared_by_default = true;  // one of `compare`'s default --policies
};
const PolicyTable<SimProfile>& SimProfilePolicies();
// The profile `name` names: an entry of the table, optionally followed by extra admission rules
// ("capacity+<rule>", policies/admission_rules.h). Invalid when the entry or a rule is unknown.
Status ResolveSimProfile(std::string_view name, SimProfile* out);
// The names `compare` runs without --policies, in table order.
std::vector<std::string> DefaultComparedSimProfiles();

// The name of a value in its table (the default's name when the value is not listed).
std::string_view QuotaSemanticsName(QuotaSemantics semantics);

}  // namespace capext
