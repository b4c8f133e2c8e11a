#include "config/yaml_json.h"

#include <charconv>

#include <fmt/format.h>

#include "config/yaml_load_all.h"

namespace capext {
namespace {

struct Converter {
  rapidjson::Document::AllocatorType& allocator;
  int max_depth;
  std::size_t budget = 2'000'000;  // total nodes visited: aliases can multiply a small input

  Status Convert(const YAML::Node& node, rapidjson::Value* out, int depth) {
    if (depth > max_depth) return Status::Error("YAML nests too deeply");
    if (budget-- == 0) return Status::Error("YAML document expands to too many nodes");
    switch (node.Type()) {
      case YAML::NodeType::Undefined:
      case YAML::NodeType::Null:
        out->SetNull();
        return {};
      case YAML::NodeType::Scalar:
        return Scalar(node, out);
      case YAML::NodeType::Sequence: {
        out->SetArray();
        for (const auto& item : node) {
          rapidjson::Value v;
          if (Status s = Convert(item, &v, depth + 1); !s.ok()) return s;
          out->PushBack(v, allocator);
        }
        return {};
      }
      case YAML::NodeType::Map: {
        out->SetObject();
        for (const auto& kv : node) {
          if (!kv.first.IsScalar()) {
            return Status::Error(
                fmt::format("line {}: mapping keys must be scalars", kv.first.Mark().line + 1));
          }
          rapidjson::Value key(kv.first.Scalar().c_str(),
                               static_cast<rapidjson::SizeType>(kv.first.Scalar().size()),
                               allocator);
          rapidjson::Value v;
          if (Status s = Convert(kv.second, &v, depth + 1); !s.ok()) return s;
          out->AddMember(key, v, allocator);
        }
        return {};
      }
    }
    return {};
  }

  Status Scalar(const YAML::Node& node, rapidjson::Value* out) {
    const std::string& text = node.Scalar();
    // Quoted or explicitly tagged scalars stay strings.
    if (node.Tag() == "?") {
      if (text == "null" || text == "Null" || text == "NULL" || text == "~") {
        out->SetNull();
        return {};
      }
      if (text == "true" || text == "True" || text == "TRUE") {
        out->SetBool(true);
        return {};
      }
      if (text == "false" || text == "False" || text == "FALSE") {
        out->SetBool(false);
        return {};
      }
      int64_t value = 0;
      const char* b = text.data();
      const char* e = b + text.size();
      if (!text.empty() && text[0] == '+') ++b;
      auto [p, ec] = std::from_chars(b, e, value);
      if (ec == std::errc() && p == e && b != e) {
        out->SetInt64(value);
        return {};
      }
    }
    out->SetString(text.c_str(), static_cast<rapidjson::SizeType>(text.size()), allocator);
    return {};
  }
};

}  // namespace

Status YamlToJson(const YAML::Node& node, rapidjson::Document::AllocatorType& allocator,
                  rapidjson::Value* out, int max_depth) {
  Converter c{allocator, max_depth};
  return c.Convert(node, out, 0);
}

Status ParseYamlDocuments(const std::string& text, std::vector<rapidjson::Document>* out,
                          std::vector<std::size_t>* positions) {
  std::vector<YAML::Node> docs;
  try {
    docs = LoadAllYamlDocuments(text);
  } catch (const YAML::Exception& e) {
    return Status::Error(fmt::format("line {}: {}", e.mark.line + 1, e.msg));
  }
  for (std::size_t i = 0; i < docs.size(); ++i) {
    const YAML::Node& doc = docs[i];
    if (doc.IsNull() || !doc.IsDefined()) continue;
    rapidjson::Document d;
    if (Status s = YamlToJson(doc, d.GetAllocator(), &d); !s.ok()) {
      return s.WithContext(fmt::format("line {}", doc.Mark().line + 1));
    }
    out->push_back(std::move(d));
    if (positions) positions->push_back(i + 1);
  }
  return {};
}

}  // namespace capext
