// sim_bench: how fast the capacity-sim engine decides, at the scale the simulator promises.
//  1. decisions/s on 5,000 nodes: a synthetic workload (capacity policy, kube-scheduler node
//     sampling) run --repeat times; decisions = scheduling attempts (bind or fail), over the
//     event loop's wall time and over its thread CPU time (what a loaded machine leaves).
//  2. a 1,000,000-pod synthetic trace on 5,000 nodes: generation + simulation + reports in
//     memory, wall time (target < 60 s) and peak RSS - skipped with --quick unless
//     --million-pods is given.
//  3. the Alibaba trace (8,152 pods, 1,523 nodes, bench/data/alibaba-gpu-v2023) with
//     bench/examples/alibaba-quotas.yaml: wall time of the acceptance run.
// Prints the numbers and writes out/bench/sim_bench.json (or --json FILE). Medians over repeats;
// run it from the repository root (the trace part reads bench/examples/ and bench/data/).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "bench/micro/bench_support.h"
#include "bench/report/sim_report_html.h"
#include "bench/report/sim_report_json.h"
#include "bench/report/sim_timeline_csv.h"
#include "bench/sim/sim_cli.h"
#include "bench/sim/simulation.h"
#include "bench/sim/synthetic_workload.h"

namespace capext::bench {
namespace {

// Peak resident set size of the process so far (VmHWM), in bytes; 0 when unknown.
std::size_t PeakResidentBytes() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmHWM:", 0) == 0)
      return static_cast<std::size_t>(std::atoll(line.c_str() + 6)) * 1024;
  }
  return 0;
}

SimulationInput Synthetic(int nodes, int64_t pods, uint64_t seed) {
  SimulationInput in;
  in.nodes = GenerateSyntheticNodes(nodes);
  SyntheticOptions o;
  o.pods = pods;
  o.seed = seed;
  int64_t cpu = 0;
  for (const auto& n : in.nodes)
    cpu += n.allocatable.Get("cpu");
  in.workload = GenerateSyntheticWorkload(o, cpu);
  in.plan = SyntheticQuotaPlan({"tenant-0", "tenant-1", "tenant-2", "tenant-3"}, in.nodes);
  return in;
}

// Simulates, then renders every report in memory (what `run` does besides writing files).
SimulationResult RunAndReport(const SimulationInput& in, const std::string& policy,
                              std::size_t* report_bytes) {
  SimulationOptions o;
  o.policy = policy;
  SimulationResult r;
  if (Status s = RunSimulation(in, o, &r); !s.ok()) {
    std::fprintf(stderr, "simulation failed: %s\n", s.message().c_str());
    std::exit(1);
  }
  ReportContext context{
      in.workload.source, static_cast<int64_t>(in.workload.pods.size()), {}, false};
  *report_bytes =
      ReportJson(r, context).size() + TimelineCsv(r).size() + ReportHtml(r, context).size();
  return r;
}

}  // namespace
}  // namespace capext::bench

int main(int argc, char** argv) {
  using namespace capext;
  using namespace capext::bench;
  const Args args = Args::Parse(
      argc, argv,
      "Usage: bench_sim_bench [--json FILE] [--quick] [--nodes N] [--pods N] [--repeat N]\n"
      "                       [--million-pods N] [--trace-dir DIR]\n"
      "  --nodes N         cluster size for the decisions/s runs (default 5000)\n"
      "  --pods N          pods per decisions/s run (default 200000; --quick 50000)\n"
      "  --repeat N        decisions/s runs, median reported (default 3; --quick 1)\n"
      "  --million-pods N  pods of the big run (default 1000000; 0 skips; --quick skips)\n"
      "  --trace-dir DIR   the Alibaba trace's CSVs (default bench/data/alibaba-gpu-v2023)");
  Report report("sim_bench");
  const int nodes = args.Int("--nodes", 5000);
  const int64_t pods = args.Int("--pods", args.quick ? 50'000 : 200'000);
  const int repeat = std::max(1, args.Int("--repeat", args.quick ? 1 : 3));
  const int64_t million = args.Int("--million-pods", args.quick ? 0 : 1'000'000);
  const std::string data = args.Str("--trace-dir", "bench/data/alibaba-gpu-v2023") + "/";
  report.Number("machine.cores", static_cast<double>(std::thread::hardware_concurrency()));

  // 1. decisions/s.
  std::printf("decisions/s: %d nodes, %lld synthetic pods, capacity policy, %d runs\n", nodes,
              static_cast<long long>(pods), repeat);
  const SimulationInput in = Synthetic(nodes, pods, 1);
  std::vector<double> wall_rate, cpu_rate, wall_s, cpu_s;
  int64_t decisions = 0;
  for (int i = 0; i < repeat; ++i) {
    SimulationOptions o;
    SimulationResult r;
    if (!RunSimulation(in, o, &r).ok()) return 1;
    decisions = r.decisions;
    wall_s.push_back(r.engine_seconds);
    cpu_s.push_back(r.engine_cpu_seconds);
    wall_rate.push_back(static_cast<double>(r.decisions) / r.engine_seconds);
    cpu_rate.push_back(static_cast<double>(r.decisions) / r.engine_cpu_seconds);
    std::printf(
        "  run %d: %lld decisions, %.2f s wall (%.0f/s), %.2f s CPU (%.0f/s), %lld reclaims\n",
        i + 1, static_cast<long long>(r.decisions), r.engine_seconds, wall_rate.back(),
        r.engine_cpu_seconds, cpu_rate.back(), static_cast<long long>(r.reclaims));
  }
  report.Number("decisions.nodes", nodes);
  report.Number("decisions.pods", static_cast<double>(pods));
  report.Number("decisions.count", static_cast<double>(decisions));
  report.Number("decisions.engine_wall_seconds_median", Median(wall_s));
  report.Number("decisions.engine_cpu_seconds_median", Median(cpu_s));
  report.Number("decisions.per_second_median", Median(wall_rate));
  report.Number("decisions.per_cpu_second_median", Median(cpu_rate));
  report.Series("decisions.per_second", wall_rate);
  // The project's target for the simulator at 5,000 nodes (the developers' guide and issue 24;
  // issue 14 asked for 150,000).
  report.Target("decisions_per_second_5k_nodes", Median(wall_rate), ">=", 200'000, "decisions/s");

  // 2. A million pods.
  if (million > 0) {
    std::printf("%lld-pod synthetic trace on %d nodes\n", static_cast<long long>(million), nodes);
    Stopwatch total;
    const SimulationInput big = Synthetic(nodes, million, 1);
    const double generate_s = total.WallMicros() / 1e6;
    std::size_t bytes = 0;
    const SimulationResult r = RunAndReport(big, "capacity", &bytes);
    const double wall = total.WallMicros() / 1e6;
    const double cpu = total.CpuMicros() / 1e6;
    std::printf(
        "  %.1f s wall (%.1f s CPU): generate %.1f s, engine %.1f s (%lld decisions, %lld "
        "reclaims), "
        "reports %.1f MB\n",
        wall, cpu, generate_s, r.engine_seconds, static_cast<long long>(r.decisions),
        static_cast<long long>(r.reclaims), static_cast<double>(bytes) / 1e6);
    report.Number("million.pods", static_cast<double>(million));
    report.Number("million.wall_seconds", wall);
    report.Number("million.cpu_seconds", cpu);
    report.Number("million.engine_wall_seconds", r.engine_seconds);
    report.Number("million.engine_cpu_seconds", r.engine_cpu_seconds);
    report.Number("million.decisions", static_cast<double>(r.decisions));
    report.Number("million.reclaims", static_cast<double>(r.reclaims));
    report.Number("million.rss_bytes", static_cast<double>(ResidentBytes()));
    report.Number("million.peak_rss_bytes", static_cast<double>(PeakResidentBytes()));
    std::printf("  peak RSS %.0f MB\n", static_cast<double>(PeakResidentBytes()) / 1e6);
    report.Target("million_pods_wall_seconds", wall, "<=", 60, "s");
  }

  // 3. The Alibaba trace, as the acceptance command runs it.
  SimCliConfig config;
  bool help = false;
  Status parsed =
      ParseSimFlags({"--trace", data + "openb_pod_list_default.csv", "--nodes",
                     data + "openb_node_list_all_node.csv", "--tenants", "qos", "--quotas",
                     "bench/examples/alibaba-quotas.yaml", "--out", "unused"},
                    false, &config, &help);
  SimulationInput trace;
  if (parsed.ok() && LoadSimInput(config, &trace).ok()) {
    std::vector<double> walls;
    for (int i = 0; i < repeat; ++i) {
      Stopwatch watch;
      std::size_t bytes = 0;
      RunAndReport(trace, "capacity", &bytes);
      walls.push_back(watch.WallMicros() / 1e6);
    }
    std::printf("Alibaba trace (%zu pods, %zu nodes), capacity policy: %.2f s (median of %d)\n",
                trace.workload.pods.size(), trace.nodes.size(), Median(walls), repeat);
    report.Number("trace.wall_seconds_median", Median(walls));
  } else {
    report.Note("trace", "skipped: run from the repository root (or give --trace-dir)");
    std::printf("Alibaba trace: skipped (no %s)\n", data.c_str());
  }
  report.Number("process.peak_rss_bytes", static_cast<double>(PeakResidentBytes()));
  std::printf("peak RSS of the whole benchmark: %.0f MB\n",
              static_cast<double>(PeakResidentBytes()) / 1e6);
  report.Write(args.Str("--json", ""));
  return 0;
}
