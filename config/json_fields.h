// Reading fields of a RapidJSON DOM the way Go's encoding/json reads a Kubernetes object:
// member names matched exactly first, then case-insensitively; unknown members ignored; `null`
// equal to absent. Type mismatches are errors naming the field path.
// Thread-safety: stateless helpers.
#pragma once

#include <rapidjson/document.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/boxed_string.h"
#include "core/quantity.h"
#include "core/status.h"

namespace capext::json {

// ASCII case-insensitive equality, as member names are matched after an exact match failed.
bool EqualFold(std::string_view a, std::string_view b);

// The member `name` of `object`, or nullptr when absent or null. REQUIRES: object.IsObject().
const rapidjson::Value* Member(const rapidjson::Value& object, std::string_view name);

// Typed reads. Absent/null leaves *out unchanged and succeeds. `path` names the field in errors.
Status ReadString(const rapidjson::Value& object, std::string_view name, const std::string& path,
                  std::string* out);
Status ReadString(const rapidjson::Value& object, std::string_view name, const std::string& path,
                  BoxedString* out);
Status ReadBool(const rapidjson::Value& object, std::string_view name, const std::string& path,
                bool* out);
Status ReadInt32(const rapidjson::Value& object, std::string_view name, const std::string& path,
                 std::optional<int32_t>* out);
// An RFC 3339 timestamp ("2026-01-01T00:00:00Z", fractional seconds and offsets allowed) as Unix
// milliseconds.
Status ReadTime(const rapidjson::Value& object, std::string_view name, const std::string& path,
                int64_t* out_ms);
bool ParseRfc3339(std::string_view text, int64_t* out_ms);

// A quantity given as a JSON string or number.
Status ReadQuantity(const rapidjson::Value& value, const std::string& path, Quantity* out);

// A member name as one token of a JSON pointer (RFC 6901: "~" -> "~0", "/" -> "~1"), for JSON
// patch paths such as /metadata/annotations/<key>.
std::string PointerToken(std::string_view key);

// REQUIRES nothing; fails unless `value` is an object / array.
Status ExpectObject(const rapidjson::Value& value, const std::string& path);
Status ExpectArray(const rapidjson::Value& value, const std::string& path);

}  // namespace capext::json
