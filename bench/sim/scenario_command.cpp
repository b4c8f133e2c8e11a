// capacity-sim scenario [--quota-semantics NAME] FILE...
//
// Which quota semantics a scenario runs with: the file's own `quotaSemantics:` key when it has
// one, because a file's expectations are written for one arithmetic and only hold under it; else
// --quota-semantics; else capacity-extender. So a directory of files written for different
// semantics runs correctly in one command, and the flag is how files without the key (written for
// the reference, say) are run under the reference's arithmetic.
#include <iostream>

#include <fmt/format.h>

#include "bench/sim/scenario.h"
#include "bench/sim/sim_commands.h"
#include "policies/policies.h"

namespace capext {
namespace {

std::string Usage() {
  return fmt::format(
      "usage: capacity-sim scenario [--quota-semantics NAME] FILE...\n\n"
      "Runs scenario files (see docs/scenarios.md) through the core, playing\n"
      "kube-scheduler and the reclaim controller, and prints one line per expectation and\n"
      "a final 'N passed, N failed'. Exit 0 when all pass, 1 on a failure, 2 when a file\n"
      "cannot be read or on bad usage.\n\n"
      "  --quota-semantics NAME  the arithmetic for files without a quotaSemantics key. A\n"
      "                          file that names its semantics runs with them (its\n"
      "                          expectations were written for them); a NOTE line says so\n"
      "                          when the two differ. NAME is one of:\n{}",
      QuotaSemanticsPolicies().HelpText("                            "));
}

}  // namespace

int RunScenarioCommand(const std::vector<std::string>& args) {
  std::vector<std::string> files;
  std::string semantics;  // empty: not given
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--help" || a == "-h") {
      std::cout << Usage();
      return 0;
    }
    std::string error;
    if (a == "--quota-semantics" || a.starts_with("--quota-semantics=")) {
      if (a.size() > std::string_view("--quota-semantics").size()) {
        semantics = a.substr(a.find('=') + 1);
      } else if (i + 1 < args.size()) {
        semantics = args[++i];
      } else {
        error = "--quota-semantics needs a value";
      }
      if (error.empty() && QuotaSemanticsPolicies().Find(semantics) == nullptr) {
        error = fmt::format("unknown quota semantics \"{}\" (want {})", semantics,
                            QuotaSemanticsPolicies().NamesText());
      }
    } else if (a.size() > 1 && a[0] == '-') {
      error = fmt::format("unknown flag {}", a);
    } else {
      files.push_back(a);
    }
    if (!error.empty()) {
      std::cerr << "capacity-sim scenario: " << error << "\n"
                << "Run 'capacity-sim scenario --help' for usage.\n";
      return 2;
    }
  }
  if (files.empty()) {
    std::cout << Usage();
    return 2;
  }
  ScenarioReport total;
  bool unreadable = false;
  for (const auto& path : files) {
    Scenario scenario;
    Status s = LoadScenarioFile(path, &scenario);
    if (!s.ok()) {
      std::cout << "ERROR " << s.message() << "\n";
      unreadable = true;
      continue;
    }
    if (!semantics.empty()) {
      if (!scenario.quota_semantics_from_file) {
        scenario.quota_semantics = semantics;
      } else if (scenario.quota_semantics != semantics) {
        std::cout << fmt::format(
            "NOTE {}: runs with quotaSemantics {} as the file says (--quota-semantics {} is for "
            "files without the key)\n",
            scenario.name, scenario.quota_semantics, semantics);
      }
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
