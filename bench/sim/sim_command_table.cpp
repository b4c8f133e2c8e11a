#include "bench/sim/sim_commands.h"
#include "bench/sim/sim_run_commands.h"

namespace capext {

const std::vector<SimCommand>& SimCommands() {
  static const std::vector<SimCommand> commands = {
      {"scenario", "scenario [--quota-semantics NAME] FILE...",
       "run scenario files and check their expectations", RunScenarioCommand},
      {"run",
       "run (--trace FILE | --synthetic) [--nodes FILE | --cluster FILE] [--quotas FILE] --out DIR",
       "simulate a workload under one policy; writes report.json, timeline.csv, report.html",
       RunRunCommand},
      {"compare", "compare --policies A,B,... (--trace FILE | --synthetic) [...] --out DIR",
       "run several policies on the same workload; writes compare.json and compare.html",
       RunCompareCommand},
  };
  return commands;
}

}  // namespace capext
