#include "tests/support/json_tree.h"

#include <algorithm>
#include <cstdio>

namespace capext::testing {
namespace {

void AppendQuoted(const std::string& s, std::string* out) {
  out->push_back('"');
  for (const char c : s) {
    switch (c) {
      case '"':
        *out += "\\\"";
        break;
      case '\\':
        *out += "\\\\";
        break;
      case '\n':
        *out += "\\n";
        break;
      case '\t':
        *out += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(c));
          *out += buf;
        } else {
          out->push_back(c);
        }
    }
  }
  out->push_back('"');
}

// A mapping key YAML reads back as the same string without quotes.
bool PlainKey(const std::string& key) {
  if (key.empty() || key.front() == '-' || key.front() == '.') return false;
  return std::all_of(key.begin(), key.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
           c == '/' || c == '-' || c == '_';
  });
}

void AppendKey(const std::string& key, std::string* out) {
  if (PlainKey(key)) {
    *out += key;
  } else {
    AppendQuoted(key, out);
  }
}

}  // namespace

JsonTree& JsonTree::operator[](const std::string& key) {
  if (type_ == Type::kNull) type_ = Type::kObject;
  for (auto& [k, v] : members_) {
    if (k == key) return v;
  }
  members_.emplace_back(key, JsonTree());
  return members_.back().second;
}

const JsonTree* JsonTree::Find(const std::string& key) const {
  for (const auto& [k, v] : members_) {
    if (k == key) return &v;
  }
  return nullptr;
}

JsonTree& JsonTree::Push(JsonTree value) {
  if (type_ == Type::kNull) type_ = Type::kArray;
  items_.push_back(std::move(value));
  return items_.back();
}

void JsonTree::Erase(const std::string& key) {
  members_.remove_if([&](const auto& m) { return m.first == key; });
}

std::string JsonTree::ToJson() const {
  std::string out;
  AppendJson(&out);
  return out;
}

void JsonTree::AppendJson(std::string* out) const {
  switch (type_) {
    case Type::kNull:
      *out += "null";
      return;
    case Type::kBool:
      *out += bool_ ? "true" : "false";
      return;
    case Type::kInt:
      *out += std::to_string(int_);
      return;
    case Type::kString:
      AppendQuoted(string_, out);
      return;
    case Type::kArray:
      out->push_back('[');
      for (const JsonTree& item : items_) {
        if (&item != &items_.front()) out->push_back(',');
        item.AppendJson(out);
      }
      out->push_back(']');
      return;
    case Type::kObject:
      out->push_back('{');
      for (const auto& [key, value] : members_) {
        if (&key != &members_.front().first) out->push_back(',');
        AppendQuoted(key, out);
        out->push_back(':');
        value.AppendJson(out);
      }
      out->push_back('}');
      return;
  }
}

bool JsonTree::IsScalarForYaml() const {
  if (type_ == Type::kObject) return members_.empty();
  if (type_ == Type::kArray) {
    // Arrays of scalars print inline (flow style, which is JSON).
    return std::all_of(items_.begin(), items_.end(), [](const JsonTree& t) {
      return t.type_ != Type::kObject && t.type_ != Type::kArray;
    });
  }
  return true;
}

std::string JsonTree::ToYaml(int indent) const {
  std::string out;
  AppendYaml(&out, indent);
  return out;
}

void JsonTree::AppendYaml(std::string* out, int indent) const {
  const std::string pad(static_cast<std::size_t>(indent), ' ');
  if (IsScalarForYaml()) {
    *out += pad;
    AppendJson(out);
    out->push_back('\n');
    return;
  }
  if (type_ == Type::kObject) {
    for (const auto& [key, value] : members_) {
      *out += pad;
      AppendKey(key, out);
      out->push_back(':');
      if (value.IsScalarForYaml()) {
        out->push_back(' ');
        value.AppendJson(out);
        out->push_back('\n');
      } else {
        out->push_back('\n');
        // Sequences under a key at the key's indentation (kubectl's style), mappings deeper.
        value.AppendYaml(out, value.type_ == Type::kArray ? indent : indent + 2);
      }
    }
    return;
  }
  for (const JsonTree& item : items_) {
    // "- " then the item's first line; the rest of the item two columns deeper.
    std::string body = item.ToYaml(indent + 2);
    body.replace(0, static_cast<std::size_t>(indent) + 2, pad + "- ");
    *out += body;
  }
}

}  // namespace capext::testing
