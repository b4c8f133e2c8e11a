// The extender config file's YAML, already parsed: shared by LoadExtenderConfigFile and by
// `capacity-extender validate`, which reads every file with yaml-cpp once and then decides
// what each document is.
// Thread-safety: stateless.
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>
#include <string_view>
#include <vector>

#include "config/extender_config.h"

namespace capext {

// Applies the keys of `root` (a mapping, or null for an empty file) to *config; keys not present
// keep their current values, and so do keys whose value is null. Unknown keys, duplicate keys,
// wrong types and bad values are each appended to *diagnostics (all of them) with `file`, line
// and key: the document is good when none was.
void ApplyExtenderConfigYaml(const YAML::Node& root, const std::string& file,
                             ExtenderConfig* config, std::vector<ValidationFinding>* diagnostics);

// The 1-based line of `key` in the mapping `root`, or 0 when absent.
int ConfigKeyLine(const YAML::Node& root, std::string_view key);

}  // namespace capext
