// capacity-sim: offline scenarios, replays and policy comparisons through the production core.
#include <iostream>
#include <string>
#include <vector>

#include "bench/sim/sim_commands.h"

namespace {

void PrintHelp() {
  std::cout << "usage: capacity-sim COMMAND [ARGS]\n\ncommands:\n";
  for (const auto& c : capext::SimCommands()) {
    std::cout << "  " << c.usage << "\n      " << c.summary << "\n";
  }
  std::cout << "\n'capacity-sim COMMAND --help' describes a command.\n";
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    PrintHelp();
    return args.empty() ? 2 : 0;
  }
  for (const auto& c : capext::SimCommands()) {
    if (args[0] == c.name) return c.run(std::vector<std::string>(args.begin() + 1, args.end()));
  }
  std::cerr << "capacity-sim: unknown command '" << args[0] << "'\n";
  PrintHelp();
  return 2;
}
