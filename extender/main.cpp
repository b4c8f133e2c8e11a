// capacity-extender: the scheduler extender server and its tools. A thin dispatcher: every
// subcommand lives in its own file (see commands.h).
#include <iostream>
#include <string>
#include <vector>

#include "extender/commands.h"

namespace {

void PrintHelp() {
  std::cout << "usage: capacity-extender COMMAND [FLAGS]\n\n"
               "Elastic-quota capacity scheduling for the stock kube-scheduler, as an HTTP(S)\n"
               "scheduler extender (filter, prioritize, preempt, bind).\n\ncommands:\n";
  for (const auto& c : capext::ExtenderCommands()) {
    std::cout << "  " << c.usage << "\n      " << c.summary << "\n";
  }
  std::cout << "\n'capacity-extender COMMAND --help' describes a command and its flags.\n";
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    PrintHelp();
    return args.empty() ? 2 : 0;
  }
  if (args[0] == "--version") args[0] = "version";
  for (const auto& c : capext::ExtenderCommands()) {
    if (args[0] == c.name) return c.run(std::vector<std::string>(args.begin() + 1, args.end()));
  }
  std::cerr << "capacity-extender: unknown command '" << args[0] << "'\n\n";
  PrintHelp();
  return 2;
}
