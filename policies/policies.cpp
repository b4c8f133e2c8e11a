#include "policies/policies.h"

#include "policies/admission_rules.h"

namespace capext {

const PolicyTable<QuotaSemantics>& QuotaSemanticsPolicies() {
  static const PolicyTable<QuotaSemantics> table(
      "quota semantics",
      {{"capacity-extender", "a quota governs exactly the resources it names; pods counts pods",
        [] { return QuotaSemantics::kCapacityExtender; }},
       {"scheduler-plugins",
        "the CapacityScheduling plugin's arithmetic bit for bit (cpu, memory and "
        "ephemeral-storage always compared)",
        [] { return QuotaSemantics::kSchedulerPlugins; }}});
  return table;
}

const PolicyTable<SimProfile>& SimProfilePolicies() {
  static const PolicyTable<SimProfile> table(
      "simulator policy",
      {{"capacity", "the plan's quotas under capacity-extender semantics (this product)",
        [] { return SimProfile{QuotaSemantics::kCapacityExtender}; }},
       {"scheduler-plugins",
        "the plan's quotas under the reference plugin's arithmetic (same victim selection)",
        [] { return SimProfile{QuotaSemantics::kSchedulerPlugins}; }},
       {"static",
        "max = min for every quota: no borrowing, so only same-namespace lower-priority "
        "preemption remains",
        [] {
          SimProfile p{QuotaSemantics::kCapacityExtender};
          p.max_equals_min = true;
          return p;
        }},
       {"none", "no quotas at all: FIFO by priority, plain lower-priority preemption",
        [] {
          SimProfile p{QuotaSemantics::kCapacityExtender};
          p.quotas = false;
          return p;
        }},
       {"fair",
        "capacity with fair sharing by weight: quota pods arrive gated, the admission queue "
        "admits borrowers in order of their share, and reclaim also runs between borrowers",
        [] {
          SimProfile p{QuotaSemantics::kCapacityExtender};
          p.fair_sharing = true;
          p.fair_reclaim = true;
          p.compared_by_default = false;
          return p;
        }},
       {"fair-filter",
        "capacity in filter mode (no gate) with reclaim between borrowers alone: fairness acts "
        "only by evicting from a borrower above its fair share",
        [] {
          SimProfile p{QuotaSemantics::kCapacityExtender};
          p.fair_reclaim = true;
          p.compared_by_default = false;
          return p;
        }}});
  return table;
}

Status ResolveSimProfile(std::string_view name, SimProfile* out) {
  const std::size_t plus = name.find('+');
  const std::string_view base = name.substr(0, plus);
  const auto* entry = SimProfilePolicies().Find(base);
  if (entry == nullptr) {
    return Status::Invalid("unknown policy '" + std::string(base) + "' (" +
                           SimProfilePolicies().NamesText() + ")");
  }
  SimProfile profile = entry->make();
  if (plus != std::string_view::npos) {
    if (Status s = WithAdmissionRules(profile.semantics, name.substr(plus + 1), &profile.semantics);
        !s.ok())
      return s;
  }
  *out = profile;
  return {};
}

std::vector<std::string> DefaultComparedSimProfiles() {
  std::vector<std::string> out;
  for (const auto& e : SimProfilePolicies().entries()) {
    if (e.make().compared_by_default) out.emplace_back(e.name);
  }
  return out;
}

std::string_view QuotaSemanticsName(QuotaSemantics semantics) {
  for (const auto& e : QuotaSemanticsPolicies().entries()) {
    if (&e.make().arithmetic() == &semantics.arithmetic()) return e.name;
  }
  return QuotaSemanticsPolicies().default_entry().name;
}

}  // namespace capext
