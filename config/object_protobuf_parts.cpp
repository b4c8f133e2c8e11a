#include "config/object_protobuf_parts.h"

#include <fmt/format.h>

#include "config/json_fields.h"
#include "core/quantity.h"

namespace capext::protobuf_decoding {
namespace {

// Unix seconds of 0000-01-01T00:00:00Z and of 9999-12-31T23:59:59Z: the JSON path's
// RFC 3339 reader spans these years.
constexpr int64_t kMinSeconds = -62167219200;
constexpr int64_t kMaxSeconds = 253402300799;
// Go's zero time.Time (0001-01-01T00:00:00Z), which metav1.Time writes to JSON as null.
constexpr int64_t kGoZeroSeconds = -62135596800;

std::string_view CutAtNul(std::string_view text) {
  return text.substr(0, text.find('\0'));
}

}  // namespace

Status WireFault(std::string_view path, const WireReader& reader) {
  return Status::Error(fmt::format("{}: {} at byte {}", path,
                                   protobuf::WireErrorText(reader.error()), reader.offset()));
}

Status WrongWireType(std::string_view path, const Field& field, WireType want) {
  return Status::Error(fmt::format("{}: protobuf wire type {}, expected {}", path,
                                   static_cast<int>(field.type), static_cast<int>(want)));
}

Status TakeBytes(const Field& field, std::string_view path, std::string_view* out) {
  if (!field.is_bytes()) return WrongWireType(path, field, WireType::kLengthDelimited);
  *out = field.bytes;
  return {};
}

Status TakeString(const Field& field, std::string_view path, std::string* out) {
  if (!field.is_bytes()) return WrongWireType(path, field, WireType::kLengthDelimited);
  out->assign(field.bytes);
  return {};
}

Status TakeBool(const Field& field, std::string_view path, bool* out) {
  if (!field.is_varint()) return WrongWireType(path, field, WireType::kVarint);
  *out = field.value != 0;
  return {};
}

Status TakeInt32(const Field& field, std::string_view path, int32_t* out) {
  if (!field.is_varint()) return WrongWireType(path, field, WireType::kVarint);
  *out = static_cast<int32_t>(static_cast<uint32_t>(field.value));
  return {};
}

Status TakeTime(const Field& field, std::string_view path, int64_t* out_ms, Status* content) {
  std::string_view message;
  if (Status s = TakeBytes(field, path, &message); !s.ok()) return s;
  int64_t seconds = 0;
  Status wire = ForEachField(message, path, [&](const Field& f) -> Status {
    if (f.number == 1) {
      if (!f.is_varint()) return WrongWireType(FieldPath(path, ".seconds"), f, WireType::kVarint);
      seconds = static_cast<int64_t>(f.value);
    } else if (f.number == 2 && !f.is_varint()) {
      return WrongWireType(FieldPath(path, ".nanos"), f, WireType::kVarint);
    }
    return {};
  });
  if (!wire.ok()) return wire;
  if (seconds == kGoZeroSeconds) seconds = 0;
  if (seconds < kMinSeconds || seconds > kMaxSeconds) {
    KeepFirst(content, Status::Error(fmt::format("{}: time out of range ({} s)", path, seconds)));
    return {};
  }
  *out_ms = seconds * 1000;
  return {};
}

Status TakeMapEntry(const Field& field, std::string_view path, std::string_view* key,
                    std::string_view* value) {
  std::string_view entry;
  if (Status s = TakeBytes(field, path, &entry); !s.ok()) return s;
  *key = {};
  *value = {};
  return ForEachField(entry, path, [&](const Field& f) -> Status {
    if (f.number == 1) return TakeBytes(f, path, key);
    if (f.number == 2) return TakeBytes(f, path, value);
    return {};
  });
}

Status TakeStringMapEntry(const Field& field, std::string_view path, Labels* out) {
  std::string_view key, value;
  if (Status s = TakeMapEntry(field, path, &key, &value); !s.ok()) return s;
  out->insert_or_assign(CutAtNul(key), CutAtNul(value));
  return {};
}

Status TakeQuantityEntry(const Field& field, std::string_view path, bool allow_negative,
                         ResourceList* list, Status* content) {
  std::string_view key, value;
  if (Status s = TakeMapEntry(field, path, &key, &value); !s.ok()) return s;
  const std::string_view name = CutAtNul(key);
  // The field's path is built only for a message.
  auto named = [&] { return fmt::format("{}.{}", path, name); };
  std::string_view text = "0";  // Go's zero Quantity
  Status wire = ForEachField(value, path, [&](const Field& f) -> Status {
    if (f.number != 1) return {};
    if (!f.is_bytes()) return WrongWireType(named(), f, WireType::kLengthDelimited);
    text = f.bytes;
    return {};
  });
  if (!wire.ok()) return wire;
  if (!content->ok()) return {};  // the list has failed already
  const StatusOr<Quantity> parsed = Quantity::Parse(text);
  if (!parsed.ok()) {
    *content = Status::Error(fmt::format("{}: {}", named(), parsed.status().message()));
    return {};
  }
  const Quantity& q = *parsed;
  if (!allow_negative && q.IsNegative()) {
    *content = Status::Error(fmt::format("{}: negative quantity \"{}\"", named(), q.ToString()));
    return {};
  }
  ResourceName resource;
  if (!ResourceName::TryIntern(name, &resource)) {
    *content = Status::Invalid(fmt::format("{}: too many distinct resource names (more than {})",
                                           named(), ResourceName::kMaxResourceNames));
    return {};
  }
  list->Set(resource, DecisionAmount(name, q));
  return {};
}

void AnnotationPick::Offer(std::string_view entry_key, std::string_view name,
                           std::string_view entry_value) {
  if (name.empty()) return;
  const int r = entry_key == name ? 2 : (json::EqualFold(entry_key, name) ? 1 : 0);
  if (r == 0) return;
  if (r > rank || (r == rank && entry_key == key)) {
    rank = r;
    key.assign(entry_key);
    value.assign(entry_value);
  }
}

}  // namespace capext::protobuf_decoding
