#include "extender/wire/extender_wire.h"

#include <fmt/format.h>

#include "config/json_fields.h"
#include "extender/wire/request_body.h"

namespace capext {

namespace {

Status ParseBody(std::string& body, rapidjson::Document* doc,
                 request_body::CapturedNames* captured) {
  using namespace request_body;
  if (body.empty()) return Status::Error("empty request body: expected a JSON object");
  // UTF-8 is checked here in one pass over the whole body (any invalid byte is an error in or
  // out of strings) rather than by RapidJSON string by string, which doubles its parse time.
  if (const std::size_t bad = FirstInvalidUtf8(body); bad != std::string_view::npos) {
    return Status::Error(
        fmt::format("invalid JSON at byte {}: {}", bad,
                    rapidjson::GetParseError_En(rapidjson::kParseErrorStringInvalidEncoding)));
  }
  // Deeply nested input (in fields we ignore) must parse too: only the iterative parser is safe
  // for any depth.
  const bool iterative = CountOpeners(body) > kMaxRecursiveOpeners;
  const std::size_t first = body.find_first_not_of(" \t\r\n");
  ParseError error;
  if (first != std::string::npos && body[first] == '{') {
    error = ObjectReader(body.data(), body.data() + body.size(), iterative, doc, captured).Read();
  } else {
    rapidjson::InsituStringStream stream(body.data());
    const rapidjson::ParseResult result =
        ParseInsitu<rapidjson::kParseNoFlags>(&stream, iterative, doc);
    error = {result.Code(), result.Offset()};
  }
  if (error.failed()) {
    return Status::Error(fmt::format("invalid JSON at byte {}: {}", error.offset,
                                     rapidjson::GetParseError_En(error.code)));
  }
  if (!doc->IsObject()) return Status::Error("expected a JSON object at the top level");
  return {};
}

}  // namespace

Status ParseRequestBody(std::string& body, rapidjson::Document* doc) {
  return ParseBody(body, doc, nullptr);
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

Status ReadNameArray(const rapidjson::Value& v, const char* what,
                     std::vector<std::string_view>* out) {
  if (!v.IsArray()) return Status::Error(fmt::format("{}: expected an array of strings", what));
  out->reserve(v.Size());
  for (rapidjson::SizeType i = 0; i < v.Size(); ++i) {
    if (!v[i].IsString()) return Status::Error(fmt::format("{}[{}]: expected a string", what, i));
    out->emplace_back(v[i].GetString(), v[i].GetStringLength());
  }
  return {};
}

// A short description of `v` for type errors: the number itself, or the JSON type.
std::string Describe(const rapidjson::Value& v) {
  if (v.IsNumber()) {
    rapidjson::StringBuffer buffer;
    rapidjson::Writer<rapidjson::StringBuffer> w(buffer);
    v.Accept(w);
    return std::string(buffer.GetString(), buffer.GetSize());
  }
  if (v.IsString()) return "a string";
  if (v.IsBool()) return "a boolean";
  if (v.IsArray()) return "an array";
  if (v.IsObject()) return "an object";
  return "null";
}

// Victims{Pods []*v1.Pod, NumPDBViolations int64} (full) or MetaVictims{Pods []*MetaPod{UID
// string}, NumPDBViolations int64} (meta) of node `node` in map `what`, checked as Go decodes
// them: null is allowed wherever Go has a pointer, a slice or a zero value; any other type
// mismatch fails the whole request (an int64 is a JSON integer in range: Go rejects "1", 1.5 and
// 1e2). Only the members that identify a victim are checked in a full Pod: we choose our own
// victims and read nothing else of theirs. Paths are formatted only for an error (this runs for
// every proposed victim).
Status CheckVictims(const rapidjson::Value& victims, bool meta, std::string_view what,
                    std::string_view node) {
  auto error = [&](std::string_view member, const rapidjson::Value& got, std::string_view want) {
    return Status::Error(
        fmt::format("{}.{}{}: expected {}, got {}", what, node, member, want, Describe(got)));
  };
  if (!victims.IsObject()) return error("", victims, "an object");
  if (const rapidjson::Value* pods = json::Member(victims, "Pods")) {
    if (!pods->IsArray()) return error(".Pods", *pods, "an array");
    for (rapidjson::SizeType i = 0; i < pods->Size(); ++i) {
      const rapidjson::Value& pod = (*pods)[i];
      if (pod.IsNull()) continue;
      const auto at = [&](std::string_view member) {
        return fmt::format(".Pods[{}]{}", i, member);
      };
      if (!pod.IsObject()) return error(at(""), pod, "an object");
      if (meta) {
        const rapidjson::Value* uid = json::Member(pod, "UID");
        if (uid != nullptr && !uid->IsString()) return error(at(".UID"), *uid, "a string");
        continue;
      }
      const rapidjson::Value* metadata = json::Member(pod, "metadata");
      if (metadata == nullptr) continue;
      if (!metadata->IsObject()) return error(at(".metadata"), *metadata, "an object");
      const rapidjson::Value* uid = json::Member(*metadata, "uid");
      if (uid != nullptr && !uid->IsString()) return error(at(".metadata.uid"), *uid, "a string");
    }
  }
  const rapidjson::Value* violations = json::Member(victims, "NumPDBViolations");
  if (violations != nullptr && !violations->IsInt64()) {
    return error(".NumPDBViolations", *violations, "an int64 integer");
  }
  return {};
}

// A map of node name to Victims / MetaVictims (entries may be null). With `names`, its keys are
// appended there.
Status CheckVictimMap(const rapidjson::Value& map, const char* what, bool meta,
                      std::vector<std::string_view>* names) {
  if (!map.IsObject()) {
    return Status::Error(fmt::format("{}: expected an object, got {}", what, Describe(map)));
  }
  if (names != nullptr) names->reserve(map.MemberCount());
  for (auto m = map.MemberBegin(); m != map.MemberEnd(); ++m) {
    if (!m->value.IsNull()) {
      Status s = CheckVictims(m->value, meta, what,
                              std::string_view(m->name.GetString(), m->name.GetStringLength()));
      if (!s.ok()) return s;
    }
    if (names != nullptr) names->emplace_back(m->name.GetString(), m->name.GetStringLength());
  }
  return {};
}

// The index of the member json::Member(object, name) finds (exact name first, then the first
// that matches case-insensitively), or -1 when it finds none (absent or null).
int64_t MemberIndex(const rapidjson::Value& object, std::string_view name) {
  const rapidjson::Value* found = json::Member(object, name);
  if (found == nullptr) return -1;
  int64_t index = 0;
  for (auto m = object.MemberBegin(); m != object.MemberEnd(); ++m, ++index) {
    if (&m->value == found) return index;
  }
  return -1;
}

Status DecodeArgs(const rapidjson::Document& doc, const DecodeOptions& options,
                  const request_body::CapturedNames* captured, ExtenderArgs* out) {
  if (Status s = DecodePodMember(doc, options, &out->pod); !s.ok()) return s;
  if (const rapidjson::Value* names = json::Member(doc, "NodeNames")) {
    out->node_names_mode = true;
    const std::vector<std::string_view>* read =
        captured == nullptr || captured->arrays.empty()
            ? nullptr
            : captured->Find(static_cast<std::size_t>(MemberIndex(doc, "NodeNames")));
    if (read != nullptr) {
      out->node_names = *read;
    } else if (Status s = ReadNameArray(*names, "NodeNames", &out->node_names); !s.ok()) {
      return s;
    }
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
          const rapidjson::Value* meta = item.IsObject() ? json::Member(item, "metadata") : nullptr;
          const rapidjson::Value* name =
              meta != nullptr && meta->IsObject() ? json::Member(*meta, "name") : nullptr;
          if (name == nullptr || !name->IsString() || name->GetStringLength() == 0) {
            return Status::Error(fmt::format("Nodes.items[{}]: missing metadata.name", i));
          }
          out->node_names.emplace_back(name->GetString(), name->GetStringLength());
        }
      }
    }
  }
  return {};
}

}  // namespace

Status DecodeExtenderArgs(const rapidjson::Document& doc, const DecodeOptions& options,
                          ExtenderArgs* out) {
  return DecodeArgs(doc, options, nullptr, out);
}

Status ParseExtenderArgs(std::string& body, const DecodeOptions& options, rapidjson::Document* doc,
                         ExtenderArgs* out) {
  request_body::CapturedNames captured;
  if (Status s = ParseBody(body, doc, &captured); !s.ok()) return s;
  return DecodeArgs(*doc, options, &captured, out);
}

Status DecodeExtenderPreemptionArgs(const rapidjson::Document& doc, const DecodeOptions& options,
                                    ExtenderPreemptionArgs* out) {
  if (Status s = DecodePodMember(doc, options, &out->pod); !s.ok()) return s;
  // kube-scheduler fills one map and sends the other as null; Go decodes (and type-checks) both.
  // The proposed nodes come from the meta map when it is present, else from the full one.
  const rapidjson::Value* meta = json::Member(doc, "NodeNameToMetaVictims");
  const rapidjson::Value* full = json::Member(doc, "NodeNameToVictims");
  if (meta != nullptr) {
    Status s = CheckVictimMap(*meta, "NodeNameToMetaVictims", true, &out->node_names);
    if (!s.ok()) return s;
  }
  if (full == nullptr) return {};
  return CheckVictimMap(*full, "NodeNameToVictims", false,
                        meta == nullptr ? &out->node_names : nullptr);
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

}  // namespace capext
