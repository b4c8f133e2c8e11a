// The registry of extra admission rules (docs/architecture.md#registry-and-profiles): the rules a
// profile may run after the built-in ones (core/admission_rule.h), by name. A rule joins the table
// with one AdmissionRuleRegistration line beside its definition; a profile names the rules it runs,
// '+'-separated and in order: the extender config's `admissionRules`, and capacity-sim's
// `--policy capacity+<rule>`. The product registers none today; tests/plugins/ holds a test rule.
// Thread-safety: registration happens during static initialisation only; afterwards every
// function may run from any thread.
#pragma once

#include <string>
#include <string_view>

#include "core/admission_rule.h"
#include "core/quota_semantics.h"
#include "core/status.h"
#include "policies/policy_table.h"

namespace capext {

const PolicyTable<const AdmissionRule*>& AdmissionRulePolicies();

// Adds a rule to the table (a static object's constructor: registration before main()).
struct AdmissionRuleRegistration {
  AdmissionRuleRegistration(std::string_view name, std::string_view help,
                            const AdmissionRule* (*make)());
};

// `base` with the extra rules named in `names` ("a+b", in order; "" for none). Invalid, naming the
// unknown rule and the known ones, when a name is not in the table.
Status WithAdmissionRules(QuotaSemantics base, std::string_view names, QuotaSemantics* out);

// The names of `semantics`' extra rules, '+'-joined ("" for none).
std::string AdmissionRuleNames(QuotaSemantics semantics);

}  // namespace capext
