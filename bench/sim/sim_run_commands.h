// `capacity-sim run` and `capacity-sim compare` (entries of the table in sim_command_table.cpp).
//  run:     one policy on a workload; writes report.json, timeline.csv, report.html and perf.json
//           (wall-clock timing) to --out.
//  compare: several policies on the same workload; writes compare.json, compare.html, perf.json
//           and, per policy, <policy>/report.json, timeline.csv and report.html.
// Exit codes: 0 done, 1 the simulation could not run (unreadable input, bad file), 2 usage.
#pragma once

#include <string>
#include <vector>

namespace capext {

int RunRunCommand(const std::vector<std::string>& args);
int RunCompareCommand(const std::vector<std::string>& args);

}  // namespace capext
