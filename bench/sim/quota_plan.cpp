#include "bench/sim/quota_plan.h"

#include <fmt/format.h>

#include "config/json_fields.h"
#include "config/quota_hierarchy_check.h"
#include "config/quota_object_check.h"
#include "config/snapshot.h"
#include "config/yaml_json.h"
#include "core/fair_share_weight.h"
#include "core/quantity.h"

namespace capext {
namespace {

Status ReadResourceList(const rapidjson::Value& v, const std::string& path, ResourceList* out) {
  if (!v.IsObject()) return Status::Error(path + ": expected a map of resource name to quantity");
  for (auto m = v.MemberBegin(); m != v.MemberEnd(); ++m) {
    const std::string name = m->name.GetString();
    Quantity q;
    if (Status s = json::ReadQuantity(m->value, path + "." + name, &q); !s.ok()) return s;
    if (q.IsNegative()) return Status::Error(path + "." + name + ": must not be negative");
    out->Set(name, DecisionAmount(name, q));
  }
  return {};
}

}  // namespace

Status ParseQuotaPlan(const std::string& text, const std::string& source, QuotaPlan* out) {
  std::vector<rapidjson::Document> docs;
  if (Status s = ParseYamlDocuments(text, &docs); !s.ok()) return s.WithContext(source);
  if (docs.size() != 1 || !docs[0].IsObject()) {
    return Status::Error(source +
                         ": expected one YAML map {tenant: {min: {...}, max: {...}, priority: N, "
                         "parent: TENANT}}");
  }
  for (auto t = docs[0].MemberBegin(); t != docs[0].MemberEnd(); ++t) {
    const std::string tenant = t->name.GetString();
    const std::string path = source + ": " + tenant;
    if (!t->value.IsObject())
      return Status::Error(path + ": expected a map with min, max, priority, parent");
    TenantQuota quota;
    for (auto m = t->value.MemberBegin(); m != t->value.MemberEnd(); ++m) {
      const std::string key = m->name.GetString();
      if (key == "min" || key == "max") {
        ResourceList list;
        if (Status s = ReadResourceList(m->value, path + "." + key, &list); !s.ok()) return s;
        (key == "min" ? quota.min : quota.max) = std::move(list);
      } else if (key == "priority") {
        if (!m->value.IsInt()) return Status::Error(path + ".priority: expected an integer");
        quota.priority = m->value.GetInt();
      } else if (key == "parent") {
        if (!m->value.IsString() || m->value.GetStringLength() == 0) {
          return Status::Error(path + ".parent: expected the name of another tenant of the plan");
        }
        quota.parent = m->value.GetString();
      } else if (key == "weight") {
        // A number or a string, read as the annotation's text (docs/fair-sharing.md#1-weights).
        std::string text;
        if (m->value.IsString()) {
          text = m->value.GetString();
        } else if (m->value.IsInt64()) {
          text = std::to_string(m->value.GetInt64());
        } else if (m->value.IsNumber()) {
          text = fmt::format("{}", m->value.GetDouble());
        }
        if (Status s = ParseFairShareWeight(text, &quota.weight_milli); !s.ok())
          return Status::Error(path + ".weight: " + s.message());
      } else {
        return Status::Error(path + "." + key +
                             ": unknown key (expected min, max, priority, parent, weight)");
      }
    }
    if (quota.min && quota.max) {
      for (const auto& [name, amount] : quota.min->entries()) {
        auto max = quota.max->Find(name);
        if (max && *max < amount) {
          return Status::Error(fmt::format("{}: min {} {} is above max {}", path, name,
                                           FormatAmount(name, amount), FormatAmount(name, *max)));
        }
      }
    }
    out->tenants[tenant] = std::move(quota);
  }
  return CheckQuotaPlanHierarchy(source, out);
}

bool QuotaPlan::HasHierarchy() const {
  for (const auto& [name, quota] : tenants) {
    if (!quota.parent.empty()) return true;
  }
  return false;
}

Status CheckQuotaPlanHierarchy(const std::string& source, QuotaPlan* plan) {
  if (!plan->HasHierarchy()) return {};
  std::vector<std::string> tenants;
  std::vector<ElasticQuota> quotas;
  for (const auto& [name, quota] : plan->tenants) {
    tenants.push_back(name);
    quotas.push_back(ElasticQuotaFor(name, quota, /*max_equals_min=*/false));
  }
  std::vector<std::string> errors;
  for (const auto& p : CheckQuotaHierarchy(quotas, "in the plan")) {
    // The plan's own field names: parent, min.<resource>, max.<resource>.
    std::string field = p.finding.field;
    if (field == ParentAnnotationField()) field = "parent";
    if (field.starts_with("spec.")) field = field.substr(5);
    std::string text =
        fmt::format("{}: {}.{}: {}", source, tenants[p.quota], field, p.finding.message);
    (p.finding.severity == Severity::kError ? errors : plan->warnings).push_back(std::move(text));
  }
  if (errors.empty()) return {};
  return Status::Error(fmt::format("{}", fmt::join(errors, "; ")));
}

Status LoadQuotaPlanFile(const std::string& path, QuotaPlan* out) {
  std::string text;
  if (Status s = ReadFileToString(path, &text); !s.ok()) return s;
  const std::size_t slash = path.find_last_of('/');
  return ParseQuotaPlan(text, slash == std::string::npos ? path : path.substr(slash + 1), out);
}

ElasticQuota ElasticQuotaFor(const std::string& tenant, const TenantQuota& quota,
                             bool max_equals_min) {
  ElasticQuota eq;
  eq.ns = tenant;
  eq.name = tenant;
  eq.uid = "quota-" + tenant;
  eq.api_group = "scheduling.x-k8s.io";
  eq.min = quota.min;
  eq.max = quota.max;
  if (!quota.parent.empty()) eq.parent = quota.parent + "/" + quota.parent;
  eq.weight_milli = quota.weight_milli;
  if (max_equals_min) {
    ResourceList max = quota.min.value_or(ResourceList{});
    if (quota.max) {
      for (const auto& entry : quota.max->entries()) {
        if (!max.Has(entry.first)) max.Set(entry.first, 0);
      }
    }
    eq.max = std::move(max);
  }
  return eq;
}

}  // namespace capext
