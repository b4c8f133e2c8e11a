#include "config/extender_config_yaml.h"

#include <fmt/format.h>

#include "config/config_fields.h"
#include "config/device_class_mappings.h"
#include "config/name_suggestion.h"
#include "config/yaml_fields.h"

namespace capext {

namespace {
constexpr const char* kDeviceClassMappingsKey = "deviceClassMappings";
}  // namespace

bool ApplyExtenderConfigYaml(const YAML::Node& root, const std::string& file,
                             ExtenderConfig* config, std::vector<ConfigDiagnostic>* diagnostics) {
  const std::size_t before = diagnostics->size();
  if (!root.IsDefined() || root.IsNull()) return true;
  if (!root.IsMap()) {
    diagnostics->push_back(
        {file, root.Mark().line + 1, "",
         fmt::format("expected a map of config keys, got {}", YamlTypeName(root))});
    return false;
  }
  std::vector<ValidationFinding> key_problems;
  const std::vector<YamlMember> members = UniqueMembers(root, "", &key_problems);
  for (auto& p : key_problems) {
    diagnostics->push_back({file, p.line, std::move(p.field), std::move(p.message)});
  }
  for (const auto& member : members) {
    const int line = member.line;
    const std::string& key = member.key;
    if (key == kDeviceClassMappingsKey) {
      // A list, not a scalar: the one key outside the flag table (it has no flag).
      if (!member.value.IsNull()) ApplyDeviceClassMappings(member.value, file, config, diagnostics);
      continue;
    }
    const ConfigField* field = FindConfigFieldByKey(key);
    if (field == nullptr) {
      std::vector<std::string> keys = ExtenderConfigKeys();
      keys.push_back(kDeviceClassMappingsKey);
      diagnostics->push_back({file, line, key, "unknown key" + DidYouMean(key, keys)});
      continue;
    }
    const YAML::Node& value = member.value;
    if (value.IsNull()) continue;  // "key:" with nothing after it keeps the default
    if (!value.IsScalar()) {
      diagnostics->push_back(
          {file, line, key, fmt::format("expected a value, got {}", YamlTypeName(value))});
      continue;
    }
    const ValueSource source =
        value.Tag() == "?" ? ValueSource::kYamlPlain : ValueSource::kYamlQuoted;
    std::string error;
    if (!SetConfigField(*field, value.Scalar(), source, config, &error)) {
      diagnostics->push_back({file, line, key, error});
    }
  }
  return diagnostics->size() == before;
}

int ConfigKeyLine(const YAML::Node& root, std::string_view key) {
  if (!root.IsMap()) return 0;
  for (const auto& kv : root) {
    if (kv.first.IsScalar() && kv.first.Scalar() == key) return kv.first.Mark().line + 1;
  }
  return 0;
}

}  // namespace capext
