#include "config/yaml_fields.h"

#include <algorithm>
#include <charconv>
#include <set>

#include <fmt/format.h>

#include "config/name_suggestion.h"

namespace capext {
namespace {

bool IsCoreNull(std::string_view s) {
  return s == "null" || s == "Null" || s == "NULL" || s == "~";
}

bool IsCoreBool(std::string_view s) {
  return s == "true" || s == "True" || s == "TRUE" || s == "false" || s == "False" || s == "FALSE";
}

bool IsCoreNumber(std::string_view s) {
  if (!s.empty() && (s[0] == '+' || s[0] == '-')) s.remove_prefix(1);
  if (s.empty()) return false;
  double d = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), d);
  return ec == std::errc() && p == s.data() + s.size();
}

}  // namespace

int YamlLine(const YAML::Node& node) {
  const int line = node.Mark().line;
  return line >= 0 ? line + 1 : 0;
}

std::string YamlTypeName(const YAML::Node& node) {
  if (!node.IsDefined() || node.IsNull()) return "null";
  if (node.IsMap()) return "a map";
  if (node.IsSequence()) return "a list";
  if (IsYamlString(node)) return "a string";
  return IsCoreBool(node.Scalar()) ? "a boolean" : "a number";
}

bool IsYamlString(const YAML::Node& node) {
  if (!node.IsScalar()) return false;
  if (node.Tag() != "?") return true;
  const std::string& s = node.Scalar();
  return !IsCoreNull(s) && !IsCoreBool(s) && !IsCoreNumber(s);
}

std::vector<YamlMember> UniqueMembers(const YAML::Node& map, const std::string& path,
                                      std::vector<ValidationFinding>* findings) {
  std::vector<YamlMember> members;
  std::set<std::string> seen;
  for (const auto& kv : map) {
    const int line = YamlLine(kv.first);
    if (!kv.first.IsScalar()) {
      findings->push_back({Severity::kError, line, path, "keys must be strings"});
      continue;
    }
    const std::string& key = kv.first.Scalar();
    if (!seen.insert(key).second) {
      findings->push_back({Severity::kError, line, FieldPath(path, key), "given twice"});
      continue;
    }
    members.push_back({key, line, kv.second});
  }
  return members;
}

std::vector<YamlMember> KnownMembers(const YAML::Node& map, const std::string& path,
                                     const std::vector<std::string>& known,
                                     std::vector<ValidationFinding>* findings) {
  std::vector<YamlMember> members = UniqueMembers(map, path, findings);
  std::erase_if(members, [&](const YamlMember& m) {
    if (std::find(known.begin(), known.end(), m.key) != known.end()) return false;
    findings->push_back({Severity::kError, m.line, FieldPath(path, m.key),
                         fmt::format("unknown field \"{}\"{}", m.key, DidYouMean(m.key, known))});
    return true;
  });
  return members;
}

std::string FieldPath(const std::string& path, std::string_view key) {
  return path.empty() ? std::string(key) : fmt::format("{}.{}", path, key);
}

}  // namespace capext
