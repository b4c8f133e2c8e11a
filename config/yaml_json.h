// YAML -> RapidJSON DOM, so one decoder serves JSON and YAML manifests. Plain scalars become
// null/true/false/integers where YAML 1.2's core schema says so, everything else a string
// (a quantity such as 0.5 stays "0.5": quantities are read from strings exactly).
// Thread-safety: stateless.
#pragma once

#include <rapidjson/document.h>
#include <yaml-cpp/yaml.h>

#include <string>
#include <vector>

#include "core/status.h"

namespace capext {

// Converts `node` into a value allocated with `allocator`. Fails on aliases that nest too deep
// (billion-laughs style input) or more than `max_depth` levels.
Status YamlToJson(const YAML::Node& node, rapidjson::Document::AllocatorType& allocator,
                  rapidjson::Value* out, int max_depth = 128);

// Parses a stream of YAML documents (or JSON, which is YAML) into one DOM per document; empty
// documents are dropped. Errors carry the line. When `positions` is set, it receives each kept
// document's 1-based position in the stream (empty documents included), for messages.
Status ParseYamlDocuments(const std::string& text, std::vector<rapidjson::Document>* out,
                          std::vector<std::size_t>* positions = nullptr);

}  // namespace capext
