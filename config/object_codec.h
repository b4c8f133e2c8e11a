// Decoding Kubernetes objects (the JSON the API server and kube-scheduler send, or a YAML
// manifest converted to the same DOM) into the core model. Only what decisions need is kept;
// unknown fields are ignored, as Go's encoding/json ignores them. Errors name the field path
// ("spec.containers[0].resources.requests.cpu: quantity \"x\": ...").
// Thread-safety: stateless.
#pragma once

#include <rapidjson/document.h>

#include <string>
#include <variant>

#include "core/elastic_quota.h"
#include "core/node.h"
#include "core/pod.h"
#include "core/priority_class.h"
#include "core/status.h"

namespace capext {

struct DecodeOptions {
  // The annotation whose value names a pod's accelerator model
  // (docs/capacity-semantics.md#9-gpu-model-quotas-and-object-counts); empty = off.
  std::string accelerator_model_annotation;
};

// The pod annotation the reclaim controller records an in-flight reclaim in (Pod::reclaim_record,
// docs/capacity-semantics.md#8-the-reclaim-controller): always decoded.
inline constexpr const char* kReclaimRecordAnnotation = "scheduling.capacity-extender.io/reclaim";

Status DecodePod(const rapidjson::Value& object, const DecodeOptions& options, Pod* out);
Status DecodeNode(const rapidjson::Value& object, Node* out);
Status DecodeElasticQuota(const rapidjson::Value& object, ElasticQuota* out);
Status DecodePriorityClass(const rapidjson::Value& object, PriorityClass* out);
Status DecodePodDisruptionBudget(const rapidjson::Value& object, PodDisruptionBudget* out);

// ElasticQuota API groups we read.
inline constexpr const char* kElasticQuotaGroup = "scheduling.x-k8s.io";
inline constexpr const char* kElasticQuotaLegacyGroup = "scheduling.sigs.k8s.io";

using KubeObject = std::variant<Pod, Node, ElasticQuota, PriorityClass, PodDisruptionBudget>;

// Decodes by `kind` (and apiVersion for ElasticQuota). Returns false with *skipped_kind set for a
// kind we do not read; an error Status for a malformed object of a kind we read.
Status DecodeKubeObject(const rapidjson::Value& object, const DecodeOptions& options,
                        std::string_view default_kind, KubeObject* out, bool* skipped,
                        std::string* kind);

// "Pod eq1/job-a" / "Node n1" for messages.
std::string DescribeObject(const rapidjson::Value& object, std::string_view default_kind);

}  // namespace capext
