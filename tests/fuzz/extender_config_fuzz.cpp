// libFuzzer target: the extender config file reader (YAML) and its validation.
#include <yaml-cpp/yaml.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "config/extender_config.h"
#include "config/extender_config_yaml.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception&) {
    return 0;  // the loader reports these as "not YAML" (exit 2)
  }
  capext::ExtenderConfig config;
  std::vector<capext::ValidationFinding> diagnostics;
  capext::ApplyExtenderConfigYaml(root, "fuzz.yaml", &config, &diagnostics);
  if (diagnostics.empty()) capext::ValidateExtenderConfig(config, &diagnostics);
  for (const auto& d : diagnostics)
    (void)capext::FormatDiagnostic(d);
  return 0;
}
