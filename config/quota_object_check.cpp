#include "config/quota_object_check.h"

#include <fmt/format.h>
#include <tuple>

#include "config/object_codec.h"
#include "config/quota_resource_checks.h"
#include "config/yaml_fields.h"
#include "core/fair_share_weight.h"

namespace capext {
namespace {

const std::vector<std::string> kTopLevelFields = {"apiVersion", "kind", "metadata", "spec",
                                                  "status"};
const std::vector<std::string> kMetadataFields = {"name",
                                                  "generateName",
                                                  "namespace",
                                                  "selfLink",
                                                  "uid",
                                                  "resourceVersion",
                                                  "generation",
                                                  "creationTimestamp",
                                                  "deletionTimestamp",
                                                  "deletionGracePeriodSeconds",
                                                  "labels",
                                                  "annotations",
                                                  "ownerReferences",
                                                  "finalizers",
                                                  "managedFields"};
const std::vector<std::string> kSpecFields = {"min", "max"};
const std::vector<std::string> kStatusFields = {"used"};

bool IsLowerAlnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

// RFC 1123 label: lower-case alphanumerics and '-', alphanumeric at both ends, at most 63.
bool IsDnsLabel(std::string_view s) {
  if (s.empty() || s.size() > 63 || !IsLowerAlnum(s.front()) || !IsLowerAlnum(s.back())) {
    return false;
  }
  for (char c : s) {
    if (!IsLowerAlnum(c) && c != '-') return false;
  }
  return true;
}

// RFC 1123 subdomain: dot-separated labels, at most 253 characters.
bool IsDnsSubdomain(std::string_view s) {
  if (s.empty() || s.size() > 253) return false;
  std::size_t start = 0;
  while (true) {
    const std::size_t dot = s.find('.', start);
    if (!IsDnsLabel(s.substr(start, dot - start))) return false;
    if (dot == std::string_view::npos) return true;
    start = dot + 1;
  }
}

// The quantities in decision units. False (with the names left out) when the process-wide table
// of resource names is full (ResourceName::kMaxResourceNames distinct names).
bool ToResourceList(const QuantityMap& quantities, ResourceList* out) {
  bool complete = true;
  for (const auto& [name, q] : quantities) {
    ResourceName resource;
    if (!ResourceName::TryIntern(name, &resource)) {
      complete = false;
      continue;
    }
    out->Set(resource, DecisionAmount(resource, q));
  }
  return complete;
}

class ObjectChecker {
 public:
  ObjectChecker(const QuotaCheckOptions& options, CheckedQuota* out,
                std::vector<ValidationFinding>* findings)
      : options_(options), out_(out), findings_(findings) {}

  void Check(const YAML::Node& object) {
    out_->line = YamlLine(object);
    if (!object.IsMap()) {
      Error(out_->line, "", fmt::format("expected an object, got {}", YamlTypeName(object)));
      return;
    }
    std::optional<QuantityMap> min, max;
    bool has_spec = false;
    for (const auto& m : KnownMembers(object, "", kTopLevelFields, findings_)) {
      out_->field_lines[m.key] = m.line;
      if (m.key == "apiVersion") ApiVersion(m);
      if (m.key == "kind") Kind(m);
      if (m.key == "metadata") Metadata(m);
      if (m.key == "spec") has_spec = Spec(m, &min, &max);
      if (m.key == "status") Status(m);
    }
    if (!out_->field_lines.contains("apiVersion")) Error(out_->line, "apiVersion", "missing");
    if (!out_->field_lines.contains("kind") && !options_.kind_implied)
      Error(out_->line, "kind", "missing");
    if (!out_->field_lines.contains("metadata")) Metadata({"metadata", out_->line, YAML::Node()});
    if (!has_spec) Warning(out_->line, "spec", "no min and no max: this quota limits nothing");
    for (auto [list, field, into] : {std::tuple{&min, "spec.min", &out_->quota.min},
                                     std::tuple{&max, "spec.max", &out_->quota.max}}) {
      if (!*list) continue;
      into->emplace();
      if (!ToResourceList(**list, &**into)) {
        Error(out_->line, field, "too many distinct resource names across the checked objects");
      }
    }
    CompareMinWithMax(min, max, *out_, findings_);
  }

 private:
  void Error(int line, std::string field, std::string message) {
    findings_->push_back({Severity::kError, line, std::move(field), std::move(message)});
  }
  void Warning(int line, std::string field, std::string message) {
    findings_->push_back({Severity::kWarning, line, std::move(field), std::move(message)});
  }

  // A string-valued member, or nullopt after an error finding.
  std::optional<std::string> String(const YamlMember& m, const std::string& field) {
    if (IsYamlString(m.value)) return m.value.Scalar();
    Error(m.line, field, fmt::format("expected a string, got {}", YamlTypeName(m.value)));
    return std::nullopt;
  }

  void ApiVersion(const YamlMember& m) {
    const auto v = String(m, "apiVersion");
    if (!v) return;
    if (!IsElasticQuotaApiVersion(*v)) {
      Error(m.line, "apiVersion",
            fmt::format("\"{}\" is not an ElasticQuota apiVersion; use {}/v1alpha1 (or the older "
                        "{}/v1alpha1)",
                        *v, kElasticQuotaGroup, kElasticQuotaLegacyGroup));
      return;
    }
    out_->quota.api_group = v->substr(0, v->find('/'));
  }

  void Kind(const YamlMember& m) {
    const auto v = String(m, "kind");
    if (v && *v != kElasticQuotaKind) {
      Error(m.line, "kind", fmt::format("expected ElasticQuota, got \"{}\"", *v));
    }
  }

  void Metadata(const YamlMember& m) {
    std::string name = options_.request_name, ns = options_.request_namespace;
    bool name_given = false, ns_given = false;
    if (m.value.IsMap()) {
      for (const auto& f : KnownMembers(m.value, "metadata", kMetadataFields, findings_)) {
        const std::string field = FieldPath("metadata", f.key);
        out_->field_lines[field] = f.line;
        if (f.key == "name" || f.key == "namespace") {
          const auto v = String(f, field);
          if (!v) continue;
          const bool valid = f.key == "name" ? IsDnsSubdomain(*v) : IsDnsLabel(*v);
          if (!valid) {
            Error(f.line, field,
                  fmt::format("\"{}\" is not a valid {}: lower-case letters, digits and '-'{}", *v,
                              f.key, f.key == "name" ? " ('.' between parts)" : ""));
          }
          (f.key == "name" ? name : ns) = *v;
          (f.key == "name" ? name_given : ns_given) = true;
        } else if (f.key == "labels" || f.key == "annotations") {
          StringMap(f, field);
        }
      }
    } else if (m.value.IsDefined() && !m.value.IsNull()) {
      Error(m.line, "metadata", fmt::format("expected a map, got {}", YamlTypeName(m.value)));
    }
    if (name.empty() && !name_given) Error(m.line, "metadata.name", "missing");
    if (ns.empty() && !ns_given) {
      Warning(m.line, "metadata.namespace",
              "missing: the quota governs the namespace `kubectl apply -n` names, else "
              "\"default\"; write the namespace it is meant for");
    }
    out_->has_name = !name.empty();
    out_->has_namespace = !ns.empty();
    out_->quota.name = name;
    out_->quota.ns = ns.empty() ? "default" : ns;
  }

  // labels/annotations: string -> string. Also reads the parent and weight annotations.
  void StringMap(const YamlMember& m, const std::string& field) {
    if (m.value.IsNull()) return;
    if (!m.value.IsMap()) {
      Error(m.line, field, fmt::format("expected a map of strings, got {}", YamlTypeName(m.value)));
      return;
    }
    for (const auto& kv : m.value) {
      const int line = YamlLine(kv.first);
      const std::string key = kv.first.IsScalar() ? kv.first.Scalar() : "";
      const std::string entry = fmt::format("{}[{}]", field, key);
      if (!IsYamlString(kv.second)) {
        Error(line, entry,
              fmt::format("values must be strings, got {} (quote it)", YamlTypeName(kv.second)));
        continue;
      }
      if (field == "metadata.annotations" && key == kParentQuotaAnnotation) {
        out_->field_lines[entry] = line;
        Parent(kv.second.Scalar(), line, entry);
      }
      if (field == "metadata.annotations" && key == kFairShareWeightAnnotation) {
        // docs/fair-sharing.md#1-weights: an invalid weight is an error, with the reason.
        out_->field_lines[entry] = line;
        int64_t weight = 0;
        capext::Status s = ParseFairShareWeight(kv.second.Scalar(), &weight);
        if (!s.ok()) {
          Error(line, entry, s.message());
        } else {
          out_->quota.weight_milli = weight;
        }
      }
    }
  }

  void Parent(const std::string& value, int line, const std::string& field) {
    const std::size_t slash = value.find('/');
    if (slash == std::string::npos || slash == 0 || slash + 1 == value.size() ||
        value.find('/', slash + 1) != std::string::npos) {
      Error(line, field,
            fmt::format("\"{}\" must name the parent quota as <namespace>/<name>", value));
      return;
    }
    out_->quota.parent = value;
  }

  bool Spec(const YamlMember& m, std::optional<QuantityMap>* min, std::optional<QuantityMap>* max) {
    if (m.value.IsNull()) return false;
    if (!m.value.IsMap()) {
      Error(m.line, "spec", fmt::format("expected a map, got {}", YamlTypeName(m.value)));
      return true;
    }
    bool any = false;
    for (const auto& f : KnownMembers(m.value, "spec", kSpecFields, findings_)) {
      const std::string field = FieldPath("spec", f.key);
      out_->field_lines[field] = f.line;
      (f.key == "min" ? *min : *max) = ReadQuantityMap(f.value, f.line, field, out_, findings_);
      any = true;
    }
    return any || m.value.size() > 0;
  }

  void Status(const YamlMember& m) {
    if (m.value.IsNull()) return;
    if (!m.value.IsMap()) {
      Error(m.line, "status", fmt::format("expected a map, got {}", YamlTypeName(m.value)));
      return;
    }
    CheckedQuota scratch;  // status.used lines are not needed later
    for (const auto& f : KnownMembers(m.value, "status", kStatusFields, findings_)) {
      ReadQuantityMap(f.value, f.line, "status.used", &scratch, findings_);
    }
  }

  const QuotaCheckOptions& options_;
  CheckedQuota* out_;
  std::vector<ValidationFinding>* findings_;
};

}  // namespace

bool IsElasticQuotaApiVersion(std::string_view v) {
  return v == std::string(kElasticQuotaGroup) + "/v1alpha1" ||
         v == std::string(kElasticQuotaLegacyGroup) + "/v1alpha1";
}

bool IsElasticQuotaApiGroup(std::string_view v) {
  const std::string_view group = v.substr(0, v.find('/'));
  return group == kElasticQuotaGroup || group == kElasticQuotaLegacyGroup;
}

std::string ParentAnnotationField() {
  return fmt::format("metadata.annotations[{}]", kParentQuotaAnnotation);
}

int CheckedQuota::LineOf(std::string_view field) const {
  auto it = field_lines.find(field);
  return it != field_lines.end() ? it->second : line;
}

void CheckQuotaObject(const YAML::Node& object, const QuotaCheckOptions& options, CheckedQuota* out,
                      std::vector<ValidationFinding>* findings) {
  ObjectChecker(options, out, findings).Check(object);
}

std::string DescribeQuota(const ElasticQuota& quota) {
  return fmt::format("ElasticQuota {}/{}", quota.ns, quota.name.empty() ? "(no name)" : quota.name);
}

}  // namespace capext
