// The subcommands of capacity-sim, one function each, dispatched from one table in
// capacity_sim_main.cpp (which also prints --help from it).
#pragma once

#include <string>
#include <vector>

namespace capext {

struct SimCommand {
  const char* name;
  const char* usage;    // one line: "scenario FILE..."
  const char* summary;  // one line
  int (*run)(const std::vector<std::string>& args);
};

// capacity-sim scenario [--quota-semantics NAME] FILE...: exit 0 when every expectation passes,
// 1 otherwise, 2 on an unreadable file or bad usage. A file's own quotaSemantics key wins over the
// flag (see scenario_command.cpp).
int RunScenarioCommand(const std::vector<std::string>& args);

// The full table (scenario, run, compare, ...).
const std::vector<SimCommand>& SimCommands();

}  // namespace capext
