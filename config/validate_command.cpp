// The `validate` subcommand's arguments and help; the work is ValidateManifests.
#include <fmt/format.h>

#include "config/quota_manifest_validator.h"
#include "core/status.h"

namespace capext {
namespace {

struct CommandLine {
  ValidateOptions options;
  std::string output = "text";
  bool verbose = false;
  bool help = false;
};

// Whether args[*i] is the option `long_name` (or `short_name`): "--name VALUE", "--name=VALUE"
// and, for short names, "-oVALUE". Its value goes to *value; a missing one is an Invalid status.
StatusOr<bool> OptionValue(const std::vector<std::string>& args, std::size_t* i,
                           std::string_view long_name, std::string_view short_name,
                           std::string* value) {
  const std::string& arg = args[*i];
  for (std::string_view name : {long_name, short_name}) {
    if (name.empty() || !std::string_view(arg).starts_with(name)) continue;
    const std::string_view rest = std::string_view(arg).substr(name.size());
    if (rest.empty()) {
      if (*i + 1 >= args.size()) return Status::Invalid(fmt::format("{} needs a value", name));
      *value = args[++*i];
      return true;
    }
    if (rest.front() == '=') {
      *value = std::string(rest.substr(1));
      return true;
    }
    if (name == short_name) {  // -ojson
      *value = std::string(rest);
      return true;
    }
  }
  return false;
}

Status ParseArgs(const std::vector<std::string>& args, CommandLine* cl) {
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "-h" || arg == "--help") {
      cl->help = true;
      continue;
    }
    if (arg == "-v" || arg == "--verbose") {
      cl->verbose = true;
      continue;
    }
    std::string value;
    const StatusOr<bool> output = OptionValue(args, &i, "--output", "-o", &value);
    if (!output.ok()) return output.status();
    if (*output) {
      if (value != "text" && value != "json") {
        return Status::Invalid(fmt::format("unknown output format \"{}\" (text or json)", value));
      }
      cl->output = value;
      continue;
    }
    const StatusOr<bool> cluster = OptionValue(args, &i, "--cluster", "", &value);
    if (!cluster.ok()) return cluster.status();
    if (*cluster) {
      cl->options.cluster_snapshot = value;
      continue;
    }
    const StatusOr<bool> config = OptionValue(args, &i, "--config", "", &value);
    if (!config.ok()) return config.status();
    if (*config) {
      cl->options.config_paths.push_back(value);
      continue;
    }
    if (arg.size() > 1 && arg.front() == '-') {
      return Status::Invalid(fmt::format("unknown flag {}", arg));
    }
    cl->options.paths.push_back(arg);
  }
  if (!cl->help && cl->options.paths.empty() && cl->options.config_paths.empty()) {
    return Status::Invalid("no files given");
  }
  return {};
}

}  // namespace

std::string ValidateCommandHelp() {
  return "Usage: capacity-extender validate [flags] FILE|DIR...\n"
         "\n"
         "Checks ElasticQuota manifests and extender config files before they are applied,\n"
         "with the checks of the admission webhook plus those that need the whole set:\n"
         "  - per ElasticQuota: apiVersion and kind, no unknown fields, metadata.name and\n"
         "    namespace, every quantity parses and is not negative, min <= max per resource;\n"
         "  - across the files: one ElasticQuota per namespace; the hierarchy annotation\n"
         "    scheduling.capacity-extender.io/parent: \"<namespace>/<name>\" names an existing\n"
         "    quota of the same API group, has no cycles, and the children's mins fit in the\n"
         "    parent's min (a child's max above the parent's max is a warning);\n"
         "  - warnings for the reference plugin's traps: a min resource missing from max, a max\n"
         "    naming only one of cpu and memory, a resource pods request that no min names, a\n"
         "    min for a resource no node has; a min or max too large for exact int64\n"
         "    arithmetic (the extender reads it as the int64 limit, that is, unbounded);\n"
         "  - extender config files (YAML without apiVersion/kind): known keys, types, policy\n"
         "    names and cross-field rules, as `serve --config` checks them.\n"
         "Other Kubernetes objects (Deployments, CRDs, RBAC, kustomizations...) are skipped.\n"
         "A directory stands for its *.yaml, *.yml and *.json files, recursively.\n"
         "\n"
         "Flags:\n"
         "  --cluster SNAPSHOT  also check against a cluster snapshot (kubectl get nodes,pods,\n"
         "                      elasticquotas -A -o yaml): the sum of mins must fit the nodes'\n"
         "                      allocatable; the snapshot's quotas join the hierarchy and\n"
         "                      namespace checks\n"
         "  --config FILE       check FILE as an extender config, whatever its keys\n"
         "  -o, --output FORMAT text (default; like a compiler: file:line: error: ...) or json\n"
         "                      (an array of {file, line, severity, object, field, message})\n"
         "  -v, --verbose       also print notes (skipped objects and files)\n"
         "  -h, --help          this text\n"
         "\n"
         "Exit status: 0 no errors (warnings allowed), 1 errors found, 2 an input could not be\n"
         "read or is not YAML/JSON, or bad usage.\n";
}

int RunValidateCommand(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  CommandLine cl;
  if (Status s = ParseArgs(args, &cl); !s.ok()) {
    err << "capacity-extender validate: " << s.message() << "\n"
        << "Run 'capacity-extender validate --help' for usage.\n";
    return 2;
  }
  if (cl.help) {
    out << ValidateCommandHelp();
    return 0;
  }
  const ValidateReport report = ValidateManifests(cl.options);
  if (cl.output == "json") {
    PrintReportJson(report, cl.verbose, out);
  } else {
    PrintReportText(report, cl.verbose, out);
  }
  return report.ExitCode();
}

}  // namespace capext
