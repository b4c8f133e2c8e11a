// The checks of ONE ElasticQuota object, shared by `capacity-extender validate` (YAML or JSON
// files, with lines) and the admission webhook (request.object): the object is read with
// yaml-cpp in both cases (JSON is YAML), so each check is written once.
//
// Errors: apiVersion (scheduling.x-k8s.io/v1alpha1 or scheduling.sigs.k8s.io/v1alpha1) and kind;
// unknown or repeated fields anywhere (strict, like kubectl --validate=strict); metadata.name (a
// DNS subdomain), metadata.namespace (a DNS label) when given; label and annotation values that are
// not strings; the parent annotation's form "<namespace>/<name>"; every quantity in spec.min,
// spec.max and status.used parses and is not negative; min <= max per resource. Warnings (the
// reference plugin's traps,
// docs/capacity-semantics.md#2-which-resources-a-quota-governs-two-semantics): a min resource
// missing from a listed max; a max naming only one of cpu and memory; a resource name no pod can
// request; an empty spec; a missing metadata.namespace; a min or max too large for exact int64
// arithmetic (read as INT64_MAX, which every check treats as unbounded).
// Thread-safety: stateless.
#pragma once

#include <yaml-cpp/yaml.h>

#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "config/validation_finding.h"
#include "core/elastic_quota.h"

namespace capext {

inline constexpr std::string_view kElasticQuotaKind = "ElasticQuota";

// True for the two apiVersions the ElasticQuota CRD has had.
bool IsElasticQuotaApiVersion(std::string_view api_version);
// True when `api_version` belongs to an ElasticQuota API group, whatever the version.
bool IsElasticQuotaApiGroup(std::string_view api_version);

// The field path of the parent annotation, as findings name it.
std::string ParentAnnotationField();

// What CheckQuotaObject could read, for the checks that span several quotas.
struct CheckedQuota {
  ElasticQuota quota;          // min/max hold only the quantities that parsed and are not negative;
                               // parent is empty when the annotation is absent or malformed
  bool has_name = false;       // false: leave it out of the checks across quotas
  bool has_namespace = false;  // false: quota.ns is "default", where kubectl would put it
  int line = 0;                // where the object starts
  std::map<std::string, int, std::less<>> field_lines;  // field path -> line

  // The line of `field`, else of the object.
  int LineOf(std::string_view field) const;
};

struct QuotaCheckOptions {
  // Set by the webhook: the request's namespace and name stand in for absent metadata fields
  // (the API server fills them from the URL and generateName), so their absence is no finding.
  std::string request_namespace;
  std::string request_name;
  // The object is an item of an ElasticQuotaList that leaves `kind` to the list.
  bool kind_implied = false;
};

// Checks `object`, which claims to be an ElasticQuota (its kind says so, or the webhook was
// called for one). Appends every finding to *findings and fills *out.
void CheckQuotaObject(const YAML::Node& object, const QuotaCheckOptions& options, CheckedQuota* out,
                      std::vector<ValidationFinding>* findings);

// "ElasticQuota eq1/eq1" for messages.
std::string DescribeQuota(const ElasticQuota& quota);

}  // namespace capext
