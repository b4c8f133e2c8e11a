#include "config/json_pull_fields.h"

#include <charconv>
#include <cmath>

#include <fmt/format.h>

#include "config/json_fields.h"
#include "core/quantity.h"

namespace capext::json {
namespace {

const char* TypeName(Token t) {
  switch (t) {
    case Token::kNull:
      return "null";
    case Token::kBool:
      return "boolean";
    case Token::kStartObject:
      return "object";
    case Token::kStartArray:
      return "array";
    case Token::kString:
      return "string";
    case Token::kNumber:
      return "number";
    default:
      return "value";
  }
}

enum class QuantityToken { kText, kNotQuantity, kNotFinite };

// The text json::ReadQuantity would parse for the current token.
QuantityToken QuantityText(JsonPullReader& r, std::string* text) {
  if (r.token() == Token::kString) {
    text->assign(r.text());
    return QuantityToken::kText;
  }
  if (r.token() != Token::kNumber) return QuantityToken::kNotQuantity;
  switch (r.number_kind()) {
    case NumberKind::kInt:
    case NumberKind::kUint:
    case NumberKind::kInt64:
      *text = std::to_string(r.int64_value());
      return QuantityToken::kText;
    case NumberKind::kUint64:
      *text = std::to_string(r.uint64_value());  // the same digits as GetInt64 when it fits
      return QuantityToken::kText;
    case NumberKind::kDouble:
      if (!std::isfinite(r.double_value())) return QuantityToken::kNotFinite;
      *text = fmt::format("{}", r.double_value());
      return QuantityToken::kText;
  }
  return QuantityToken::kNotQuantity;
}

}  // namespace

FieldPath::FieldPath(std::string_view base, std::string_view suffix) {
  buffer_.append(base.data(), base.data() + base.size());
  buffer_.append(suffix.data(), suffix.data() + suffix.size());
}

FieldPath::FieldPath(std::string_view base, size_t index) {
  fmt::format_to(std::back_inserter(buffer_), "{}[{}]", base, index);
}

bool MemberSlot::Take(std::string_view key, std::string_view name) {
  const int r = key == name ? 2 : (EqualFold(key, name) ? 1 : 0);
  if (r <= rank) return false;
  rank = r;
  status = Status::Ok();
  return true;
}

Status WrongTypeSkip(JsonPullReader& r, std::string_view path, const char* want) {
  Status wrong =
      Status::Error(fmt::format("{}: expected {}, got {}", path, want, TypeName(r.token())));
  r.SkipValue();  // a malformed rest stays the reader's state (see the header)
  return wrong;
}

Status PullString(JsonPullReader& r, std::string_view path, std::string* out) {
  if (r.token() == Token::kNull) return {};
  if (r.token() != Token::kString) return WrongTypeSkip(r, path, "string");
  out->assign(r.text());
  return {};
}

Status PullBool(JsonPullReader& r, std::string_view path, bool* out) {
  if (r.token() == Token::kNull) return {};
  if (r.token() == Token::kBool) {
    *out = r.bool_value();
    return {};
  }
  if (r.token() == Token::kString && (r.text() == "true" || r.text() == "false")) {
    *out = r.text() == "true";
    return {};
  }
  return WrongTypeSkip(r, path, "boolean");
}

Status PullInt32(JsonPullReader& r, std::string_view path, std::optional<int32_t>* out) {
  if (r.token() == Token::kNull) return {};
  if (r.token() == Token::kNumber && r.IsInt()) {
    *out = static_cast<int32_t>(r.int64_value());
    return {};
  }
  if (r.token() == Token::kString) {
    int32_t parsed = 0;
    const std::string_view text = r.text();
    auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), parsed);
    if (ec == std::errc() && p == text.data() + text.size()) {
      *out = parsed;
      return {};
    }
  }
  if (r.token() == Token::kNumber) {
    return Status::Error(fmt::format("{}: number out of the int32 range", path));
  }
  return WrongTypeSkip(r, path, "integer");
}

Status PullTime(JsonPullReader& r, std::string_view path, int64_t* out_ms) {
  if (r.token() == Token::kNull) return {};
  if (r.token() != Token::kString) return WrongTypeSkip(r, path, "string");
  if (r.text().empty()) return {};
  if (!ParseRfc3339(r.text(), out_ms)) {
    return Status::Error(fmt::format("{}: invalid RFC 3339 time \"{}\"", path, r.text()));
  }
  return {};
}

Status PullStringMap(JsonPullReader& r, std::string_view path, Labels* out) {
  if (r.token() == Token::kNull) return {};
  if (r.token() != Token::kStartObject) return WrongTypeSkip(r, path, "object");
  Status first;
  ForEachMember(r, [&](std::string_view member) {
    const char* key = member.data();  // NUL-terminated on the tape, as the DOM's GetString()
    if (r.token() == Token::kNull) return true;
    if (r.token() != Token::kString) {
      KeepFirst(&first, Status::Error(fmt::format("{}.{}: expected string", path, key)));
      return r.SkipValue();
    }
    (*out)[key] = r.c_text();
    return true;
  });
  return first;
}

Status PullStringArray(JsonPullReader& r, std::string_view path, std::vector<std::string>* out) {
  if (r.token() == Token::kNull) return {};
  if (r.token() != Token::kStartArray) return WrongTypeSkip(r, path, "array");
  Status first;
  ForEachElement(r, [&](size_t i) {
    if (r.token() != Token::kString) {
      KeepFirst(&first, Status::Error(fmt::format("{}[{}]: expected string", path, i)));
      return r.SkipValue();
    }
    out->emplace_back(r.text());
    return true;
  });
  return first;
}

Status PullResourceList(JsonPullReader& r, std::string_view path, bool allow_negative,
                        std::optional<ResourceList>* out) {
  if (r.token() == Token::kNull) return {};
  if (r.token() != Token::kStartObject) return WrongTypeSkip(r, path, "object");
  ResourceList list;
  std::string text;
  Status first;
  bool ok = ForEachMember(r, [&](std::string_view member) {
    const char* name = member.data();  // NUL-terminated on the tape, as the DOM's GetString()
    if (r.token() == Token::kNull) return true;
    if (!first.ok()) return r.SkipValue();  // the list has failed already
    // The field's path is built only for a message.
    auto field = [&] { return fmt::format("{}.{}", path, name); };
    switch (QuantityText(r, &text)) {
      case QuantityToken::kNotQuantity:
        first = WrongTypeSkip(r, field(), "quantity (string or number)");
        return true;
      case QuantityToken::kNotFinite:
        first = Status::Error(fmt::format("{}: not a finite number", field()));
        return true;
      case QuantityToken::kText:
        break;
    }
    const StatusOr<Quantity> parsed = Quantity::Parse(text);
    if (!parsed.ok()) {
      first = Status::Error(fmt::format("{}: {}", field(), parsed.status().message()));
      return true;
    }
    const Quantity& q = *parsed;
    if (!allow_negative && q.IsNegative()) {
      first = Status::Error(fmt::format("{}: negative quantity \"{}\"", field(), q.ToString()));
      return true;
    }
    list.Set(name, DecisionAmount(name, q));
    return true;
  });
  if (ok) *out = std::move(list);
  return first;
}

}  // namespace capext::json
