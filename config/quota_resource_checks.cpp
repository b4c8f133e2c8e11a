#include "config/quota_resource_checks.h"

#include <array>
#include <limits>

#include <fmt/format.h>

#include "config/name_suggestion.h"
#include "config/yaml_fields.h"

namespace capext {
namespace {

// The resources the scheduler-plugins semantics always compares, reading an omitted one from a
// listed max as 0 (docs/capacity-semantics.md#2-which-resources-a-quota-governs-two-semantics).
bool AlwaysCompared(std::string_view r) {
  return r == "cpu" || r == "memory" || r == "ephemeral-storage";
}

// Names a pod's requests can carry: the standard ones, hugepages-<size>, and extended
// resources, which always have a domain ("nvidia.com/gpu").
bool IsRequestableName(std::string_view r) {
  return AlwaysCompared(r) || r == "pods" || r.starts_with("hugepages-") ||
         r.find('/') != std::string_view::npos;
}

void WarnUnrequestable(const std::string& resource, const std::string& field, int line,
                       std::vector<ValidationFinding>* findings) {
  if (IsRequestableName(resource)) return;
  const std::string hint =
      DidYouMean(resource, {"cpu", "memory", "ephemeral-storage", "pods", "nvidia.com/gpu"});
  findings->push_back(
      {Severity::kWarning, line, field,
       fmt::format("no pod can request resource \"{}\"{}: the standard names are cpu, memory, "
                   "ephemeral-storage, pods and hugepages-<size>; extended resources carry a "
                   "domain (nvidia.com/gpu)",
                   resource, hint)});
}

// Decisions keep every amount as an int64 in decision units (cpu in milli-units, everything else
// in whole units: DecisionAmount). A larger quantity saturates there at INT64_MAX, and a limit of
// INT64_MAX is "no limit" to every check (quota_semantics.cpp), so such a min or max is not what
// its author wrote: say what the extender makes of it.
void WarnInexact(const std::string& resource, const std::string& field, const std::string& list,
                 const std::string& text, const Quantity& q, int line,
                 std::vector<ValidationFinding>* findings) {
  constexpr int64_t kLimit = std::numeric_limits<int64_t>::max();
  if (DecisionAmount(resource, q) != kLimit) return;
  const std::string limit = QuantityFromDecisionAmount(resource, kLimit).ToString();
  const std::string consequence =
      list == "spec.max" ? fmt::format("this max does not limit {} at all", resource)
                         : fmt::format(
                               "this min never counts as exceeded in {} (the quota never "
                               "borrows {}) and the sum of all mins for {} is unbounded "
                               "(the sum-of-mins check never rejects a pod for {})",
                               resource, resource, resource, resource);
  findings->push_back(
      {Severity::kWarning, line, field,
       fmt::format("quantity \"{}\" is too large for exact arithmetic: {} is counted in int64 {}, "
                   "below {}; the extender reads it as {}, which every check treats as no limit, "
                   "so {}",
                   text, resource, resource == "cpu" ? "milli-units" : "units", limit, limit,
                   consequence)});
}

}  // namespace

std::optional<QuantityMap> ReadQuantityMap(const YAML::Node& node, int line,
                                           const std::string& path, CheckedQuota* out,
                                           std::vector<ValidationFinding>* findings) {
  if (node.IsNull()) return QuantityMap{};
  if (!node.IsMap()) {
    findings->push_back(
        {Severity::kError, line, path,
         fmt::format("expected a map of resource name to quantity, got {}", YamlTypeName(node))});
    return std::nullopt;
  }
  QuantityMap quantities;
  for (const auto& member : UniqueMembers(node, path, findings)) {
    const int entry_line = member.line;
    const std::string& resource = member.key;
    const std::string field = FieldPath(path, resource);
    out->field_lines[field] = entry_line;
    const YAML::Node& value = member.value;
    if (!value.IsScalar()) {
      findings->push_back({Severity::kError, entry_line, field,
                           fmt::format("expected a quantity, got {}", YamlTypeName(value))});
      continue;
    }
    const StatusOr<Quantity> parsed = Quantity::Parse(value.Scalar());
    if (!parsed.ok()) {
      findings->push_back({Severity::kError, entry_line, field, parsed.status().message()});
      continue;
    }
    const Quantity& q = *parsed;
    if (q.IsNegative()) {
      findings->push_back({Severity::kError, entry_line, field,
                           fmt::format("quantity \"{}\" is negative", value.Scalar())});
      continue;
    }
    WarnUnrequestable(resource, field, entry_line, findings);
    if (path == "spec.min" || path == "spec.max") {
      WarnInexact(resource, field, path, value.Scalar(), q, entry_line, findings);
    }
    quantities.emplace(resource, q);
  }
  return quantities;
}

void CompareMinWithMax(const std::optional<QuantityMap>& min, const std::optional<QuantityMap>& max,
                       const CheckedQuota& quota, std::vector<ValidationFinding>* findings) {
  if (!max) return;  // a wholly absent max is unbounded under both semantics
  const QuantityMap empty;
  const QuantityMap& mins = min ? *min : empty;
  // Written in the manifest, even if its quantity was rejected: not "missing" (no second
  // finding about an entry that already has an error).
  const auto written = [&](std::string_view list, std::string_view resource) {
    return quota.field_lines.contains(FieldPath(std::string(list), resource));
  };
  for (const auto& [resource, amount] : mins) {
    const std::string field = FieldPath("spec.min", resource);
    auto it = max->find(resource);
    if (it != max->end()) {
      if (amount.Compare(it->second) > 0) {
        findings->push_back(
            {Severity::kError, quota.LineOf(field), field,
             fmt::format("min {} {} is greater than max {} {}: the guarantee can never be used",
                         resource, amount.ToString(), resource, it->second.ToString())});
      }
      continue;
    }
    if (written("spec.max", resource)) continue;
    const std::string consequence =
        AlwaysCompared(resource)
            ? fmt::format(
                  "unbounded under capacity-extender semantics; under scheduler-plugins "
                  "semantics max {} is 0 when max lists anything, so every pod "
                  "requesting {} is rejected",
                  resource, resource)
            : std::string("it has no ceiling (unbounded)");
    findings->push_back({Severity::kWarning, quota.LineOf(field), field,
                         fmt::format("{} is in min but not in max: {}", resource, consequence)});
  }
  // The reference reads a listed max that omits cpu or memory as 0 for it (its issue #424).
  constexpr std::array<std::pair<const char*, const char*>, 2> kPairs = {
      {{"cpu", "memory"}, {"memory", "cpu"}}};
  for (const auto& [listed, omitted] : kPairs) {
    if (!max->contains(listed) || written("spec.max", omitted) || written("spec.min", omitted)) {
      continue;
    }
    findings->push_back(
        {Severity::kWarning, quota.LineOf("spec.max"), "spec.max",
         fmt::format("max lists {} but not {}: under scheduler-plugins semantics max {} is 0, so "
                     "every pod requesting {} is rejected; under capacity-extender semantics {} "
                     "is unbounded",
                     listed, omitted, omitted, omitted, omitted)});
  }
}

}  // namespace capext
