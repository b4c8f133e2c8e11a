// The subcommands of capacity-extender, one function each; main.cpp dispatches from one table
// that also prints --help.
#pragma once

#include <string>
#include <vector>

namespace capext {

struct ExtenderCommand {
  const char* name;
  const char* usage;
  const char* summary;
  int (*run)(const std::vector<std::string>& args);
};

int RunServeCommand(const std::vector<std::string>& args);
int RunExplainCommand(const std::vector<std::string>& args);
int RunVersionCommand(const std::vector<std::string>& args);
int RunValidateSubcommand(const std::vector<std::string>& args);

const std::vector<ExtenderCommand>& ExtenderCommands();

}  // namespace capext
