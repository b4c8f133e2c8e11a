#include "config/pod_mutation.h"

#include <algorithm>

#include <fmt/format.h>
#include <rapidjson/document.h>
#include <rapidjson/error/en.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "config/admission_review_envelope.h"
#include "config/base64.h"
#include "config/json_fields.h"

namespace capext {
namespace {

// A string member, or "" when absent or null; an error when present with another type.
Status StringAt(const rapidjson::Value& object, std::string_view name, const std::string& path,
                std::string* out) {
  out->clear();
  return json::ReadString(object, name, path, out);
}

struct PodFacts {
  std::string ns, name, generate_name, node_name, scheduler_name;
  bool has_gates_field = false;  // spec.schedulingGates present and not null
  bool has_our_gate = false;
  bool has_annotations = false;  // metadata.annotations present and not null
};

// The fields of request.object the decision reads; errors name the field.
Status ReadPod(const rapidjson::Value& object, PodFacts* pod) {
  if (Status s = json::ExpectObject(object, "request.object"); !s.ok()) return s;
  if (const rapidjson::Value* meta = json::Member(object, "metadata")) {
    if (Status s = json::ExpectObject(*meta, "request.object.metadata"); !s.ok()) return s;
    if (Status s = StringAt(*meta, "namespace", "request.object.metadata.namespace", &pod->ns);
        !s.ok())
      return s;
    if (Status s = StringAt(*meta, "name", "request.object.metadata.name", &pod->name); !s.ok())
      return s;
    if (Status s = StringAt(*meta, "generateName", "request.object.metadata.generateName",
                            &pod->generate_name);
        !s.ok())
      return s;
    if (const rapidjson::Value* annotations = json::Member(*meta, "annotations")) {
      if (Status s = json::ExpectObject(*annotations, "request.object.metadata.annotations");
          !s.ok())
        return s;
      pod->has_annotations = true;
    }
  }
  const rapidjson::Value* spec = json::Member(object, "spec");
  if (spec == nullptr) return Status::Error("request.object.spec: missing");
  if (Status s = json::ExpectObject(*spec, "request.object.spec"); !s.ok()) return s;
  if (Status s = StringAt(*spec, "nodeName", "request.object.spec.nodeName", &pod->node_name);
      !s.ok())
    return s;
  if (Status s = StringAt(*spec, "schedulerName", "request.object.spec.schedulerName",
                          &pod->scheduler_name);
      !s.ok())
    return s;
  if (const rapidjson::Value* gates = json::Member(*spec, "schedulingGates")) {
    if (Status s = json::ExpectArray(*gates, "request.object.spec.schedulingGates"); !s.ok())
      return s;
    pod->has_gates_field = true;
    rapidjson::SizeType i = 0;
    for (const auto& gate : gates->GetArray()) {
      const std::string path = fmt::format("request.object.spec.schedulingGates[{}]", i++);
      if (Status s = json::ExpectObject(gate, path); !s.ok()) return s;
      std::string name;
      if (Status s = StringAt(gate, "name", path + ".name", &name); !s.ok()) return s;
      if (name == kQuotaGate) pod->has_our_gate = true;
    }
  }
  return Status::Ok();
}

std::string Patch(bool has_gates_field) {
  // Appending keeps other gates and their order; a missing (or null) list is created whole.
  return has_gates_field
             ? fmt::format(
                   R"([{{"op":"add","path":"/spec/schedulingGates/-","value":{{"name":"{}"}}}}])",
                   kQuotaGate)
             : fmt::format(
                   R"([{{"op":"add","path":"/spec/schedulingGates","value":[{{"name":"{}"}}]}}])",
                   kQuotaGate);
}

// Admission at creation's patch (docs/workloads-live.md#admission-at-creation): the admitted-at
// annotation, added to the map or as a new map.
std::string AdmittedAtPatch(bool has_annotations, const std::string& admitted_at) {
  rapidjson::StringBuffer body;
  rapidjson::Writer<rapidjson::StringBuffer> w(body);
  w.StartArray();
  w.StartObject();
  w.Key("op");
  w.String("add");
  w.Key("path");
  if (has_annotations) {
    w.String("/metadata/annotations/" + json::PointerToken(kAdmittedAtAnnotation));
    w.Key("value");
    w.String(admitted_at);
  } else {
    w.String("/metadata/annotations");
    w.Key("value");
    w.StartObject();
    w.Key(kAdmittedAtAnnotation);
    w.String(admitted_at);
    w.EndObject();
  }
  w.EndObject();
  w.EndArray();
  return std::string(body.GetString(), body.GetSize());
}

// Why a pod the rules gate cannot be admitted at its creation whatever its quota says; "" when
// it may be (a single pod without other gates or claims).
std::string NotSingle(const Pod& pod) {
  if (!pod.group.empty()) return "a member of a group";
  if (pod.min_member_annotation > 0) return "carries min-member";
  if (pod.other_gates) return "has other scheduling gates";
  if (!pod.resource_claims.empty()) return "has resource claims";
  return "";
}

// The gate, or (admission at creation) the admitted-at annotation, for a pod the rules gate.
Status GateOrAdmit(const rapidjson::Value& object, const PodFacts& facts, const std::string& ns,
                   bool dry_run, const PodMutationOptions& options, PodMutationDecision* d) {
  d->gated = true;
  d->patch = Patch(facts.has_gates_field);
  if (!options.admit_at_creation) return Status::Ok();
  if (dry_run) {
    d->why_not = "a dry run";
    return Status::Ok();
  }
  Pod pod;
  if (Status s = DecodePod(object, options.decode, &pod); !s.ok()) {
    d->why_not = "not decoded: " + s.message();
    return Status::Ok();
  }
  pod.ns = ns;
  if (std::string why = NotSingle(pod); !why.empty()) {
    d->why_not = std::move(why);
    return Status::Ok();
  }
  CreationAdmission a = options.admit_at_creation(std::move(pod));
  switch (a.verdict) {
    case CreationAdmission::Verdict::kGate:
      d->why_not = std::move(a.why_not);
      return Status::Ok();
    case CreationAdmission::Verdict::kAdmit:
      d->gated = false;
      d->admitted = true;
      d->patch = AdmittedAtPatch(facts.has_annotations, a.admitted_at);
      return Status::Ok();
    case CreationAdmission::Verdict::kAlreadyAdmitted:
      d->gated = false;
      d->admitted = true;
      d->patch.clear();
      d->why_not = "admitted at creation already";
      return Status::Ok();
  }
  return Status::Ok();
}

Status Decide(const rapidjson::Document& review, const PodMutationOptions& options,
              PodMutationDecision* d) {
  if (!review.IsObject()) return Status::Error("expected an AdmissionReview object");
  std::string api_version, kind;
  if (Status s = StringAt(review, "apiVersion", "apiVersion", &api_version); !s.ok()) return s;
  if (Status s = StringAt(review, "kind", "kind", &kind); !s.ok()) return s;
  if (api_version != kAdmissionApiVersion || kind != "AdmissionReview") {
    return Status::Error(
        fmt::format("expected apiVersion {} and kind AdmissionReview, got \"{}\" and \"{}\"",
                    kAdmissionApiVersion, api_version, kind));
  }
  const rapidjson::Value* request = json::Member(review, "request");
  if (request == nullptr) return Status::Error("request: missing");
  if (Status s = json::ExpectObject(*request, "request"); !s.ok()) return s;
  if (Status s = StringAt(*request, "uid", "request.uid", &d->uid); !s.ok()) return s;
  if (d->uid.empty()) return Status::Error("request.uid: missing");
  std::string operation, sub_resource, request_ns, resource_kind;
  if (Status s = StringAt(*request, "operation", "request.operation", &operation); !s.ok())
    return s;
  if (Status s = StringAt(*request, "subResource", "request.subResource", &sub_resource); !s.ok())
    return s;
  if (Status s = StringAt(*request, "namespace", "request.namespace", &request_ns); !s.ok())
    return s;
  if (const rapidjson::Value* k = json::Member(*request, "kind")) {
    if (Status s = json::ExpectObject(*k, "request.kind"); !s.ok()) return s;
    if (Status s = StringAt(*k, "kind", "request.kind.kind", &resource_kind); !s.ok()) return s;
  }
  bool dry_run = false;
  if (Status s = json::ReadBool(*request, "dryRun", "request.dryRun", &dry_run); !s.ok()) return s;
  if (operation.empty()) return Status::Error("request.operation: missing");
  if (operation != "CREATE" || resource_kind != "Pod" || !sub_resource.empty()) {
    d->why_not = fmt::format("not a Pod CREATE ({} {}{})", operation,
                             resource_kind.empty() ? "?" : resource_kind,
                             sub_resource.empty() ? "" : "/" + sub_resource);
    return Status::Ok();
  }
  const rapidjson::Value* object = json::Member(*request, "object");
  if (object == nullptr) return Status::Error("request.object: missing");
  PodFacts pod;
  if (Status s = ReadPod(*object, &pod); !s.ok()) return s;
  // On CREATE the object's namespace may be empty: the request's is the one the pod gets.
  const std::string& ns = request_ns.empty() ? pod.ns : request_ns;
  if (ns.empty()) return Status::Error("request.namespace: missing");
  d->pod = ns + "/" + (pod.name.empty() ? pod.generate_name + "*" : pod.name);
  const std::string scheduler =
      pod.scheduler_name.empty() ? std::string("default-scheduler") : pod.scheduler_name;
  if (!options.gating) {
    d->why_not = "admission mode is filter";
  } else if (!pod.node_name.empty()) {
    d->why_not = "spec.nodeName is set";
  } else if (std::find(options.scheduler_names.begin(), options.scheduler_names.end(), scheduler) ==
             options.scheduler_names.end()) {
    d->why_not = fmt::format("schedulerName {} is not gated", scheduler);
  } else if (pod.has_our_gate) {
    d->why_not = "already gated";
  } else if (!options.governed || !options.governed(ns)) {
    d->why_not = fmt::format("namespace {} has no ElasticQuota", ns);
  } else {
    return GateOrAdmit(*object, pod, ns, dry_run, options, d);
  }
  return Status::Ok();
}

std::string WriteResponse(const PodMutationDecision& d) {
  return WriteAdmissionReviewResponse(d.uid, true, [&](AdmissionResponseWriter& w) {
    if (d.patch.empty()) return;
    w.Key("patchType");
    w.String("JSONPatch");
    w.Key("patch");
    w.String(Base64(d.patch));
  });
}

}  // namespace

std::vector<std::string> SplitSchedulerNames(std::string_view text) {
  std::vector<std::string> out;
  while (!text.empty()) {
    const size_t comma = text.find(',');
    std::string_view part = text.substr(0, comma);
    while (!part.empty() && part.front() == ' ')
      part.remove_prefix(1);
    while (!part.empty() && part.back() == ' ')
      part.remove_suffix(1);
    if (!part.empty()) out.emplace_back(part);
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
  return out;
}

Status ReviewPodMutation(std::string_view body, const PodMutationOptions& options,
                         std::string* response_json, PodMutationDecision* decision) {
  rapidjson::Document review;
  // Iterative parsing: a body of nested brackets cannot exhaust the stack.
  review.Parse<rapidjson::kParseIterativeFlag>(body.data(), body.size());
  if (review.HasParseError()) {
    return Status::Error(fmt::format("request body is not JSON: {} at offset {}",
                                     rapidjson::GetParseError_En(review.GetParseError()),
                                     review.GetErrorOffset()));
  }
  PodMutationDecision d;
  if (Status s = Decide(review, options, &d); !s.ok()) return s;
  *response_json = WriteResponse(d);
  if (decision != nullptr) *decision = std::move(d);
  return Status::Ok();
}

}  // namespace capext
