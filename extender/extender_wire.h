// The wire format of the kube-scheduler extender protocol (k8s.io/kube-scheduler/extender/v1),
// read as Go's encoding/json reads it: top-level keys are Go field names matched
// case-insensitively, unknown keys ignored, `null` where Go allows it. Embedded Pod and Node
// objects use the usual API JSON. See ../shared/spec/extender-protocol.md.
// Thread-safety: stateless functions; views point into the parsed document.
#pragma once

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <string>
#include <vector>

#include "config/object_codec.h"
#include "core/status.h"

namespace capext {

using JsonWriter = rapidjson::Writer<rapidjson::StringBuffer>;

// Parses a request body in place (the body must outlive the document). Validates UTF-8 and never
// recurses (deeply nested input cannot exhaust the stack). Errors say where and what.
Status ParseRequestBody(std::string& body, rapidjson::Document* doc);

// ExtenderArgs (filter, prioritize).
struct ExtenderArgs {
  Pod pod;
  bool node_names_mode = false;                  // NodeNames given: answer NodeNames
  std::vector<std::string> node_names;           // the candidate names, in request order
  const rapidjson::Value* node_items = nullptr;  // Nodes.items (full mode), else nullptr
};
Status DecodeExtenderArgs(const rapidjson::Document& doc, const DecodeOptions& options,
                          ExtenderArgs* out);

// ExtenderPreemptionArgs: the pod and the proposed node names (from NodeNameToVictims or
// NodeNameToMetaVictims, whichever is set).
struct ExtenderPreemptionArgs {
  Pod pod;
  std::vector<std::string> node_names;
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
bool WriteBounded(const rapidjson::Value& value, JsonWriter* writer, int max_depth = 64);

}  // namespace capext
