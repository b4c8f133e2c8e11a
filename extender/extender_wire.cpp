#include "extender/extender_wire.h"

#include <rapidjson/error/en.h>

#include <fmt/format.h>

#include "config/json_fields.h"

namespace capext {

Status ParseRequestBody(std::string& body, rapidjson::Document* doc) {
  if (body.empty()) return Status::Error("empty request body: expected a JSON object");
  constexpr unsigned kFlags = rapidjson::kParseInsituFlag | rapidjson::kParseIterativeFlag |
                              rapidjson::kParseValidateEncodingFlag;
  doc->ParseInsitu<kFlags>(body.data());
  if (doc->HasParseError()) {
    return Status::Error(fmt::format("invalid JSON at byte {}: {}", doc->GetErrorOffset(),
                                     rapidjson::GetParseError_En(doc->GetParseError())));
  }
  if (!doc->IsObject()) return Status::Error("expected a JSON object at the top level");
  return {};
}

namespace {

Status DecodePodMember(const rapidjson::Value& doc, const DecodeOptions& options, Pod* pod) {
  const rapidjson::Value* v = json::Member(doc, "Pod");
  if (v == nullptr) return Status::Error("missing Pod");
  if (!v->IsObject()) return Status::Error("Pod: expected an object");
  Status s = DecodePod(*v, options, pod);
  if (!s.ok()) return s.WithContext("Pod");
  if (pod->name.empty()) return Status::Error("Pod: metadata.name is empty");
  return {};
}

Status ReadNameArray(const rapidjson::Value& v, const char* what, std::vector<std::string>* out) {
  if (!v.IsArray()) return Status::Error(fmt::format("{}: expected an array of strings", what));
  out->reserve(v.Size());
  for (rapidjson::SizeType i = 0; i < v.Size(); ++i) {
    if (!v[i].IsString()) return Status::Error(fmt::format("{}[{}]: expected a string", what, i));
    out->emplace_back(v[i].GetString(), v[i].GetStringLength());
  }
  return {};
}

Status ReadVictimMapKeys(const rapidjson::Value& v, const char* what,
                         std::vector<std::string>* out) {
  if (!v.IsObject()) return Status::Error(fmt::format("{}: expected an object", what));
  for (auto m = v.MemberBegin(); m != v.MemberEnd(); ++m) {
    if (!m->value.IsObject() && !m->value.IsNull()) {
      return Status::Error(fmt::format("{}.{}: expected an object", what, m->name.GetString()));
    }
    out->emplace_back(m->name.GetString(), m->name.GetStringLength());
  }
  return {};
}

}  // namespace

Status DecodeExtenderArgs(const rapidjson::Document& doc, const DecodeOptions& options,
                          ExtenderArgs* out) {
  if (Status s = DecodePodMember(doc, options, &out->pod); !s.ok()) return s;
  if (const rapidjson::Value* names = json::Member(doc, "NodeNames")) {
    out->node_names_mode = true;
    if (Status s = ReadNameArray(*names, "NodeNames", &out->node_names); !s.ok()) return s;
  }
  if (const rapidjson::Value* nodes = json::Member(doc, "Nodes")) {
    if (!nodes->IsObject()) return Status::Error("Nodes: expected a NodeList object");
    const rapidjson::Value* items = json::Member(*nodes, "items");
    if (items != nullptr) {
      if (!items->IsArray()) return Status::Error("Nodes.items: expected an array");
      if (!out->node_names_mode) {
        out->node_items = items;
        for (rapidjson::SizeType i = 0; i < items->Size(); ++i) {
          const rapidjson::Value& item = (*items)[i];
          std::string name;
          const rapidjson::Value* meta = item.IsObject() ? json::Member(item, "metadata") : nullptr;
          if (meta == nullptr || !meta->IsObject() ||
              !json::ReadString(*meta, "name", "metadata.name", &name).ok() || name.empty()) {
            return Status::Error(fmt::format("Nodes.items[{}]: missing metadata.name", i));
          }
          out->node_names.push_back(std::move(name));
        }
      }
    }
  }
  return {};
}

Status DecodeExtenderPreemptionArgs(const rapidjson::Document& doc, const DecodeOptions& options,
                                    ExtenderPreemptionArgs* out) {
  if (Status s = DecodePodMember(doc, options, &out->pod); !s.ok()) return s;
  if (const rapidjson::Value* meta = json::Member(doc, "NodeNameToMetaVictims")) {
    return ReadVictimMapKeys(*meta, "NodeNameToMetaVictims", &out->node_names);
  }
  if (const rapidjson::Value* full = json::Member(doc, "NodeNameToVictims")) {
    return ReadVictimMapKeys(*full, "NodeNameToVictims", &out->node_names);
  }
  return {};
}

Status DecodeExtenderBindingArgs(const rapidjson::Document& doc, ExtenderBindingArgs* out) {
  struct Field {
    const char* name;
    std::string* target;
  } fields[] = {{"PodName", &out->pod_name},
                {"PodNamespace", &out->pod_namespace},
                {"PodUID", &out->pod_uid},
                {"Node", &out->node}};
  for (const auto& f : fields) {
    if (Status s = json::ReadString(doc, f.name, f.name, f.target); !s.ok()) return s;
  }
  if (out->pod_name.empty()) return Status::Error("missing PodName");
  if (out->node.empty()) return Status::Error("missing Node");
  if (out->pod_namespace.empty()) out->pod_namespace = "default";
  return {};
}

std::string ErrorJson(const std::string& message) {
  rapidjson::StringBuffer buffer;
  JsonWriter w(buffer);
  w.StartObject();
  w.Key("error");
  w.String(message.c_str(), static_cast<rapidjson::SizeType>(message.size()));
  w.EndObject();
  return std::string(buffer.GetString(), buffer.GetSize());
}

bool WriteBounded(const rapidjson::Value& value, JsonWriter* writer, int max_depth) {
  if (max_depth < 0) return false;
  switch (value.GetType()) {
    case rapidjson::kObjectType:
      writer->StartObject();
      for (auto m = value.MemberBegin(); m != value.MemberEnd(); ++m) {
        writer->Key(m->name.GetString(), m->name.GetStringLength());
        if (!WriteBounded(m->value, writer, max_depth - 1)) return false;
      }
      writer->EndObject();
      return true;
    case rapidjson::kArrayType:
      writer->StartArray();
      for (const auto& v : value.GetArray()) {
        if (!WriteBounded(v, writer, max_depth - 1)) return false;
      }
      writer->EndArray();
      return true;
    default:
      value.Accept(*writer);
      return true;
  }
}

}  // namespace capext
