// Loading the config file, parsing `serve` flags and printing their help: all three walk the one
// table of config_fields.cpp.
#include "config/extender_config.h"

#include <algorithm>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "config/config_fields.h"
#include "config/extender_config_yaml.h"
#include "config/name_suggestion.h"
#include "config/snapshot.h"
#include "config/yaml_load_all.h"

namespace capext {
namespace {

constexpr std::string_view kConfigFlag = "config";

// A flag argument split into name and (maybe) value: "--port=8" -> {"port", "8", true}.
struct FlagArg {
  std::string name;
  std::string value;
  bool has_value = false;
};

bool SplitFlag(const std::string& arg, FlagArg* out) {
  if (arg.size() < 3 || arg.compare(0, 2, "--") != 0) return false;
  const std::size_t eq = arg.find('=');
  out->name = arg.substr(2, eq == std::string::npos ? std::string::npos : eq - 2);
  out->has_value = eq != std::string::npos;
  out->value = out->has_value ? arg.substr(eq + 1) : "";
  return true;
}

bool IsHelp(const std::string& arg) {
  return arg == "-h" || arg == "--help" || arg == "-help";
}

}  // namespace

void LoadExtenderConfigFile(const std::string& path, ExtenderConfig* config,
                            std::vector<ValidationFinding>* diagnostics) {
  std::string text;
  if (Status s = ReadFileToString(path, &text); !s.ok()) {
    diagnostics->push_back({Severity::kError, 0, "", "cannot read the config file", path});
    return;
  }
  std::vector<YAML::Node> documents;
  try {
    documents = LoadAllYamlDocuments(text);
  } catch (const YAML::Exception& e) {
    diagnostics->push_back(
        {Severity::kError, e.mark.line + 1, "", fmt::format("invalid YAML: {}", e.msg), path});
    return;
  }
  std::erase_if(documents, [](const YAML::Node& d) { return !d.IsDefined() || d.IsNull(); });
  if (documents.empty()) return;
  if (documents.size() > 1) {
    diagnostics->push_back({Severity::kError, documents[1].Mark().line + 1, "",
                            "a config file holds one document; found a second one", path});
    return;
  }
  ApplyExtenderConfigYaml(documents[0], path, config, diagnostics);
}

void ParseServeFlags(const std::vector<std::string>& args, ExtenderConfig* config,
                     std::vector<ValidationFinding>* diagnostics, bool* help) {
  *help = std::any_of(args.begin(), args.end(), IsHelp);
  if (*help) return;

  // The file first, wherever --config appears, so that every flag overrides it.
  std::string config_path;
  bool config_seen = false;
  for (std::size_t i = 0; i < args.size(); ++i) {
    FlagArg flag;
    if (!SplitFlag(args[i], &flag) || flag.name != kConfigFlag) continue;
    if (config_seen) {
      diagnostics->push_back({Severity::kError, 0, "--config", "given more than once"});
      continue;
    }
    config_seen = true;
    if (flag.has_value) {
      config_path = flag.value;
    } else if (i + 1 < args.size()) {
      config_path = args[i + 1];
    }
    if (config_path.empty())
      diagnostics->push_back({Severity::kError, 0, "--config", "needs a file name"});
  }
  if (!config_path.empty()) LoadExtenderConfigFile(config_path, config, diagnostics);

  for (std::size_t i = 0; i < args.size(); ++i) {
    FlagArg flag;
    if (!SplitFlag(args[i], &flag)) {
      diagnostics->push_back(
          {Severity::kError, 0, args[i], "unexpected argument (flags start with --)"});
      continue;
    }
    const std::string shown = "--" + flag.name;
    if (flag.name == kConfigFlag) {
      if (!flag.has_value) ++i;  // its value was read above
      continue;
    }
    const ConfigField* field = FindConfigFieldByFlag(flag.name);
    if (field == nullptr) {
      std::vector<std::string> flags = ExtenderConfigFlags();
      flags.emplace_back(kConfigFlag);
      diagnostics->push_back(
          {Severity::kError, 0, shown, "unknown flag" + DidYouMean(flag.name, flags)});
      continue;
    }
    // Booleans never take the next argument (as Go's flag package): "--flag" or "--flag=false".
    if (!flag.has_value && !IsBoolField(*field)) {
      if (i + 1 >= args.size()) {
        diagnostics->push_back(
            {Severity::kError, 0, shown, fmt::format("needs a value ({})", field->value_name)});
        continue;
      }
      flag.value = args[++i];
      flag.has_value = true;
    }
    const std::string value = flag.has_value ? flag.value : "true";
    if (Status s = SetConfigField(*field, value, ValueSource::kFlag, config); !s.ok()) {
      diagnostics->push_back({Severity::kError, 0, shown, s.message()});
    }
  }
}

std::string ServeFlagsHelp() {
  const ExtenderConfig defaults;
  std::string out =
      "Usage: capacity-extender serve [flags]\n"
      "\n"
      "Serves the kube-scheduler extender verbs (filter, prioritize, preempt, bind), the\n"
      "ElasticQuota admission webhook, /quotas, /explain, /healthz, /readyz and /metrics.\n"
      "\n"
      "Every flag is also a key of the --config file (in camelCase, shown in brackets);\n"
      "flags given on the command line win over the file.\n"
      "\n"
      "  --config FILE  YAML config file (deploy/config/extender-config.yaml lists every key)\n"
      "  -h, --help     this text\n";
  std::string_view section;
  for (const auto& f : ExtenderConfigFields()) {
    if (section != f.section) {
      section = f.section;
      out += fmt::format("\n{}:\n", section);
    }
    const std::string value = FormatConfigField(f, defaults);
    const std::string spelled =
        *f.value_name ? fmt::format("--{} {}", f.flag, f.value_name) : fmt::format("--{}", f.flag);
    out += fmt::format("  {}  [{}] (default {})\n        {}\n", spelled, f.key,
                       value.empty() ? "\"\"" : value, f.help);
  }
  return out;
}

std::string FormatDiagnostic(const ValidationFinding& d) {
  std::string out;
  if (!d.file.empty()) out += d.line > 0 ? fmt::format("{}:{}: ", d.file, d.line) : d.file + ": ";
  if (!d.field.empty()) out += d.field + ": ";
  return out + d.message;
}

}  // namespace capext
