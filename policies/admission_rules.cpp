#include "policies/admission_rules.h"

#include <map>
#include <memory>
#include <mutex>

#include <fmt/format.h>

namespace capext {
namespace {

PolicyTable<const AdmissionRule*>& AdmissionRuleTable() {
  static PolicyTable<const AdmissionRule*> table("admission rule", {});
  return table;
}

// The rule lists handed out, by their names: a QuotaSemantics keeps a pointer to one for the
// program's life, and the same names give the same list (equal handles).
const AdmissionRules* Interned(const std::string& names, AdmissionRules rules) {
  static std::mutex mutex;
  static std::map<std::string, std::unique_ptr<const AdmissionRules>> lists;
  std::lock_guard<std::mutex> lock(mutex);
  auto& slot = lists[names];
  if (slot == nullptr) slot = std::make_unique<const AdmissionRules>(std::move(rules));
  return slot.get();
}

}  // namespace

const PolicyTable<const AdmissionRule*>& AdmissionRulePolicies() {
  return AdmissionRuleTable();
}

AdmissionRuleRegistration::AdmissionRuleRegistration(std::string_view name, std::string_view help,
                                                     const AdmissionRule* (*make)()) {
  AdmissionRuleTable().Add({name, help, make});
}

Status WithAdmissionRules(QuotaSemantics base, std::string_view names, QuotaSemantics* out) {
  AdmissionRules rules;
  std::string canonical;
  std::size_t start = 0;
  while (start < names.size()) {
    const std::size_t plus = names.find('+', start);
    const std::string_view name =
        names.substr(start, plus == std::string_view::npos ? std::string_view::npos : plus - start);
    const auto* entry = AdmissionRulePolicies().Find(name);
    if (entry == nullptr) {
      const auto known = AdmissionRulePolicies().Names();
      return Status::Invalid(
          fmt::format("unknown admission rule \"{}\"; known: {}", name,
                      known.empty() ? "none" : fmt::format("{}", fmt::join(known, ", "))));
    }
    rules.push_back(entry->make());
    canonical += (canonical.empty() ? "" : "+") + std::string(name);
    if (plus == std::string_view::npos) break;
    start = plus + 1;
  }
  *out = rules.empty() ? base.WithExtraRules(nullptr)
                       : base.WithExtraRules(Interned(canonical, std::move(rules)));
  return {};
}

std::string AdmissionRuleNames(QuotaSemantics semantics) {
  std::string out;
  for (const AdmissionRule* rule : semantics.extra_rules()) {
    if (!out.empty()) out += '+';
    out += rule->name();
  }
  return out;
}

}  // namespace capext
