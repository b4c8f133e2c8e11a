#include "bench/sim/sim_policy.h"

namespace capext {
namespace {

struct Named {
  SimPolicy policy;
  std::string_view name;
};
constexpr Named kPolicies[] = {
    {SimPolicy::kCapacity, "capacity"}, {SimPolicy::kSchedulerPlugins, "scheduler-plugins"},
    {SimPolicy::kStatic, "static"},     {SimPolicy::kNone, "none"},
    {SimPolicy::kFair, "fair"},         {SimPolicy::kFairFilter, "fair-filter"}};

}  // namespace

std::optional<SimPolicy> SimPolicyFromName(std::string_view name) {
  for (const auto& p : kPolicies) {
    if (p.name == name) return p.policy;
  }
  return std::nullopt;
}

std::string_view SimPolicyName(SimPolicy policy) {
  for (const auto& p : kPolicies) {
    if (p.policy == policy) return p.name;
  }
  return "unknown";
}

std::vector<std::string> SimPolicyNames() {
  std::vector<std::string> out;
  for (const auto& p : kPolicies)
    out.emplace_back(p.name);
  return out;
}

SimPolicySetup SetupFor(SimPolicy policy) {
  switch (policy) {
    case SimPolicy::kCapacity:
      return {QuotaSemantics::kCapacityExtender, true, false};
    case SimPolicy::kSchedulerPlugins:
      return {QuotaSemantics::kSchedulerPlugins, true, false};
    case SimPolicy::kStatic:
      return {QuotaSemantics::kCapacityExtender, true, true};
    case SimPolicy::kNone:
      return {QuotaSemantics::kCapacityExtender, false, false};
    case SimPolicy::kFair:
      return {QuotaSemantics::kCapacityExtender, true, false, true, true};
    case SimPolicy::kFairFilter:
      return {QuotaSemantics::kCapacityExtender, true, false, false, true};
  }
  return {};
}

}  // namespace capext
