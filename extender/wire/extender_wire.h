// The wire format of the kube-scheduler extender protocol (k8s.io/kube-scheduler/extender/v1),
// read as Go's encoding/json reads it: top-level keys are Go field names matched
// case-insensitively, unknown keys ignored, `null` where Go allows it. Embedded Pod and Node
// objects use the usual API JSON. See docs/extender-protocol.md#how-we-decode-gos-rules.
// Thread-safety: stateless functions; views point into the parsed document.
#pragma once

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <string>
#include <string_view>
#include <vector>

#include "config/object_codec.h"
#include "core/status.h"

namespace capext {

using JsonWriter = rapidjson::Writer<rapidjson::StringBuffer>;

// Parses a request body in place (the body must outlive the document). Rejects invalid UTF-8
// anywhere in the body; any depth of nesting parses without exhausting the stack. Errors say where
// and what.
Status ParseRequestBody(std::string& body, rapidjson::Document* doc);

// ExtenderArgs (filter, prioritize). The names point into the parsed document (and so into the
// request body): they are valid as long as both are.
struct ExtenderArgs {
  Pod pod;
  bool node_names_mode = false;                  // NodeNames given: answer NodeNames
  std::vector<std::string_view> node_names;      // the candidate names, in request order
  const rapidjson::Value* node_items = nullptr;  // Nodes.items (full mode), else nullptr
};
Status DecodeExtenderArgs(const rapidjson::Document& doc, const DecodeOptions& options,
                          ExtenderArgs* out);
// ParseRequestBody + DecodeExtenderArgs in one, the verbs' fast path: a NodeNames array of plain
// strings is read straight into out->node_names, without DOM values of its own (the document
// then holds an empty array there). Same results and errors as the two calls.
Status ParseExtenderArgs(std::string& body, const DecodeOptions& options, rapidjson::Document* doc,
                         ExtenderArgs* out);

// ExtenderPreemptionArgs: the pod and the proposed node names (from NodeNameToMetaVictims when it
// is set, else from NodeNameToVictims), pointing into the parsed document. The victims proposed are
// not used (we choose our own), but both maps are type-checked as Go decodes them: an entry that is
// not an object, Pods that is not an array of objects, a UID (MetaPod.UID, or a full pod's
// metadata.uid) that is not a string, or a NumPDBViolations that is not an int64 is an error.
struct ExtenderPreemptionArgs {
  Pod pod;
  std::vector<std::string_view> node_names;
};
Status DecodeExtenderPreemptionArgs(const rapidjson::Document& doc, const DecodeOptions& options,
                                    ExtenderPreemptionArgs* out);

// ExtenderBindingArgs.
struct ExtenderBindingArgs {
  std::string pod_name;
  std::string pod_namespace;
  std::string pod_uid;
  std::string node;
};
Status DecodeExtenderBindingArgs(const rapidjson::Document& doc, ExtenderBindingArgs* out);

// {"error":"..."} for 4xx/5xx answers of our own.
std::string ErrorJson(const std::string& message);

// Writes `value` (a DOM subtree) refusing to go deeper than `max_depth` (returns false then).
// `Writer` is a rapidjson::Writer (JsonWriter, JsonOut).
template <typename Writer>
bool WriteBounded(const rapidjson::Value& value, Writer* writer, int max_depth = 64) {
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
