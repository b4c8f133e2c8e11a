#include <iostream>

#include <fmt/format.h>

#include "bench/sim/scenario.h"
#include "bench/sim/sim_commands.h"

namespace capext {

int RunScenarioCommand(const std::vector<std::string>& args) {
  if (args.empty() || args[0] == "--help" || args[0] == "-h") {
    std::cout << "usage: capacity-sim scenario FILE...\n\n"
                 "Runs scenario files (see ../shared/scenarios/README.md) through the core, playing\n"
                 "kube-scheduler and the reclaim controller, and prints one line per expectation and\n"
                 "a final 'N passed, N failed'. Exit 0 when all pass, 1 on a failure, 2 when a file\n"
                 "cannot be read.\n";
    return args.empty() ? 2 : 0;
  }
  ScenarioReport total;
  bool unreadable = false;
  for (const auto& path : args) {
    Scenario scenario;
    Status s = LoadScenarioFile(path, &scenario);
    if (!s.ok()) {
      std::cout << "ERROR " << s.message() << "\n";
      unreadable = true;
      continue;
    }
    ScenarioReport r = RunScenario(scenario, std::cout);
    total.passed += r.passed;
    total.failed += r.failed;
  }
  std::cout << fmt::format("{} passed, {} failed\n", total.passed, total.failed);
  if (unreadable) return 2;
  return total.failed == 0 ? 0 : 1;
}

}  // namespace capext
