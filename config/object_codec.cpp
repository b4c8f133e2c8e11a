#include "config/object_codec.h"

#include <fmt/format.h>

#include "config/device_codec.h"
#include "config/json_fields.h"
#include "config/pod_workload_fields.h"
#include "core/fair_share_weight.h"
#include "core/pod_request.h"

namespace capext {
namespace {

using json::Member;

#define CE_RETURN_IF_ERROR(expr)  \
  do {                            \
    ::capext::Status _s = (expr); \
    if (!_s.ok()) return _s;      \
  } while (0)

Status ReadStringMap(const rapidjson::Value& object, std::string_view name, const std::string& path,
                     Labels* out) {
  const rapidjson::Value* v = Member(object, name);
  if (v == nullptr) return {};
  CE_RETURN_IF_ERROR(json::ExpectObject(*v, path));
  for (auto m = v->MemberBegin(); m != v->MemberEnd(); ++m) {
    if (m->value.IsNull()) continue;
    if (!m->value.IsString()) {
      return Status::Error(fmt::format("{}.{}: expected string", path, m->name.GetString()));
    }
    (*out)[m->name.GetString()] = m->value.GetString();
  }
  return {};
}

// A ResourceList of quantities in decision units. Negative amounts are rejected when
// `allow_negative` is false.
Status ReadResourceList(const rapidjson::Value& object, std::string_view name,
                        const std::string& path, bool allow_negative,
                        std::optional<ResourceList>* out) {
  const rapidjson::Value* v = Member(object, name);
  if (v == nullptr) return {};
  CE_RETURN_IF_ERROR(json::ExpectObject(*v, path));
  ResourceList list;
  for (auto m = v->MemberBegin(); m != v->MemberEnd(); ++m) {
    const std::string field = fmt::format("{}.{}", path, m->name.GetString());
    if (m->value.IsNull()) continue;
    Quantity q;
    CE_RETURN_IF_ERROR(json::ReadQuantity(m->value, field, &q));
    if (!allow_negative && q.IsNegative()) {
      return Status::Error(fmt::format("{}: negative quantity \"{}\"", field, q.ToString()));
    }
    ResourceName resource;
    if (!ResourceName::TryIntern(m->name.GetString(), &resource)) {
      return Status::Invalid(fmt::format("{}: too many distinct resource names (more than {})",
                                         field, ResourceName::kMaxResourceNames));
    }
    list.Set(resource, DecisionAmount(resource, q));
  }
  *out = std::move(list);
  return {};
}

Status ReadMetadata(const rapidjson::Value& object, std::string* ns, std::string* name,
                    std::string* uid, int64_t* creation_ms) {
  const rapidjson::Value* meta = Member(object, "metadata");
  if (meta == nullptr) return Status::Error("metadata: missing");
  CE_RETURN_IF_ERROR(json::ExpectObject(*meta, "metadata"));
  if (ns) CE_RETURN_IF_ERROR(json::ReadString(*meta, "namespace", "metadata.namespace", ns));
  CE_RETURN_IF_ERROR(json::ReadString(*meta, "name", "metadata.name", name));
  if (uid) CE_RETURN_IF_ERROR(json::ReadString(*meta, "uid", "metadata.uid", uid));
  if (creation_ms) {
    CE_RETURN_IF_ERROR(
        json::ReadTime(*meta, "creationTimestamp", "metadata.creationTimestamp", creation_ms));
  }
  return {};
}

Status ReadContainers(const rapidjson::Value& spec, std::string_view name,
                      std::vector<ContainerRequests>* out) {
  const rapidjson::Value* list = Member(spec, name);
  if (list == nullptr) return {};
  const std::string path = fmt::format("spec.{}", name);
  CE_RETURN_IF_ERROR(json::ExpectArray(*list, path));
  for (rapidjson::SizeType i = 0; i < list->Size(); ++i) {
    const std::string cpath = fmt::format("{}[{}]", path, i);
    const rapidjson::Value& c = (*list)[i];
    CE_RETURN_IF_ERROR(json::ExpectObject(c, cpath));
    ContainerRequests container;
    if (const rapidjson::Value* res = Member(c, "resources")) {
      CE_RETURN_IF_ERROR(json::ExpectObject(*res, cpath + ".resources"));
      std::optional<ResourceList> requests;
      CE_RETURN_IF_ERROR(
          ReadResourceList(*res, "requests", cpath + ".resources.requests", false, &requests));
      if (requests) container.requests = std::move(*requests);
    }
    std::string restart_policy;
    CE_RETURN_IF_ERROR(
        json::ReadString(c, "restartPolicy", cpath + ".restartPolicy", &restart_policy));
    container.restartable = restart_policy == "Always";
    out->push_back(std::move(container));
  }
  return {};
}

Status ReadStringArray(const rapidjson::Value& object, std::string_view name,
                       const std::string& path, std::vector<std::string>* out) {
  const rapidjson::Value* v = Member(object, name);
  if (v == nullptr) return {};
  CE_RETURN_IF_ERROR(json::ExpectArray(*v, path));
  for (rapidjson::SizeType i = 0; i < v->Size(); ++i) {
    if (!(*v)[i].IsString()) return Status::Error(fmt::format("{}[{}]: expected string", path, i));
    out->emplace_back((*v)[i].GetString(), (*v)[i].GetStringLength());
  }
  return {};
}

Status ReadRequirements(const rapidjson::Value& object, std::string_view name,
                        const std::string& path, std::vector<NodeSelectorRequirement>* out) {
  const rapidjson::Value* v = Member(object, name);
  if (v == nullptr) return {};
  CE_RETURN_IF_ERROR(json::ExpectArray(*v, path));
  for (rapidjson::SizeType i = 0; i < v->Size(); ++i) {
    const std::string rpath = fmt::format("{}[{}]", path, i);
    CE_RETURN_IF_ERROR(json::ExpectObject((*v)[i], rpath));
    NodeSelectorRequirement req;
    CE_RETURN_IF_ERROR(json::ReadString((*v)[i], "key", rpath + ".key", &req.key));
    CE_RETURN_IF_ERROR(json::ReadString((*v)[i], "operator", rpath + ".operator", &req.op));
    CE_RETURN_IF_ERROR(ReadStringArray((*v)[i], "values", rpath + ".values", &req.values));
    out->push_back(std::move(req));
  }
  return {};
}

Status ReadAffinity(const rapidjson::Value& spec, Pod* pod) {
  const rapidjson::Value* affinity = Member(spec, "affinity");
  if (affinity == nullptr) return {};
  CE_RETURN_IF_ERROR(json::ExpectObject(*affinity, "spec.affinity"));
  const rapidjson::Value* node_affinity = Member(*affinity, "nodeAffinity");
  if (node_affinity == nullptr) return {};
  CE_RETURN_IF_ERROR(json::ExpectObject(*node_affinity, "spec.affinity.nodeAffinity"));
  const rapidjson::Value* required =
      Member(*node_affinity, "requiredDuringSchedulingIgnoredDuringExecution");
  if (required == nullptr) return {};
  const std::string path =
      "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution";
  CE_RETURN_IF_ERROR(json::ExpectObject(*required, path));
  const rapidjson::Value* terms = Member(*required, "nodeSelectorTerms");
  if (terms == nullptr) return {};
  CE_RETURN_IF_ERROR(json::ExpectArray(*terms, path + ".nodeSelectorTerms"));
  for (rapidjson::SizeType i = 0; i < terms->Size(); ++i) {
    const std::string tpath = fmt::format("{}.nodeSelectorTerms[{}]", path, i);
    CE_RETURN_IF_ERROR(json::ExpectObject((*terms)[i], tpath));
    NodeSelectorTerm term;
    CE_RETURN_IF_ERROR(ReadRequirements((*terms)[i], "matchExpressions",
                                        tpath + ".matchExpressions", &term.match_expressions));
    CE_RETURN_IF_ERROR(
        ReadRequirements((*terms)[i], "matchFields", tpath + ".matchFields", &term.match_fields));
    pod->required_affinity.push_back(std::move(term));
  }
  return {};
}

Status ReadTolerations(const rapidjson::Value& spec, Pod* pod) {
  const rapidjson::Value* list = Member(spec, "tolerations");
  if (list == nullptr) return {};
  CE_RETURN_IF_ERROR(json::ExpectArray(*list, "spec.tolerations"));
  for (rapidjson::SizeType i = 0; i < list->Size(); ++i) {
    const std::string path = fmt::format("spec.tolerations[{}]", i);
    const rapidjson::Value& t = (*list)[i];
    CE_RETURN_IF_ERROR(json::ExpectObject(t, path));
    Toleration tol;
    CE_RETURN_IF_ERROR(json::ReadString(t, "key", path + ".key", &tol.key));
    CE_RETURN_IF_ERROR(json::ReadString(t, "operator", path + ".operator", &tol.op));
    CE_RETURN_IF_ERROR(json::ReadString(t, "value", path + ".value", &tol.value));
    CE_RETURN_IF_ERROR(json::ReadString(t, "effect", path + ".effect", &tol.effect));
    pod->tolerations.push_back(std::move(tol));
  }
  return {};
}

Status ReadPreemptionPolicy(const rapidjson::Value& object, const std::string& path,
                            std::optional<PreemptionPolicy>* out) {
  std::string text;
  CE_RETURN_IF_ERROR(json::ReadString(object, "preemptionPolicy", path, &text));
  if (text.empty()) return {};
  if (text == "Never") {
    *out = PreemptionPolicy::kNever;
  } else if (text == "PreemptLowerPriority") {
    *out = PreemptionPolicy::kPreemptLowerPriority;
  } else {
    return Status::Error(fmt::format("{}: unknown preemption policy \"{}\"", path, text));
  }
  return {};
}

Status DecodePodBody(const rapidjson::Value& object, const DecodeOptions& options, Pod* pod) {
  CE_RETURN_IF_ERROR(ReadMetadata(object, &pod->ns, &pod->name, &pod->uid, &pod->creation_ms));
  if (pod->ns.empty()) pod->ns = "default";
  const rapidjson::Value& meta = *Member(object, "metadata");
  CE_RETURN_IF_ERROR(ReadStringMap(meta, "labels", "metadata.labels", &pod->labels));
  int64_t deletion_ms = 0;
  CE_RETURN_IF_ERROR(
      json::ReadTime(meta, "deletionTimestamp", "metadata.deletionTimestamp", &deletion_ms));
  pod->terminating = deletion_ms != 0;
  CE_RETURN_IF_ERROR(json::ReadString(meta, "resourceVersion", "metadata.resourceVersion",
                                      &pod->patch_basis.resource_version));
  PodWorkloadText workload;
  if (const rapidjson::Value* ann = Member(meta, "annotations")) {
    CE_RETURN_IF_ERROR(json::ExpectObject(*ann, "metadata.annotations"));
    pod->patch_basis.has_annotations = true;
    if (!options.accelerator_model_annotation.empty()) {
      CE_RETURN_IF_ERROR(json::ReadString(*ann, options.accelerator_model_annotation,
                                          "metadata.annotations", &pod->accelerator_model));
    }
    CE_RETURN_IF_ERROR(json::ReadString(*ann, kReclaimRecordAnnotation, "metadata.annotations",
                                        &pod->reclaim_record));
    CE_RETURN_IF_ERROR(
        json::ReadString(*ann, kMinMemberAnnotation, "metadata.annotations", &workload.min_member));
    CE_RETURN_IF_ERROR(json::ReadString(*ann, kAdmittedAtAnnotation, "metadata.annotations",
                                        &workload.admitted_at));
  }
  CE_RETURN_IF_ERROR(ReadOwnerReferences(meta, &workload.has_controller));

  std::vector<ContainerRequests> containers, init_containers;
  std::optional<ResourceList> overhead;
  if (const rapidjson::Value* spec = Member(object, "spec")) {
    CE_RETURN_IF_ERROR(json::ExpectObject(*spec, "spec"));
    CE_RETURN_IF_ERROR(json::ReadString(*spec, "nodeName", "spec.nodeName", &pod->node_name));
    CE_RETURN_IF_ERROR(
        json::ReadString(*spec, "schedulerName", "spec.schedulerName", &pod->scheduler_name));
    CE_RETURN_IF_ERROR(json::ReadInt32(*spec, "priority", "spec.priority", &pod->spec_priority));
    CE_RETURN_IF_ERROR(json::ReadString(*spec, "priorityClassName", "spec.priorityClassName",
                                        &pod->priority_class_name));
    CE_RETURN_IF_ERROR(
        ReadPreemptionPolicy(*spec, "spec.preemptionPolicy", &pod->spec_preemption_policy));
    CE_RETURN_IF_ERROR(
        ReadStringMap(*spec, "nodeSelector", "spec.nodeSelector", &pod->node_selector));
    CE_RETURN_IF_ERROR(ReadTolerations(*spec, pod));
    CE_RETURN_IF_ERROR(ReadAffinity(*spec, pod));
    CE_RETURN_IF_ERROR(ReadContainers(*spec, "containers", &containers));
    CE_RETURN_IF_ERROR(ReadContainers(*spec, "initContainers", &init_containers));
    CE_RETURN_IF_ERROR(ReadResourceList(*spec, "overhead", "spec.overhead", false, &overhead));
    CE_RETURN_IF_ERROR(DecodePodClaims(*spec, pod));
    CE_RETURN_IF_ERROR(ReadSchedulingGates(*spec, &workload));
    CE_RETURN_IF_ERROR(ReadWorkloadRef(*spec, &workload));
  }
  ApplyWorkloadFields(workload, pod);
  pod->requests =
      EffectivePodRequest(containers, init_containers, overhead.value_or(ResourceList{}));

  if (const rapidjson::Value* status = Member(object, "status")) {
    CE_RETURN_IF_ERROR(json::ExpectObject(*status, "status"));
    std::string phase;
    CE_RETURN_IF_ERROR(json::ReadString(*status, "phase", "status.phase", &phase));
    if (phase == "Running") {
      pod->phase = PodPhase::kRunning;
    } else if (phase == "Succeeded") {
      pod->phase = PodPhase::kSucceeded;
    } else if (phase == "Failed") {
      pod->phase = PodPhase::kFailed;
    } else if (phase == "Unknown") {
      pod->phase = PodPhase::kUnknown;
    }
    CE_RETURN_IF_ERROR(json::ReadString(*status, "nominatedNodeName", "status.nominatedNodeName",
                                        &pod->nominated_node_name));
    CE_RETURN_IF_ERROR(json::ReadTime(*status, "startTime", "status.startTime", &pod->start_ms));
    CE_RETURN_IF_ERROR(DecodePodClaimStatuses(*status, pod));
    if (const rapidjson::Value* conditions = Member(*status, "conditions")) {
      CE_RETURN_IF_ERROR(json::ExpectArray(*conditions, "status.conditions"));
      for (rapidjson::SizeType i = 0; i < conditions->Size(); ++i) {
        const rapidjson::Value& c = (*conditions)[i];
        if (!c.IsObject()) continue;
        const std::string cpath = fmt::format("status.conditions[{}]", i);
        std::string type, cstatus, reason;
        CE_RETURN_IF_ERROR(json::ReadString(c, "type", cpath + ".type", &type));
        CE_RETURN_IF_ERROR(json::ReadString(c, "status", cpath + ".status", &cstatus));
        CE_RETURN_IF_ERROR(json::ReadString(c, "reason", cpath + ".reason", &reason));
        if (type == "PodScheduled" && cstatus == "False" && reason == "Unschedulable") {
          pod->unschedulable_condition = true;
        }
      }
    }
  }
  return {};
}

}  // namespace

Status DecodePod(const rapidjson::Value& object, const DecodeOptions& options, Pod* out) {
  CE_RETURN_IF_ERROR(json::ExpectObject(object, "Pod"));
  Pod pod;
  CE_RETURN_IF_ERROR(DecodePodBody(object, options, &pod));
  *out = std::move(pod);
  return {};
}

Status DecodeNode(const rapidjson::Value& object, Node* out) {
  CE_RETURN_IF_ERROR(json::ExpectObject(object, "Node"));
  Node node;
  CE_RETURN_IF_ERROR(ReadMetadata(object, nullptr, &node.name, nullptr, nullptr));
  CE_RETURN_IF_ERROR(
      ReadStringMap(*Member(object, "metadata"), "labels", "metadata.labels", &node.labels));
  if (const rapidjson::Value* spec = Member(object, "spec")) {
    CE_RETURN_IF_ERROR(json::ExpectObject(*spec, "spec"));
    CE_RETURN_IF_ERROR(
        json::ReadBool(*spec, "unschedulable", "spec.unschedulable", &node.unschedulable));
    if (const rapidjson::Value* taints = Member(*spec, "taints")) {
      CE_RETURN_IF_ERROR(json::ExpectArray(*taints, "spec.taints"));
      for (rapidjson::SizeType i = 0; i < taints->Size(); ++i) {
        const std::string path = fmt::format("spec.taints[{}]", i);
        CE_RETURN_IF_ERROR(json::ExpectObject((*taints)[i], path));
        Taint taint;
        CE_RETURN_IF_ERROR(json::ReadString((*taints)[i], "key", path + ".key", &taint.key));
        CE_RETURN_IF_ERROR(json::ReadString((*taints)[i], "value", path + ".value", &taint.value));
        CE_RETURN_IF_ERROR(
            json::ReadString((*taints)[i], "effect", path + ".effect", &taint.effect));
        node.taints.push_back(std::move(taint));
      }
    }
  }
  if (const rapidjson::Value* status = Member(object, "status")) {
    CE_RETURN_IF_ERROR(json::ExpectObject(*status, "status"));
    std::optional<ResourceList> allocatable, capacity;
    CE_RETURN_IF_ERROR(
        ReadResourceList(*status, "allocatable", "status.allocatable", false, &allocatable));
    CE_RETURN_IF_ERROR(ReadResourceList(*status, "capacity", "status.capacity", false, &capacity));
    node.allocatable = allocatable ? std::move(*allocatable) : capacity.value_or(ResourceList{});
  }
  *out = std::move(node);
  return {};
}

Status DecodeElasticQuota(const rapidjson::Value& object, ElasticQuota* out) {
  CE_RETURN_IF_ERROR(json::ExpectObject(object, "ElasticQuota"));
  ElasticQuota eq;
  CE_RETURN_IF_ERROR(ReadMetadata(object, &eq.ns, &eq.name, &eq.uid, &eq.creation_ms));
  if (eq.ns.empty()) eq.ns = "default";
  const rapidjson::Value& meta = *Member(object, "metadata");
  CE_RETURN_IF_ERROR(
      json::ReadString(meta, "resourceVersion", "metadata.resourceVersion", &eq.resource_version));
  if (const rapidjson::Value* ann = Member(meta, "annotations")) {
    CE_RETURN_IF_ERROR(json::ExpectObject(*ann, "metadata.annotations"));
    CE_RETURN_IF_ERROR(
        json::ReadString(*ann, kParentQuotaAnnotation, "metadata.annotations", &eq.parent));
    // docs/fair-sharing.md#1-weights: invalid reads as 1, with the reason kept for /quotas.
    std::string weight;
    CE_RETURN_IF_ERROR(
        json::ReadString(*ann, kFairShareWeightAnnotation, "metadata.annotations", &weight));
    if (!weight.empty()) {
      Status s = ParseFairShareWeight(weight, &eq.weight_milli);
      if (!s.ok()) {
        eq.weight_milli = kDefaultWeightMilli;
        eq.weight_problem = s.message();
      }
    }
  }
  std::string api_version;
  CE_RETURN_IF_ERROR(json::ReadString(object, "apiVersion", "apiVersion", &api_version));
  eq.api_group = api_version.substr(0, api_version.find('/'));
  if (const rapidjson::Value* spec = Member(object, "spec")) {
    CE_RETURN_IF_ERROR(json::ExpectObject(*spec, "spec"));
    CE_RETURN_IF_ERROR(ReadResourceList(*spec, "min", "spec.min", true, &eq.min));
    CE_RETURN_IF_ERROR(ReadResourceList(*spec, "max", "spec.max", true, &eq.max));
  }
  if (const rapidjson::Value* status = Member(object, "status"); status && status->IsObject()) {
    CE_RETURN_IF_ERROR(ReadResourceList(*status, "used", "status.used", true, &eq.status_used));
  }
  *out = std::move(eq);
  return {};
}

Status DecodePriorityClass(const rapidjson::Value& object, PriorityClass* out) {
  CE_RETURN_IF_ERROR(json::ExpectObject(object, "PriorityClass"));
  PriorityClass pc;
  CE_RETURN_IF_ERROR(ReadMetadata(object, nullptr, &pc.name, nullptr, nullptr));
  std::optional<int32_t> value;
  CE_RETURN_IF_ERROR(json::ReadInt32(object, "value", "value", &value));
  pc.value = value.value_or(0);
  CE_RETURN_IF_ERROR(json::ReadBool(object, "globalDefault", "globalDefault", &pc.global_default));
  std::optional<PreemptionPolicy> policy;
  CE_RETURN_IF_ERROR(ReadPreemptionPolicy(object, "preemptionPolicy", &policy));
  pc.preemption_policy = policy.value_or(PreemptionPolicy::kPreemptLowerPriority);
  *out = std::move(pc);
  return {};
}

Status DecodePodDisruptionBudget(const rapidjson::Value& object, PodDisruptionBudget* out) {
  CE_RETURN_IF_ERROR(json::ExpectObject(object, "PodDisruptionBudget"));
  PodDisruptionBudget pdb;
  CE_RETURN_IF_ERROR(ReadMetadata(object, &pdb.ns, &pdb.name, nullptr, nullptr));
  if (pdb.ns.empty()) pdb.ns = "default";
  if (const rapidjson::Value* spec = Member(object, "spec")) {
    CE_RETURN_IF_ERROR(json::ExpectObject(*spec, "spec"));
    if (const rapidjson::Value* sel = Member(*spec, "selector")) {
      CE_RETURN_IF_ERROR(json::ExpectObject(*sel, "spec.selector"));
      LabelSelector selector;
      CE_RETURN_IF_ERROR(
          ReadStringMap(*sel, "matchLabels", "spec.selector.matchLabels", &selector.match_labels));
      std::vector<NodeSelectorRequirement> exprs;
      CE_RETURN_IF_ERROR(
          ReadRequirements(*sel, "matchExpressions", "spec.selector.matchExpressions", &exprs));
      for (auto& e : exprs) {
        selector.match_expressions.push_back(
            {std::move(e.key), std::move(e.op), std::move(e.values)});
      }
      pdb.selector = std::move(selector);
    }
  }
  if (const rapidjson::Value* status = Member(object, "status")) {
    CE_RETURN_IF_ERROR(json::ExpectObject(*status, "status"));
    std::optional<int32_t> allowed;
    CE_RETURN_IF_ERROR(
        json::ReadInt32(*status, "disruptionsAllowed", "status.disruptionsAllowed", &allowed));
    pdb.disruptions_allowed = allowed.value_or(0);
    if (const rapidjson::Value* disrupted = Member(*status, "disruptedPods")) {
      CE_RETURN_IF_ERROR(json::ExpectObject(*disrupted, "status.disruptedPods"));
      for (auto m = disrupted->MemberBegin(); m != disrupted->MemberEnd(); ++m) {
        pdb.disrupted_pods.emplace_back(m->name.GetString());
      }
    }
  }
  *out = std::move(pdb);
  return {};
}

std::string DescribeObject(const rapidjson::Value& object, std::string_view default_kind) {
  std::string kind(default_kind), ns, name;
  if (object.IsObject()) {
    (void)json::ReadString(object, "kind", "kind", &kind);
    if (const rapidjson::Value* meta = Member(object, "metadata"); meta && meta->IsObject()) {
      (void)json::ReadString(*meta, "namespace", "", &ns);
      (void)json::ReadString(*meta, "name", "", &name);
    }
  }
  if (kind.empty()) kind = "object";
  if (name.empty()) return kind;
  return ns.empty() ? fmt::format("{} {}", kind, name) : fmt::format("{} {}/{}", kind, ns, name);
}

Status DecodeKubeObject(const rapidjson::Value& object, const DecodeOptions& options,
                        std::string_view default_kind, KubeObject* out, bool* skipped,
                        std::string* kind) {
  *skipped = false;
  if (!object.IsObject()) return Status::Error("expected an object");
  kind->assign(default_kind);
  CE_RETURN_IF_ERROR(json::ReadString(object, "kind", "kind", kind));
  std::string api_version;
  CE_RETURN_IF_ERROR(json::ReadString(object, "apiVersion", "apiVersion", &api_version));
  const std::string group = api_version.substr(0, api_version.find('/'));
  // List items from the API server carry no apiVersion: the informer's kind stands for it.
  const bool dra_group = api_version.empty() || group == kResourceGroup;
  Status s;
  if (*kind == "Pod") {
    Pod pod;
    s = DecodePod(object, options, &pod);
    *out = std::move(pod);
  } else if (*kind == "Node") {
    Node node;
    s = DecodeNode(object, &node);
    *out = std::move(node);
  } else if (*kind == "ElasticQuota" && (api_version.empty() || group == kElasticQuotaGroup ||
                                         group == kElasticQuotaLegacyGroup)) {
    ElasticQuota eq;
    s = DecodeElasticQuota(object, &eq);
    *out = std::move(eq);
  } else if (*kind == "PriorityClass") {
    PriorityClass pc;
    s = DecodePriorityClass(object, &pc);
    *out = std::move(pc);
  } else if (*kind == "PodDisruptionBudget") {
    PodDisruptionBudget pdb;
    s = DecodePodDisruptionBudget(object, &pdb);
    *out = std::move(pdb);
  } else if (dra_group && *kind == "ResourceClaim") {
    ResourceClaim claim;
    s = DecodeResourceClaim(object, &claim);
    *out = std::move(claim);
  } else if (dra_group && *kind == "ResourceClaimTemplate") {
    ResourceClaimTemplate tmpl;
    s = DecodeResourceClaimTemplate(object, &tmpl);
    *out = KubeClaimTemplate{std::move(tmpl)};
  } else if (dra_group && *kind == "DeviceClass") {
    DeviceClass device_class;
    s = DecodeDeviceClass(object, &device_class);
    *out = std::move(device_class);
  } else {
    *skipped = true;
  }
  return s;
}

}  // namespace capext
