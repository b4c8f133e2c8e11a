#include <chrono>
#include <iostream>

#include "bench/report/sim_outputs.h"
#include "bench/report/sim_report_json.h"
#include "bench/sim/progress_bar.h"
#include "bench/sim/sim_cli.h"
#include "bench/sim/sim_run_commands.h"

namespace capext {

int RunRunCommand(const std::vector<std::string>& args) {
  SimCliConfig config;
  bool help = false;
  Status s = ParseSimFlags(args, false, &config, &help);
  if (help || args.empty()) {
    std::cout
        << "usage: capacity-sim run (--trace FILE | --synthetic) [--nodes FILE | --cluster FILE] "
           "[--quotas FILE] [--policy NAME] --out DIR\n\n"
           "Replays a workload through the scheduler loop (kube-scheduler + capacity-extender,\n"
           "reclaim included) as a discrete-event simulation, and writes report.json,\n"
           "timeline.csv, report.html and perf.json to DIR. The same command gives the same\n"
           "report.json byte for byte. Draws a progress bar on stderr when it is a terminal.\n\n"
        << SimFlagsHelp(false);
    return help ? 0 : 2;
  }
  if (!s.ok()) {
    std::cerr << "capacity-sim run: " << s.message() << "\n";
    return 2;
  }
  const auto start = std::chrono::steady_clock::now();
  SimulationInput input;
  if (Status st = LoadSimInput(config, &input); !st.ok()) {
    std::cerr << "capacity-sim run: " << st.message() << "\n";
    return 1;
  }
  SimulationOptions options = config.sim;
  options.policy = config.policies.front();
  ProgressBar bar("run " + options.policy, 1, config.progress && ProgressBar("", 1).enabled());
  options.progress = [&](int64_t done, int64_t total) { bar.Update(0, done, total); };
  SimulationResult result;
  Status run = RunSimulation(input, options, &result);
  bar.Finish();
  if (!run.ok()) {
    std::cerr << "capacity-sim run: " << run.message() << "\n";
    return 1;
  }
  ReportContext context{input.workload.source, static_cast<int64_t>(input.workload.pods.size()),
                        config.echo, config.include_timing};
  if (Status w = WriteRunOutputs(config.out_dir, result, context); !w.ok()) {
    std::cerr << "capacity-sim run: " << w.message() << "\n";
    return 1;
  }
  const double wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (Status w = WriteTextFile(config.out_dir + "/perf.json", PerfJson({result}, wall)); !w.ok()) {
    std::cerr << "capacity-sim run: " << w.message() << "\n";
    return 1;
  }
  std::cout << OneLineSummary(result) << "\n"
            << "wrote " << config.out_dir << "/{report.json,timeline.csv,report.html,perf.json}\n";
  return 0;
}

}  // namespace capext
