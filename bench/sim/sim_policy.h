// The policies `capacity-sim run --policy` and `compare --policies` know, by name. Every policy
// runs the same scheduler loop (simulation.h: kube-scheduler's queue, filter, score, bind, plus the
// reclaim controller, docs/capacity-semantics.md#8-the-reclaim-controller, and kube-scheduler's own
// lower-priority preemption); they differ in which quotas exist and how they are read:
//  - capacity:          the plan's quotas under QuotaSemantics::kCapacityExtender (this product);
//  - scheduler-plugins: the plan's quotas under QuotaSemantics::kSchedulerPlugins (the reference
//                       plugin's arithmetic; victims chosen by the same victim selection);
//  - static:            max = min for every quota (no borrowing, so reclaim never finds a
//                       borrower; only same-namespace lower-priority preemption remains),
//                       capacity-extender semantics;
//  - none:              no quotas at all: FIFO by priority, plain lower-priority preemption;
//  - fair:              capacity, with fair sharing by weight (docs/fair-sharing.md): every pod
//                       of a quota namespace arrives gated and core's admission queue lifts the
//                       gates, borrowers in order of their share after admission; the reclaim
//                       controller also reclaims between borrowers (as serve with fairSharing);
//  - fair-filter:       capacity in filter mode (no gate) with reclaim between borrowers alone:
//                       fairness acts only by evicting from a borrower above its fair share
//                       (docs/fair-sharing.md#6-reclaim-between-borrowers).
// Thread-safety: value types and pure functions.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/quota_semantics.h"

namespace capext {

enum class SimPolicy { kCapacity, kSchedulerPlugins, kStatic, kNone, kFair, kFairFilter };

std::optional<SimPolicy> SimPolicyFromName(std::string_view name);
std::string_view SimPolicyName(SimPolicy policy);
std::vector<std::string> SimPolicyNames();

struct SimPolicySetup {
  QuotaSemantics semantics = QuotaSemantics::kCapacityExtender;
  bool quotas = true;           // create the plan's ElasticQuotas at all
  bool max_equals_min = false;  // replace every max by the min
  bool fair_sharing = false;    // gate every quota pod; the admission queue orders by share
  bool fair_reclaim = false;    // the reclaim controller reclaims between borrowers
};

SimPolicySetup SetupFor(SimPolicy policy);

}  // namespace capext
