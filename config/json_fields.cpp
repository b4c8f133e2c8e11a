#include "config/json_fields.h"

#include <charconv>
#include <cmath>
#include <ctime>

#include <fmt/format.h>

namespace capext::json {
bool EqualFold(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    char x = a[i], y = b[i];
    if (x >= 'A' && x <= 'Z') x = static_cast<char>(x - 'A' + 'a');
    if (y >= 'A' && y <= 'Z') y = static_cast<char>(y - 'A' + 'a');
    if (x != y) return false;
  }
  return true;
}

namespace {

const char* TypeName(const rapidjson::Value& v) {
  switch (v.GetType()) {
    case rapidjson::kNullType:
      return "null";
    case rapidjson::kFalseType:
    case rapidjson::kTrueType:
      return "boolean";
    case rapidjson::kObjectType:
      return "object";
    case rapidjson::kArrayType:
      return "array";
    case rapidjson::kStringType:
      return "string";
    case rapidjson::kNumberType:
      return "number";
  }
  return "value";
}

Status WrongType(const std::string& path, const char* want, const rapidjson::Value& got) {
  return Status::Error(fmt::format("{}: expected {}, got {}", path, want, TypeName(got)));
}

}  // namespace

const rapidjson::Value* Member(const rapidjson::Value& object, std::string_view name) {
  auto it = object.FindMember(rapidjson::StringRef(name.data(), name.size()));
  if (it == object.MemberEnd()) {
    for (auto m = object.MemberBegin(); m != object.MemberEnd(); ++m) {
      if (EqualFold(std::string_view(m->name.GetString(), m->name.GetStringLength()), name)) {
        it = m;
        break;
      }
    }
  }
  if (it == object.MemberEnd() || it->value.IsNull()) return nullptr;
  return &it->value;
}

Status ExpectObject(const rapidjson::Value& value, const std::string& path) {
  return value.IsObject() ? Status::Ok() : WrongType(path, "object", value);
}

Status ExpectArray(const rapidjson::Value& value, const std::string& path) {
  return value.IsArray() ? Status::Ok() : WrongType(path, "array", value);
}

Status ReadString(const rapidjson::Value& object, std::string_view name, const std::string& path,
                  std::string* out) {
  const rapidjson::Value* v = Member(object, name);
  if (v == nullptr) return {};
  if (!v->IsString()) return WrongType(path, "string", *v);
  out->assign(v->GetString(), v->GetStringLength());
  return {};
}

Status ReadString(const rapidjson::Value& object, std::string_view name, const std::string& path,
                  BoxedString* out) {
  std::string text = *out;  // absent or null: unchanged
  Status status = ReadString(object, name, path, &text);
  if (status.ok()) out->assign(std::move(text));
  return status;
}

Status ReadBool(const rapidjson::Value& object, std::string_view name, const std::string& path,
                bool* out) {
  const rapidjson::Value* v = Member(object, name);
  if (v == nullptr) return {};
  if (v->IsBool()) {
    *out = v->GetBool();
    return {};
  }
  if (v->IsString()) {  // YAML documents may carry "true"/"false" as text
    std::string_view s(v->GetString(), v->GetStringLength());
    if (s == "true" || s == "false") {
      *out = s == "true";
      return {};
    }
  }
  return WrongType(path, "boolean", *v);
}

Status ReadInt32(const rapidjson::Value& object, std::string_view name, const std::string& path,
                 std::optional<int32_t>* out) {
  const rapidjson::Value* v = Member(object, name);
  if (v == nullptr) return {};
  if (v->IsInt()) {
    *out = v->GetInt();
    return {};
  }
  if (v->IsString()) {
    int32_t parsed = 0;
    const char* b = v->GetString();
    const char* e = b + v->GetStringLength();
    auto [p, ec] = std::from_chars(b, e, parsed);
    if (ec == std::errc() && p == e) {
      *out = parsed;
      return {};
    }
  }
  if (v->IsNumber()) {
    return Status::Error(fmt::format("{}: number out of the int32 range", path));
  }
  return WrongType(path, "integer", *v);
}

bool ParseRfc3339(std::string_view text, int64_t* out_ms) {
  // YYYY-MM-DDTHH:MM:SS[.frac](Z|+HH:MM|-HH:MM)
  auto digits = [&](std::size_t pos, std::size_t n, int* out) {
    if (pos + n > text.size()) return false;
    int v = 0;
    for (std::size_t i = pos; i < pos + n; ++i) {
      if (text[i] < '0' || text[i] > '9') return false;
      v = v * 10 + (text[i] - '0');
    }
    *out = v;
    return true;
  };
  int year, month, day, hour, minute, second;
  if (text.size() < 20 || !digits(0, 4, &year) || text[4] != '-' || !digits(5, 2, &month) ||
      text[7] != '-' || !digits(8, 2, &day) ||
      (text[10] != 'T' && text[10] != 't' && text[10] != ' ') || !digits(11, 2, &hour) ||
      text[13] != ':' || !digits(14, 2, &minute) || text[16] != ':' || !digits(17, 2, &second)) {
    return false;
  }
  if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 60) {
    return false;
  }
  std::size_t pos = 19;
  int64_t millis = 0;
  if (pos < text.size() && text[pos] == '.') {
    ++pos;
    int scale = 100;
    std::size_t start = pos;
    while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9') {
      millis += (text[pos] - '0') * scale;
      scale /= 10;
      ++pos;
    }
    if (pos == start) return false;
  }
  int64_t offset_s = 0;
  if (pos < text.size() && (text[pos] == 'Z' || text[pos] == 'z')) {
    ++pos;
  } else if (pos < text.size() && (text[pos] == '+' || text[pos] == '-')) {
    int oh, om;
    if (!digits(pos + 1, 2, &oh) || pos + 3 >= text.size() || text[pos + 3] != ':' ||
        !digits(pos + 4, 2, &om)) {
      return false;
    }
    offset_s = (oh * 3600 + om * 60) * (text[pos] == '+' ? 1 : -1);
    pos += 6;
  } else {
    return false;
  }
  if (pos != text.size()) return false;
  std::tm tm{};
  tm.tm_year = year - 1900;
  tm.tm_mon = month - 1;
  tm.tm_mday = day;
  tm.tm_hour = hour;
  tm.tm_min = minute;
  tm.tm_sec = second;
  const int64_t seconds = static_cast<int64_t>(timegm(&tm)) - offset_s;
  *out_ms = seconds * 1000 + millis;
  return true;
}

Status ReadTime(const rapidjson::Value& object, std::string_view name, const std::string& path,
                int64_t* out_ms) {
  std::string text;
  if (Status s = ReadString(object, name, path, &text); !s.ok()) return s;
  if (text.empty()) return {};
  if (!ParseRfc3339(text, out_ms)) {
    return Status::Error(fmt::format("{}: invalid RFC 3339 time \"{}\"", path, text));
  }
  return {};
}

Status ReadQuantity(const rapidjson::Value& value, const std::string& path, Quantity* out) {
  std::string text;
  if (value.IsString()) {
    text.assign(value.GetString(), value.GetStringLength());
  } else if (value.IsInt64()) {
    text = std::to_string(value.GetInt64());
  } else if (value.IsUint64()) {
    text = std::to_string(value.GetUint64());
  } else if (value.IsDouble()) {
    const double d = value.GetDouble();
    if (!std::isfinite(d)) return Status::Error(fmt::format("{}: not a finite number", path));
    text = fmt::format("{}", d);
  } else {
    return WrongType(path, "quantity (string or number)", value);
  }
  StatusOr<Quantity> parsed = Quantity::Parse(text);
  if (!parsed.ok()) return Status::Error(fmt::format("{}: {}", path, parsed.status().message()));
  *out = std::move(parsed).value();
  return {};
}

std::string PointerToken(std::string_view key) {
  std::string out;
  for (char c : key) {
    if (c == '~') {
      out += "~0";
    } else if (c == '/') {
      out += "~1";
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace capext::json
