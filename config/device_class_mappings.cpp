#include "config/device_class_mappings.h"

#include <fmt/format.h>

#include <charconv>
#include <set>

#include "config/yaml_fields.h"

namespace capext {

void ApplyDeviceClassMappings(const YAML::Node& value, const std::string& file,
                              ExtenderConfig* config, std::vector<ValidationFinding>* diagnostics) {
  const std::size_t before = diagnostics->size();
  const std::string key = "deviceClassMappings";
  auto report = [&](int line, std::string field, std::string message) {
    diagnostics->push_back({Severity::kError, line, std::move(field), std::move(message), file});
  };
  if (!value.IsSequence()) {
    report(YamlLine(value), key, fmt::format("expected a list, got {}", YamlTypeName(value)));
    return;
  }
  std::vector<DeviceClassMapping> mappings;
  std::set<std::string> seen;
  for (std::size_t i = 0; i < value.size(); ++i) {
    const YAML::Node& entry = value[i];
    const std::string path = fmt::format("{}[{}]", key, i);
    if (!entry.IsMap()) {
      report(YamlLine(entry), path, fmt::format("expected a map, got {}", YamlTypeName(entry)));
      continue;
    }
    std::vector<ValidationFinding> findings;
    const auto members = KnownMembers(
        entry, path, {"name", "deviceClassNames", "allocationModeAllCount"}, &findings);
    for (auto& f : findings)
      report(f.line, std::move(f.field), std::move(f.message));
    DeviceClassMapping m;
    for (const auto& member : members) {
      const std::string field = FieldPath(path, member.key);
      if (member.key == "name") {
        if (!member.value.IsScalar() || !IsYamlString(member.value) ||
            member.value.Scalar().empty()) {
          report(member.line, field, "expected a resource name (nvidia.com/gpu)");
        } else {
          m.resource = member.value.Scalar();
        }
      } else if (member.key == "deviceClassNames") {
        if (!member.value.IsSequence()) {
          report(member.line, field, "expected a list of DeviceClass names");
          continue;
        }
        for (std::size_t j = 0; j < member.value.size(); ++j) {
          const YAML::Node& name = member.value[j];
          if (!name.IsScalar() || !IsYamlString(name) || name.Scalar().empty()) {
            report(YamlLine(name), fmt::format("{}[{}]", field, j), "expected a DeviceClass name");
          } else if (!seen.insert(name.Scalar()).second) {
            report(YamlLine(name), fmt::format("{}[{}]", field, j),
                   fmt::format("DeviceClass {} is mapped twice", name.Scalar()));
          } else {
            m.device_classes.push_back(name.Scalar());
          }
        }
      } else {
        const std::string text = member.value.IsScalar() ? member.value.Scalar() : "";
        int64_t n = -1;
        auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
        if (!member.value.IsScalar() || member.value.Tag() != "?" || ec != std::errc() ||
            p != text.data() + text.size() || n < 0) {
          report(member.line, field, "expected a non-negative integer");
        } else {
          m.all_count = n;
        }
      }
    }
    if (m.resource.empty() && !entry["name"]) report(YamlLine(entry), path, "name: missing");
    if (m.device_classes.empty() && !entry["deviceClassNames"])
      report(YamlLine(entry), path, "deviceClassNames: missing");
    mappings.push_back(std::move(m));
  }
  if (diagnostics->size() != before) return;
  config->device_class_mappings = std::move(mappings);
}

}  // namespace capext
