// Writing a simulation's files (run_command.cpp, compare_command.cpp) and the one-line summary
// both print.
// Thread-safety: stateless functions.
#pragma once

#include <string>
#include <vector>

#include "bench/report/sim_report_json.h"
#include "bench/sim/simulation.h"

namespace capext {

// report.json, timeline.csv and report.html of one result into `dir`.
Status WriteRunOutputs(const std::string& dir, const SimulationResult& result, const ReportContext& context);

// "capacity: 8151 submitted, 8000 run, 100 pending, 51 rejected, 12 evictions, p95 wait 3 s".
std::string OneLineSummary(const SimulationResult& result);

}  // namespace capext
