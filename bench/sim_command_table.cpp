#include "bench/sim_commands.h"

namespace capext {

const std::vector<SimCommand>& SimCommands() {
  static const std::vector<SimCommand> commands = {
      {"scenario", "scenario FILE...", "run scenario files and check their expectations",
       RunScenarioCommand},
  };
  return commands;
}

}  // namespace capext
