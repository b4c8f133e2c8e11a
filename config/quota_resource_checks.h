// The resource-list part of CheckQuotaObject (quota_object_check.h): reading spec.min,
// spec.max and status.used strictly, and comparing min with max.
// Thread-safety: stateless.
#pragma once

#include <yaml-cpp/yaml.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "config/quota_object_check.h"
#include "core/quantity.h"

namespace capext {

using QuantityMap = std::map<std::string, Quantity>;

// Reads the ResourceList at `path` ("spec.min"). Every value must be a quantity that parses and
// is not negative; bad entries are error findings and left out. A resource name no pod can
// request is a warning, and so is a min or max quantity too large for exact int64 arithmetic in
// decision units (it saturates at INT64_MAX, which every check reads as unbounded). Records each
// entry's line in out->field_lines. Returns nullopt when `node` is not a map (an error finding).
std::optional<QuantityMap> ReadQuantityMap(const YAML::Node& node, int line,
                                           const std::string& path, CheckedQuota* out,
                                           std::vector<ValidationFinding>* findings);

// min <= max per resource named by both (errors), and the warnings about what each semantics
// makes of a resource missing from max. Either may be absent. An entry written in the
// manifest but rejected (in quota.field_lines, not in the map) is not "missing".
void CompareMinWithMax(const std::optional<QuantityMap>& min, const std::optional<QuantityMap>& max,
                       const CheckedQuota& quota, std::vector<ValidationFinding>* findings);

}  // namespace capext
