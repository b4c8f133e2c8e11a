#include "config/pod_group_codec.h"

#include <limits>

#include <fmt/format.h>
#include <rapidjson/document.h>
#include <rapidjson/error/en.h>

#include "config/json_fields.h"

namespace capext {
namespace {

// Parses `json` and reads metadata.namespace/name; errors name `kind`.
Status ParseObject(std::string_view json, const char* kind, rapidjson::Document* doc,
                   std::string* ns, std::string* name) {
  doc->Parse<rapidjson::kParseIterativeFlag>(json.data(), json.size());
  if (doc->HasParseError()) {
    return Status::Error(
        fmt::format("{}: not JSON: {}", kind, rapidjson::GetParseError_En(doc->GetParseError())));
  }
  if (!doc->IsObject()) return Status::Error(fmt::format("{}: not an object", kind));
  const rapidjson::Value* meta = json::Member(*doc, "metadata");
  if (meta == nullptr || !meta->IsObject())
    return Status::Error(fmt::format("{}: metadata: missing", kind));
  if (Status s = json::ReadString(*meta, "namespace", "metadata.namespace", ns); !s.ok())
    return Status::Error(fmt::format("{}: {}", kind, s.message()));
  if (Status s = json::ReadString(*meta, "name", "metadata.name", name); !s.ok())
    return Status::Error(fmt::format("{}: {}", kind, s.message()));
  if (ns->empty() || name->empty())
    return Status::Error(
        fmt::format("{}: metadata.namespace and metadata.name are required", kind));
  return Status::Ok();
}

}  // namespace

Status DecodePodGroupObject(std::string_view json, PodGroupSpec* out) {
  rapidjson::Document doc;
  PodGroupSpec spec;
  spec.key.api_group = kCoschedulingApiGroup;
  if (Status s = ParseObject(json, "PodGroup", &doc, &spec.key.ns, &spec.key.name); !s.ok())
    return s;
  const std::string where = fmt::format("PodGroup {}/{}", spec.key.ns, spec.key.name);
  if (const rapidjson::Value* sp = json::Member(doc, "spec")) {
    if (Status s = json::ExpectObject(*sp, "spec"); !s.ok())
      return Status::Error(where + ": " + s.message());
    std::optional<int32_t> min_member, timeout;
    if (Status s = json::ReadInt32(*sp, "minMember", "spec.minMember", &min_member); !s.ok())
      return Status::Error(where + ": " + s.message());
    if (Status s =
            json::ReadInt32(*sp, "scheduleTimeoutSeconds", "spec.scheduleTimeoutSeconds", &timeout);
        !s.ok())
      return Status::Error(where + ": " + s.message());
    if (min_member.value_or(0) < 0)
      return Status::Error(fmt::format("{}: spec.minMember: {} is negative", where, *min_member));
    if (timeout.value_or(0) < 0)
      return Status::Error(
          fmt::format("{}: spec.scheduleTimeoutSeconds: {} is negative", where, *timeout));
    spec.min_member = min_member.value_or(0);
    spec.schedule_timeout_ms = int64_t{timeout.value_or(0)} * 1000;
  }
  *out = std::move(spec);
  return Status::Ok();
}

Status DecodeWorkloadObject(std::string_view json, std::vector<PodGroupSpec>* out,
                            std::string* ns_out, std::string* name_out) {
  rapidjson::Document doc;
  std::string ns, name;
  if (Status s = ParseObject(json, "Workload", &doc, &ns, &name); !s.ok()) return s;
  *ns_out = ns;
  *name_out = name;
  const std::string where = fmt::format("Workload {}/{}", ns, name);
  std::vector<PodGroupSpec> specs;
  const rapidjson::Value* sp = json::Member(doc, "spec");
  const rapidjson::Value* groups =
      sp != nullptr && sp->IsObject() ? json::Member(*sp, "podGroups") : nullptr;
  if (sp != nullptr && !sp->IsObject()) return Status::Error(where + ": spec: expected an object");
  if (groups != nullptr) {
    if (!groups->IsArray()) return Status::Error(where + ": spec.podGroups: expected an array");
    rapidjson::SizeType i = 0;
    for (const auto& group : groups->GetArray()) {
      const std::string path = fmt::format("spec.podGroups[{}]", i++);
      if (!group.IsObject()) return Status::Error(where + ": " + path + ": expected an object");
      std::string group_name;
      if (Status s = json::ReadString(group, "name", path + ".name", &group_name); !s.ok())
        return Status::Error(where + ": " + s.message());
      if (group_name.empty()) return Status::Error(where + ": " + path + ".name: missing");
      PodGroupSpec spec;
      spec.key = {kWorkloadApiGroup, ns, name + "/" + group_name};
      if (const rapidjson::Value* policy = json::Member(group, "policy")) {
        if (!policy->IsObject())
          return Status::Error(where + ": " + path + ".policy: expected an object");
        if (const rapidjson::Value* gang = json::Member(*policy, "gang")) {
          if (!gang->IsObject())
            return Status::Error(where + ": " + path + ".policy.gang: expected an object");
          std::optional<int32_t> min_count;
          if (Status s =
                  json::ReadInt32(*gang, "minCount", path + ".policy.gang.minCount", &min_count);
              !s.ok())
            return Status::Error(where + ": " + s.message());
          if (min_count.value_or(0) < 0)
            return Status::Error(fmt::format("{}: {}.policy.gang.minCount: {} is negative", where,
                                             path, *min_count));
          spec.min_member = min_count.value_or(0);
        }
      }
      specs.push_back(std::move(spec));
    }
  }
  *out = std::move(specs);
  return Status::Ok();
}

}  // namespace capext
