// The `deviceClassMappings` config key (docs/devices.md#1-what-is-read,
// docs/devices.md#4-the-quota-resource-of-a-deviceclass, Kueue's convention): a list of {name:
// <quota resource>, deviceClassNames: [<DeviceClass>, ...], allocationModeAllCount: N}. Strict:
// unknown keys, a missing name or class list, a class listed twice and a count that is not a
// non-negative integer are each reported with their line. Thread-safety: stateless.
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>
#include <vector>

#include "config/extender_config.h"

namespace capext {

// Reads `value` (the key's value) into config->device_class_mappings when it has no problem;
// appends one finding per problem (with `file`).
void ApplyDeviceClassMappings(const YAML::Node& value, const std::string& file,
                              ExtenderConfig* config, std::vector<ValidationFinding>* diagnostics);

}  // namespace capext
