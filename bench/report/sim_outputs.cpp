#include "bench/report/sim_outputs.h"

#include <fmt/format.h>

#include "bench/report/sim_report_html.h"
#include "bench/report/sim_summary.h"
#include "bench/report/sim_timeline_csv.h"
#include "bench/sim/sim_cli.h"

namespace capext {

Status WriteRunOutputs(const std::string& dir, const SimulationResult& r,
                       const ReportContext& context) {
  if (Status s = WriteTextFile(dir + "/report.json", ReportJson(r, context)); !s.ok()) return s;
  if (Status s = WriteTextFile(dir + "/timeline.csv", TimelineCsv(r)); !s.ok()) return s;
  return WriteTextFile(dir + "/report.html", ReportHtml(r, context));
}

std::string OneLineSummary(const SimulationResult& r) {
  const TenantSummary total = Summarize(r).back();
  std::string groups;
  if (r.group_count > 0) {
    const GroupSummary& g = total.groups;
    groups = fmt::format(
        "; groups: {} of {} started, {} partially running at some point, {:.1f} core-hours and "
        "{:.1f} GPU-hours held partially running, time to start p50 {:.0f} s / p95 {:.0f} s, "
        "{:.2f} "
        "evictions per start",
        g.started, g.submitted, g.ever_partial, g.partial_core_hours, g.partial_gpu_hours,
        g.time_to_start.p50_s, g.time_to_start.p95_s, g.evictions_per_start);
  }
  return fmt::format(
             "{}: {} submitted, {} run, {} pending, {} rejected ({} by quota, {} by nodes), {} "
             "evictions ({} by fairness), "
             "wait p50 {:.0f} s / p95 {:.0f} s / p99 {:.0f} s, borrowed {:.1f} core-hours; {} "
             "decisions in {:.2f} s "
             "({:.0f}/s; {:.2f} s CPU, {:.0f}/CPU-s)",
             r.policy, total.submitted, total.run, total.pending, total.rejected,
             total.rejected_by_quota, total.rejected_by_nodes, r.evictions, r.fair_evictions,
             total.wait.p50_s, total.wait.p95_s, total.wait.p99_s, total.borrowed_core_hours,
             r.decisions, r.engine_seconds,
             r.engine_seconds > 0 ? static_cast<double>(r.decisions) / r.engine_seconds : 0.0,
             r.engine_cpu_seconds,
             r.engine_cpu_seconds > 0 ? static_cast<double>(r.decisions) / r.engine_cpu_seconds
                                      : 0.0) +
         groups;
}

}  // namespace capext
