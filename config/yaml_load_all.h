// A YAML::LoadAll that always terminates. yaml-cpp 0.7's LoadAll loops forever, allocating an
// empty document per turn, when a flow indicator (',' or, in some positions, others) stands
// where a document or block node should start — e.g. a file that is just ",", or "- a\n,".
// The parser then returns document after document without consuming the token. Found by
// fuzz_snapshot; every LoadAll in the project goes through here.
// Thread-safety: stateless.
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>
#include <vector>

namespace capext {

// The documents of `text`, as YAML::LoadAll returns them. Throws YAML::ParserException (with
// the mark of the offending token) where yaml-cpp would stop making progress, and whatever
// LoadAll throws otherwise.
std::vector<YAML::Node> LoadAllYamlDocuments(const std::string& text);

}  // namespace capext
