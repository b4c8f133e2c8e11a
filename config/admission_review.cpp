#include "config/admission_review.h"

#include <algorithm>
#include <set>
#include <tuple>

#include <fmt/format.h>
#include <rapidjson/document.h>
#include <rapidjson/error/en.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>
#include <yaml-cpp/yaml.h>

#include "config/admission_review_envelope.h"
#include "config/json_fields.h"
#include "config/quota_hierarchy_check.h"
#include "config/quota_object_check.h"
#include "config/quota_set_checks.h"

namespace capext {
namespace {

std::string StringMember(const rapidjson::Value& object, std::string_view name) {
  const rapidjson::Value* v = object.IsObject() ? json::Member(object, name) : nullptr;
  return v != nullptr && v->IsString() ? std::string(v->GetString(), v->GetStringLength()) : "";
}

// Deeper than any ElasticQuota (managedFields included): refused before anything recurses.
constexpr int kMaxObjectDepth = 64;

// True when `value` nests at most `limit` levels. The recursion stops at the limit.
bool DepthAtMost(const rapidjson::Value& value, int limit) {
  if (limit < 0) return false;
  if (value.IsObject()) {
    for (auto m = value.MemberBegin(); m != value.MemberEnd(); ++m) {
      if (!DepthAtMost(m->value, limit - 1)) return false;
    }
  } else if (value.IsArray()) {
    for (const auto& item : value.GetArray()) {
      if (!DepthAtMost(item, limit - 1)) return false;
    }
  }
  return true;
}

// Iterative parsing: a body of nested brackets cannot exhaust the stack.
void ParseReview(std::string_view body, rapidjson::Document* review) {
  review->Parse<rapidjson::kParseIterativeFlag>(body.data(), body.size());
}

std::string FindingText(const ValidationFinding& f) {
  return f.field.empty() ? f.message : fmt::format("{}: {}", f.field, f.message);
}

// The hierarchy problems of `quotas`, as comparable (quota key, text, severity) tuples.
using HierarchyProblem = std::tuple<std::string, std::string, Severity>;
std::set<HierarchyProblem> HierarchyProblems(const std::vector<ElasticQuota>& quotas) {
  std::set<HierarchyProblem> out;
  for (const auto& p : CheckQuotaHierarchy(quotas, "in the cluster")) {
    out.emplace(quotas[p.quota].Key(), FindingText(p.finding), p.finding.severity);
  }
  return out;
}

// The checks against the cluster; appends reasons to deny and warnings.
void CheckAgainstCluster(const ElasticQuota& quota, const AdmissionClusterView& cluster,
                         std::vector<std::string>* reasons, std::vector<std::string>* warnings) {
  for (const auto& other : cluster.existing_quotas) {
    if (other.ns == quota.ns && other.name != quota.name) {
      reasons->push_back(
          fmt::format("namespace {} already has ElasticQuota {}: one ElasticQuota per namespace",
                      quota.ns, other.Key()));
    }
  }
  std::vector<ElasticQuota> after;
  for (const auto& other : cluster.existing_quotas) {
    if (other.Key() != quota.Key()) after.push_back(other);
  }
  after.push_back(quota);
  // Only what this object changes: problems the cluster already had are not blamed on it.
  const auto before_problems = HierarchyProblems(cluster.existing_quotas);
  for (const auto& problem : HierarchyProblems(after)) {
    if (before_problems.contains(problem)) continue;
    const auto& [key, text, severity] = problem;
    std::string line = key == quota.Key() ? text : fmt::format("ElasticQuota {}: {}", key, text);
    (severity == Severity::kError ? reasons : warnings)->push_back(std::move(line));
  }
  if (cluster.total_allocatable.empty() || !quota.min) return;
  for (const auto& [resource, message] :
       CheckMinsFitAllocatable(after, cluster.total_allocatable)) {
    if (quota.min->Has(resource)) warnings->push_back(message);
  }
}

AdmissionDecision Deny(AdmissionDecision d, int code, std::string message) {
  d.allowed = false;
  d.code = code;
  d.message = std::move(message);
  return d;
}

AdmissionDecision Decide(const rapidjson::Document& review, const AdmissionClusterView& cluster) {
  AdmissionDecision d;
  if (!review.IsObject()) return Deny(d, 400, "expected an AdmissionReview object");
  const rapidjson::Value* request = json::Member(review, "request");
  if (request != nullptr && request->IsObject()) d.uid = StringMember(*request, "uid");
  const std::string api_version = StringMember(review, "apiVersion");
  const std::string kind = StringMember(review, "kind");
  if (api_version != kAdmissionApiVersion || kind != "AdmissionReview") {
    return Deny(d, 400,
                fmt::format("expected apiVersion {} and kind AdmissionReview, got \"{}\" and "
                            "\"{}\"",
                            kAdmissionApiVersion, api_version, kind));
  }
  if (request == nullptr || !request->IsObject()) return Deny(d, 400, "request: missing");
  if (d.uid.empty()) return Deny(d, 400, "request.uid: missing");
  const std::string operation = StringMember(*request, "operation");
  if (operation == "DELETE" || operation == "CONNECT") {
    d.allowed = true;
    return d;
  }
  if (operation != "CREATE" && operation != "UPDATE") {
    return Deny(d, 400, fmt::format("request.operation: unexpected \"{}\"", operation));
  }
  const rapidjson::Value* object = json::Member(*request, "object");
  if (object == nullptr || !object->IsObject()) return Deny(d, 400, "request.object: missing");
  if (!DepthAtMost(*object, kMaxObjectDepth)) {
    return Deny(d, 400,
                fmt::format("request.object: nests deeper than {} levels", kMaxObjectDepth));
  }

  // The object goes through the checks `validate` runs, which read YAML (JSON is YAML).
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
  object->Accept(writer);
  YAML::Node node;
  try {
    node = YAML::Load(std::string(buffer.GetString(), buffer.GetSize()));
  } catch (const YAML::Exception& e) {
    return Deny(d, 400, fmt::format("request.object: unreadable: {}", e.msg));
  }
  QuotaCheckOptions options;
  options.request_namespace = StringMember(*request, "namespace");
  options.request_name = StringMember(*request, "name");
  CheckedQuota checked;
  std::vector<ValidationFinding> findings;
  CheckQuotaObject(node, options, &checked, &findings);

  std::vector<std::string> invalid, forbidden;
  for (const auto& f : findings) {
    if (f.severity == Severity::kError) invalid.push_back(FindingText(f));
    if (f.severity == Severity::kWarning) d.warnings.push_back(FindingText(f));
  }
  if (checked.has_name) CheckAgainstCluster(checked.quota, cluster, &forbidden, &d.warnings);
  if (invalid.empty() && forbidden.empty()) {
    d.allowed = true;
    return d;
  }
  // 400: the object itself is invalid; 403: a valid object that breaks a cluster rule.
  const int code = invalid.empty() ? 403 : 400;
  invalid.insert(invalid.end(), forbidden.begin(), forbidden.end());
  return Deny(d, code, fmt::format("{}", fmt::join(invalid, "; ")));
}

}  // namespace

AdmissionDecision DecideElasticQuotaAdmission(std::string_view body,
                                              const AdmissionClusterView& cluster) {
  rapidjson::Document review;
  ParseReview(body, &review);
  if (review.HasParseError()) {
    AdmissionDecision d;
    return Deny(
        d, 400,
        fmt::format("request body is not JSON: {} at offset {}",
                    rapidjson::GetParseError_En(review.GetParseError()), review.GetErrorOffset()));
  }
  return Decide(review, cluster);
}

std::string WriteAdmissionResponse(const AdmissionDecision& d) {
  return WriteAdmissionReviewResponse(d.uid, d.allowed, [&](AdmissionResponseWriter& w) {
    if (!d.allowed) {
      w.Key("status");
      w.StartObject();
      w.Key("code");
      w.Int(d.code);
      w.Key("reason");
      w.String(d.code == 403 ? "Forbidden" : "BadRequest");
      w.Key("message");
      w.String(d.message);
      w.EndObject();
    }
    if (!d.warnings.empty()) {
      w.Key("warnings");
      w.StartArray();
      for (const auto& warning : d.warnings)
        w.String(warning);
      w.EndArray();
    }
  });
}

Status ReviewElasticQuotaAdmission(std::string_view body, const AdmissionClusterView& cluster,
                                   std::string* response_json, AdmissionDecision* decision) {
  rapidjson::Document review;
  ParseReview(body, &review);
  if (review.HasParseError()) {
    return Status::Error(fmt::format("request body is not JSON: {} at offset {}",
                                     rapidjson::GetParseError_En(review.GetParseError()),
                                     review.GetErrorOffset()));
  }
  AdmissionDecision d = Decide(review, cluster);
  *response_json = WriteAdmissionResponse(d);
  if (decision != nullptr) *decision = std::move(d);
  return {};
}

}  // namespace capext
