#include "config/manifest_reader.h"

#include <algorithm>
#include <filesystem>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "config/config_fields.h"
#include "config/extender_config_yaml.h"
#include "config/name_suggestion.h"
#include "config/object_codec.h"
#include "config/snapshot.h"
#include "config/yaml_fields.h"
#include "config/yaml_json.h"
#include "config/yaml_load_all.h"

namespace capext {
namespace {

namespace fs = std::filesystem;

bool HasManifestExtension(const fs::path& path) {
  const std::string ext = path.extension().string();
  return ext == ".yaml" || ext == ".yml" || ext == ".json";
}

std::string ScalarMember(const YAML::Node& map, const char* key) {
  // Indexing a missing member yields an invalid node, on which anything but IsDefined throws.
  if (!map.IsDefined() || !map.IsMap()) return "";
  const YAML::Node v = map[key];
  return v.IsDefined() && v.IsScalar() ? v.Scalar() : "";
}

// "" when the mapping `doc` (no apiVersion, no kind) reads as an extender config; otherwise why
// it does not. A config has only config keys; a near miss ("listenAdress") counts as one, so
// that a typo is reported rather than the file skipped. A few foreign keys among many config
// keys are mistakes too; as many foreign keys as config keys mean another tool's file.
std::string WhyNotConfig(const YAML::Node& doc) {
  const std::vector<std::string> keys = ExtenderConfigKeys();
  int config_like = 0;
  std::vector<std::string> foreign;
  for (const auto& kv : doc) {
    const std::string key = kv.first.IsScalar() ? kv.first.Scalar() : "";
    if (FindConfigFieldByKey(key) != nullptr || key == "deviceClassMappings" ||
        !SuggestName(key, keys).empty()) {
      ++config_like;
    } else {
      foreign.push_back(key);
    }
  }
  if (config_like == 0) {
    return "skipped: neither a Kubernetes object (no apiVersion, no kind) nor an extender config "
           "(no config key)";
  }
  if (!foreign.empty() && config_like < 4 * static_cast<int>(foreign.size())) {
    return fmt::format(
        "skipped: not an extender config ({} not config keys); `validate --config FILE` checks "
        "it as one",
        fmt::join(foreign, ", "));
  }
  return "";
}

class FileReader {
 public:
  FileReader(std::string file, bool force_config, ManifestSet* set)
      : file_(std::move(file)), force_config_(force_config), set_(set) {}

  void Document(const YAML::Node& doc, std::string_view implied_kind, bool lenient) {
    if (!doc.IsDefined() || doc.IsNull()) return;
    if (doc.IsSequence()) {  // a JSON array of objects
      for (const auto& item : doc)
        Document(item, implied_kind, lenient);
      return;
    }
    if (!doc.IsMap()) {
      if (lenient) return Add(Severity::kNote, 0, "", "", "skipped: not a YAML manifest");
      return Add(Severity::kError, YamlLine(doc), "", "",
                 fmt::format("expected a Kubernetes object or an extender config, got {}",
                             YamlTypeName(doc)));
    }
    const std::string api_version = ScalarMember(doc, "apiVersion");
    std::string kind = ScalarMember(doc, "kind");
    const bool kind_implied = kind.empty() && !implied_kind.empty();
    if (kind_implied) kind = implied_kind;
    if (force_config_ || (!doc["apiVersion"].IsDefined() && kind.empty())) {
      return ConfigDocument(doc);
    }
    if (kind == "List" || (kind.ends_with("List") && doc["items"].IsDefined())) {
      return List(doc, kind);
    }
    if (kind.empty()) {
      return Add(Severity::kError, YamlLine(doc), "", "kind",
                 fmt::format("missing (apiVersion is \"{}\")", api_version));
    }
    const bool quota_group = IsElasticQuotaApiGroup(api_version);
    if (kind == kElasticQuotaKind || !SuggestName(kind, {std::string(kElasticQuotaKind)}).empty() ||
        (quota_group && kind != "PodGroup")) {
      return Quota(doc, kind_implied);
    }
    if (kind == "Pod" && api_version == "v1") return Pod(doc);
    if (kind == "Node" && api_version == "v1") return Node(doc);
    if (kind == "DeviceClass" && api_version.starts_with("resource.k8s.io/")) {
      // Read only to check deviceClassMappings against
      // (docs/devices.md#4-the-quota-resource-of-a-deviceclass).
      set_->device_classes.push_back(ScalarMember(doc["metadata"], "name"));
      return;
    }
    const std::string name = ScalarMember(doc["metadata"], "name");
    Add(Severity::kNote, YamlLine(doc), name.empty() ? kind : kind + " " + name, "",
        "skipped: not an ElasticQuota");
  }

 private:
  void Add(Severity severity, int line, std::string object, std::string field,
           std::string message) {
    set_->report.entries.push_back(
        {severity, line, std::move(field), std::move(message), file_, std::move(object)});
  }

  void List(const YAML::Node& doc, const std::string& kind) {
    const YAML::Node items = doc["items"];
    if (!items.IsDefined() || items.IsNull()) return;
    if (!items.IsSequence()) {
      return Add(Severity::kError, YamlLine(items), kind, "items",
                 fmt::format("expected a list, got {}", YamlTypeName(items)));
    }
    const std::string item_kind = kind == "List" ? "" : kind.substr(0, kind.size() - 4);
    for (const auto& item : items)
      Document(item, item_kind, false);
  }

  void Quota(const YAML::Node& doc, bool kind_implied) {
    LocatedQuota located;  // (not brace-initialised: GCC 12 -O3 false -Wmaybe-uninitialized)
    located.file = file_;
    std::vector<ValidationFinding> findings;
    QuotaCheckOptions options;
    options.kind_implied = kind_implied;
    CheckQuotaObject(doc, options, &located.checked, &findings);
    const std::string object = DescribeQuota(located.checked.quota);
    for (auto& f : findings)
      Add(f.severity, f.line, object, std::move(f.field), std::move(f.message));
    ++set_->report.quotas;
    set_->quotas.push_back(std::move(located));
  }

  // Pods and nodes only feed the cluster checks; one that cannot be read is noted, not judged.
  bool ToJson(const YAML::Node& doc, rapidjson::Document* json) {
    if (Status s = YamlToJson(doc, json->GetAllocator(), json); !s.ok()) {
      Add(Severity::kNote, YamlLine(doc), "", "", "skipped: " + s.message());
      return false;
    }
    return true;
  }

  void Pod(const YAML::Node& doc) {
    rapidjson::Document json;
    LocatedPod located{{}, file_, YamlLine(doc)};
    if (!ToJson(doc, &json)) return;
    if (Status s = DecodePod(json, {}, &located.pod); !s.ok()) {
      return Add(Severity::kNote, located.line, "Pod", "", "skipped, unreadable: " + s.message());
    }
    set_->pods.push_back(std::move(located));
  }

  void Node(const YAML::Node& doc) {
    rapidjson::Document json;
    capext::Node node;
    if (!ToJson(doc, &json)) return;
    if (Status s = DecodeNode(json, &node); !s.ok()) {
      return Add(Severity::kNote, YamlLine(doc), "Node", "", "skipped, unreadable: " + s.message());
    }
    if (set_->nodes.empty()) set_->first_node_file = file_;
    set_->nodes.push_back(std::move(node));
  }

  void ConfigDocument(const YAML::Node& doc) {
    if (!force_config_) {
      if (std::string why = WhyNotConfig(doc); !why.empty()) {
        return Add(Severity::kNote, YamlLine(doc), "", "", why);
      }
    }
    ExtenderConfig config;
    std::vector<ValidationFinding> diagnostics;
    ApplyExtenderConfigYaml(doc, file_, &config, &diagnostics);
    ValidateExtenderConfig(config, &diagnostics);
    const int mappings_line = ConfigKeyLine(doc, "deviceClassMappings");
    for (const auto& m : config.device_class_mappings) {
      for (const auto& c : m.device_classes)
        set_->mapped_classes.push_back({c, file_, mappings_line});
    }
    for (auto& d : diagnostics) {
      int line = d.line > 0 ? d.line : ConfigKeyLine(doc, d.field);
      if (line == 0) line = YamlLine(doc);
      Add(Severity::kError, line, "extender config", std::move(d.field), std::move(d.message));
    }
    ++set_->report.config_files;
  }

  std::string file_;
  bool force_config_;
  ManifestSet* set_;
};

}  // namespace

std::vector<std::string> ExpandManifestPaths(const std::vector<std::string>& paths,
                                             ManifestSet* set) {
  std::vector<std::string> files;
  for (const auto& path : paths) {
    std::error_code ec;
    if (fs::is_directory(path, ec)) {
      std::vector<std::string> found;
      for (fs::recursive_directory_iterator it(path, ec), end; !ec && it != end; it.increment(ec)) {
        if (it->is_regular_file(ec) && HasManifestExtension(it->path())) {
          found.push_back(it->path().string());
        }
      }
      std::sort(found.begin(), found.end());
      files.insert(files.end(), found.begin(), found.end());
    } else if (fs::exists(path, ec)) {
      files.push_back(path);
    } else {
      set->report.entries.push_back(
          {Severity::kError, 0, "", "no such file or directory", path, ""});
      set->report.unreadable = true;
    }
  }
  return files;
}

void ReadManifestFile(const std::string& path, bool force_config, ManifestSet* set) {
  ValidateReport& report = set->report;
  std::string text;
  if (Status s = ReadFileToString(path, &text); !s.ok()) {
    report.entries.push_back({Severity::kError, 0, "", "cannot read the file", path, ""});
    report.unreadable = true;
    return;
  }
  // Outside *.yaml/*.yml/*.json, a file that is not YAML is simply not ours.
  const bool lenient = !force_config && !HasManifestExtension(path);
  std::vector<YAML::Node> documents;
  try {
    documents = LoadAllYamlDocuments(text);
  } catch (const YAML::Exception& e) {
    if (lenient) {
      report.entries.push_back({Severity::kNote, 0, "", "skipped: not YAML", path, ""});
      return;
    }
    report.entries.push_back(
        {Severity::kError, e.mark.line + 1, "", fmt::format("invalid YAML: {}", e.msg), path, ""});
    report.unreadable = true;
    return;
  }
  ++report.files;
  FileReader reader(path, force_config, set);
  for (const auto& doc : documents)
    reader.Document(doc, "", lenient);
}

}  // namespace capext
