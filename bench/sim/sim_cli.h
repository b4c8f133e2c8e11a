// The command-line flags shared by `capacity-sim run` and `capacity-sim compare`, from one
// table that also prints --help, and loading what they name into a SimulationInput.
// Flags may also come from a YAML file (`--config FILE`: a map of flag name without dashes to
// value, `true` for switches); flags on the command line win over the file.
// Thread-safety: stateless functions.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "bench/sim/simulation.h"
#include "bench/sim/synthetic_workload.h"
#include "bench/sim/trace_reader.h"

namespace capext {

struct SimCliConfig {
  // Workload.
  std::string trace;
  bool synthetic = false;
  TraceOptions trace_options;
  SyntheticOptions synthetic_options;
  // Cluster.
  std::string nodes_csv;
  std::string cluster_snapshot;
  int synthetic_nodes = 100;
  int64_t max_pods = 110;
  // Quotas.
  std::string quotas;
  // Policies (run: exactly one).
  std::vector<std::string> policies;  // SimProfilePolicies() names
  // Admission of pod groups (run: exactly one; compare: each policy runs with each).
  std::vector<SimAdmission> admissions = {SimAdmission::kPod};
  SimulationOptions sim;
  // Output.
  std::string out_dir;
  bool include_timing = false;
  bool progress = true;
  int jobs = 0;  // compare: simulations at once (0 = min(cores, policies))
  // Effective options, flag -> value, in table order (echoed by the reports; file flags by
  // base name so reports do not depend on the working directory).
  std::vector<std::pair<std::string, std::string>> echo;
};

// `compare` selects the compare flags (--policies, --jobs) instead of run's (--policy).
// Sets *help and succeeds on --help/-h.
Status ParseSimFlags(const std::vector<std::string>& args, bool compare, SimCliConfig* out,
                     bool* help);
std::string SimFlagsHelp(bool compare);

// The file name of `path` without its directories (how reports and notes name an input).
std::string BaseName(const std::string& path);

// Reads the trace / generates the workload, the nodes, the snapshot and the quota plan
// (sim_input.cpp).
Status LoadSimInput(const SimCliConfig& config, SimulationInput* out);

// Writes `content` to `path` (creating parent directories).
Status WriteTextFile(const std::string& path, const std::string& content);

}  // namespace capext
