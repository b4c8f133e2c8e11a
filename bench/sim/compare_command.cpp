#include <algorithm>
#include <atomic>
#include <chrono>
#include <iostream>
#include <thread>

#include "bench/report/sim_outputs.h"
#include "bench/report/sim_report_html.h"
#include "bench/report/sim_report_json.h"
#include "bench/sim/progress_bar.h"
#include "bench/sim/sim_cli.h"
#include "bench/sim/sim_run_commands.h"

namespace capext {

int RunCompareCommand(const std::vector<std::string>& args) {
  SimCliConfig config;
  bool help = false;
  Status s = ParseSimFlags(args, true, &config, &help);
  if (help || args.empty()) {
    std::cout
        << "usage: capacity-sim compare [--policies A,B,...] (--trace FILE | --synthetic) "
           "[--nodes FILE | --cluster FILE] [--quotas FILE] --out DIR\n\n"
           "Runs each policy on the same workload and writes compare.json, compare.html and\n"
           "perf.json to DIR, and each policy's report.json, timeline.csv and report.html to\n"
           "DIR/<policy>/. Policies run in parallel (--jobs); results do not depend on it.\n\n"
        << SimFlagsHelp(true);
    return help ? 0 : 2;
  }
  if (!s.ok()) {
    std::cerr << "capacity-sim compare: " << s.message() << "\n";
    return 2;
  }
  const auto start = std::chrono::steady_clock::now();
  SimulationInput input;
  if (Status st = LoadSimInput(config, &input); !st.ok()) {
    std::cerr << "capacity-sim compare: " << st.message() << "\n";
    return 1;
  }
  // Every policy with every admission mode, policy-major (per-pod, then gang, per policy).
  std::vector<std::pair<std::string, SimAdmission>> runs;
  for (const std::string& p : config.policies) {
    for (SimAdmission a : config.admissions)
      runs.emplace_back(p, a);
  }
  const std::size_t n = runs.size();
  std::vector<SimulationResult> results(n);
  std::vector<Status> statuses(n);
  ProgressBar bar("compare", static_cast<int>(n), config.progress && ProgressBar("", 1).enabled());
  // Every policy's share from the start, so the total and the ETA do not jump as runs begin.
  for (std::size_t i = 0; i < n; ++i)
    bar.SetTotal(static_cast<int>(i), static_cast<int64_t>(input.workload.pods.size()));
  std::atomic<std::size_t> next{0};
  auto worker = [&] {
    for (std::size_t i = next++; i < n; i = next++) {
      SimulationOptions options = config.sim;
      options.policy = runs[i].first;
      options.admission = runs[i].second;
      options.progress = [&bar, i](int64_t done, int64_t total) {
        bar.Update(static_cast<int>(i), done, total);
      };
      statuses[i] = RunSimulation(input, options, &results[i]);
    }
  };
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  const std::size_t jobs =
      std::min<std::size_t>(n, config.jobs > 0 ? static_cast<std::size_t>(config.jobs) : cores);
  std::vector<std::thread> threads;
  for (std::size_t j = 1; j < jobs; ++j)
    threads.emplace_back(worker);
  worker();
  for (auto& t : threads)
    t.join();
  bar.Finish();
  for (const auto& st : statuses) {
    if (!st.ok()) {
      std::cerr << "capacity-sim compare: " << st.message() << "\n";
      return 1;
    }
  }
  ReportContext context{input.workload.source, static_cast<int64_t>(input.workload.pods.size()),
                        config.echo, config.include_timing};
  for (const auto& r : results) {
    if (Status w = WriteRunOutputs(config.out_dir + "/" + r.policy, r, context); !w.ok()) {
      std::cerr << "capacity-sim compare: " << w.message() << "\n";
      return 1;
    }
  }
  Status w = WriteTextFile(config.out_dir + "/compare.json", CompareJson(results, context));
  if (w.ok()) w = WriteTextFile(config.out_dir + "/compare.html", CompareHtml(results, context));
  const double wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (w.ok()) w = WriteTextFile(config.out_dir + "/perf.json", PerfJson(results, wall));
  if (!w.ok()) {
    std::cerr << "capacity-sim compare: " << w.message() << "\n";
    return 1;
  }
  for (const auto& r : results)
    std::cout << OneLineSummary(r) << "\n";
  std::cout << "wrote " << config.out_dir
            << "/{compare.json,compare.html,perf.json} and one directory per policy\n";
  return 0;
}

}  // namespace capext
