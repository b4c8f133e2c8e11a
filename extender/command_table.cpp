#include <iostream>

#include "config/quota_manifest_validator.h"
#include "extender/commands.h"

namespace capext {

int RunVersionCommand(const std::vector<std::string>&) {
  std::cout << "capacity-extender " << CE_VERSION << " (C++20; "
#ifdef __clang__
            << "clang " << __clang_major__ << "." << __clang_minor__
#else
            << "gcc " << __GNUC__ << "." << __GNUC_MINOR__
#endif
            << "; built " << __DATE__ << ")\n";
  return 0;
}

int RunValidateSubcommand(const std::vector<std::string>& args) {
  return RunValidateCommand(args, std::cout, std::cerr);
}

const std::vector<ExtenderCommand>& ExtenderCommands() {
  static const std::vector<ExtenderCommand> commands = {
      {"serve", "serve [--snapshot FILE | --kubeconfig FILE] [FLAGS]",
       "run the extender HTTP(S) server (embedded example cluster when no source is given)",
       RunServeCommand},
      {"validate", "validate [--cluster SNAPSHOT] [-o json] FILE...",
       "check ElasticQuota manifests and extender config files", RunValidateSubcommand},
      {"explain", "explain [--snapshot FILE] [-o json] (NAMESPACE/NAME | -f POD.yaml)",
       "show the quota arithmetic, node fit and reclaim plan for one pod", RunExplainCommand},
      {"version", "version", "print version and build information", RunVersionCommand},
  };
  return commands;
}

}  // namespace capext
