// Strict reading of YAML mappings for validation: every member is known, no key twice, and each
// finding carries the line. yaml-cpp keeps source marks; JSON parsed by yaml-cpp has them too.
// Thread-safety: stateless.
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>
#include <string_view>
#include <vector>

#include "config/validation_finding.h"

namespace capext {

// 1-based line of `node`, 0 when it has no mark (a node built in memory).
int YamlLine(const YAML::Node& node);

// "a map", "a list", "a string", "a number", "a boolean", "null": what a user would call it.
std::string YamlTypeName(const YAML::Node& node);

// True for a scalar that the Kubernetes decoder reads as a string: quoted, or plain but not a
// YAML 1.2 core null/boolean/number.
bool IsYamlString(const YAML::Node& node);

struct YamlMember {
  std::string key;
  int line = 0;  // the key's line (a null value's own mark points past it)
  YAML::Node value;
};

// The members of mapping `map` (at field path `path`) with a string key seen for the first
// time; a key that is not a string, or repeats (YAML parsers keep both; kubectl rejects it), is
// an error finding. REQUIRES: map.IsMap().
std::vector<YamlMember> UniqueMembers(const YAML::Node& map, const std::string& path,
                                      std::vector<ValidationFinding>* findings);

// The members of mapping `map` (at field path `path`, "" for the top level) whose key is in
// `known`; an unknown key is an error finding, and so is what UniqueMembers rejects (unknown fields
// are rejected as `kubectl apply --validate=strict` does). REQUIRES: map.IsMap().
std::vector<YamlMember> KnownMembers(const YAML::Node& map, const std::string& path,
                                     const std::vector<std::string>& known,
                                     std::vector<ValidationFinding>* findings);

// `path` + "." + `key`, or `key` when path is empty.
std::string FieldPath(const std::string& path, std::string_view key);

}  // namespace capext
