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

void ApplyExtenderConfigYaml(const YAML::Node& root, const std::string& file,
                             ExtenderConfig* config, std::vector<ValidationFinding>* diagnostics) {
  if (!root.IsDefined() || root.IsNull()) return;
  if (!root.IsMap()) {
    diagnostics->push_back(
        {Severity::kError, root.Mark().line + 1, "",
         fmt::format("expected a map of config keys, got {}", YamlTypeName(root)), file});
    return;
  }
  std::vector<ValidationFinding> key_problems;
  const std::vector<YamlMember> members = UniqueMembers(root, "", &key_problems);
  for (auto& p : key_problems) {
    diagnostics->push_back(
        {Severity::kError, p.line, std::move(p.field), std::move(p.message), file});
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
      diagnostics->push_back(
          {Severity::kError, line, key, "unknown key" + DidYouMean(key, keys), file});
      continue;
    }
    const YAML::Node& value = member.value;
    if (value.IsNull()) continue;  // "key:" with nothing after it keeps the default
    if (!value.IsScalar()) {
      diagnostics->push_back({Severity::kError, line, key,
                              fmt::format("expected a value, got {}", YamlTypeName(value)), file});
      continue;
    }
    const ValueSource source =
        value.Tag() == "?" ? ValueSource::kYamlPlain : ValueSource::kYamlQuoted;
    if (Status s = SetConfigField(*field, value.Scalar(), source, config); !s.ok()) {
      diagnostics->push_back({Severity::kError, line, key, s.message(), file});
    }
  }
}

int ConfigKeyLine(const YAML::Node& root, std::string_view key) {
  if (!root.IsMap()) return 0;
  for (const auto& kv : root) {
    if (kv.first.IsScalar() && kv.first.Scalar() == key) return kv.first.Mark().line + 1;
  }
  return 0;
}

}  // namespace capext
