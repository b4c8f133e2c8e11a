#include <algorithm>
#include <functional>

#include <fmt/format.h>

#include "bench/report/sim_html_parts.h"
#include "bench/report/sim_report_html.h"
#include "bench/report/sim_summary.h"

namespace capext {
namespace {

// One row of a policies-as-columns table.
struct Row {
  std::string label;
  std::function<std::string(const TenantSummary&, const SimulationResult&)> cell;
};

std::string PolicyColumnsTable(const std::vector<SimulationResult>& results,
                               const std::vector<std::vector<TenantSummary>>& summaries,
                               std::size_t tenant, const std::vector<Row>& rows) {
  std::string out = "<table><tr><th class=\"l\">metric</th>";
  for (const auto& r : results)
    out += "<th>" + EscapeHtml(r.policy) + "</th>";
  out += "</tr>";
  for (const auto& row : rows) {
    out += "<tr><td class=\"l\">" + EscapeHtml(row.label) + "</td>";
    for (std::size_t p = 0; p < results.size(); ++p) {
      const auto& s = summaries[p];
      const TenantSummary& t = tenant < s.size() ? s[tenant] : s.back();
      out += "<td>" + row.cell(t, results[p]) + "</td>";
    }
    out += "</tr>";
  }
  return out + "</table>";
}

}  // namespace

std::string CompareHtml(const std::vector<SimulationResult>& results,
                        const ReportContext& context) {
  using namespace html;
  std::vector<std::vector<TenantSummary>> summaries;
  for (const auto& r : results)
    summaries.push_back(Summarize(r));
  std::string policies;
  for (const auto& r : results)
    policies += (policies.empty() ? "" : ", ") + r.policy;
  const std::string title =
      fmt::format("capacity-sim compare: {} on {}", policies, context.workload_source);
  std::string out = PageStart(title);
  out += "<h1>" + EscapeHtml(title) + "</h1>";
  if (results.empty()) return out + "<p>No policies.</p>" + PageEnd();
  const SimulationResult& first = results.front();
  out += fmt::format(
      "<p>{} nodes ({} cpu cores, {} GPUs), {} pods, {} tenants. Each policy ran on the same "
      "workload.</p>",
      first.nodes, FormatNumber(static_cast<double>(first.allocatable_cpu) / 1000.0),
      FormatNumber(static_cast<double>(first.allocatable_gpu) /
                   static_cast<double>(first.gpu_scale)),
      context.workload_pods, first.tenants.size());

  auto num = [](int64_t v) { return std::to_string(v); };
  const std::vector<Row> rows = {
      {"submitted",
       [&](const TenantSummary& s, const SimulationResult&) { return num(s.submitted); }},
      {"run", [&](const TenantSummary& s, const SimulationResult&) { return num(s.run); }},
      {"pending at end",
       [&](const TenantSummary& s, const SimulationResult&) { return num(s.pending); }},
      {"rejected by quota",
       [&](const TenantSummary& s, const SimulationResult&) { return num(s.rejected_by_quota); }},
      {"rejected by nodes",
       [&](const TenantSummary& s, const SimulationResult&) { return num(s.rejected_by_nodes); }},
      {"evictions suffered",
       [&](const TenantSummary& s, const SimulationResult&) { return num(s.evictions_suffered); }},
      {"evictions caused",
       [&](const TenantSummary& s, const SimulationResult&) { return num(s.evictions_caused); }},
      {"wait p50",
       [](const TenantSummary& s, const SimulationResult&) { return Duration(s.wait.p50_s); }},
      {"wait p95",
       [](const TenantSummary& s, const SimulationResult&) { return Duration(s.wait.p95_s); }},
      {"wait p99",
       [](const TenantSummary& s, const SimulationResult&) { return Duration(s.wait.p99_s); }},
      {"below guarantee with pending",
       [](const TenantSummary& s, const SimulationResult&) {
         return Duration(s.below_guarantee_with_pending_s);
       }},
      {"borrowed core-hours",
       [](const TenantSummary& s, const SimulationResult&) {
         return FormatNumber(s.borrowed_core_hours);
       }},
      {"used core-hours", [](const TenantSummary& s,
                             const SimulationResult&) { return FormatNumber(s.used_core_hours); }},
      {"invariant run + pending + rejected = submitted",
       [](const TenantSummary& s, const SimulationResult&) {
         return s.run + s.pending + s.rejected == s.submitted
                    ? std::string("<span class=\"good\">holds</span>")
                    : std::string("<span class=\"bad\">BROKEN</span>");
       }},
  };
  out += "<h2>All tenants</h2>";
  out += PolicyColumnsTable(results, summaries, first.tenants.size(), rows);

  // Pod groups: per-pod against gang admission (only for workloads with groups).
  if (first.group_count > 0) {
    const std::vector<Row> group_rows = {
        {"groups submitted",
         [&](const TenantSummary& s, const SimulationResult&) { return num(s.groups.submitted); }},
        {"groups started",
         [&](const TenantSummary& s, const SimulationResult&) { return num(s.groups.started); }},
        {"groups ever partially running (< minMember)",
         [&](const TenantSummary& s, const SimulationResult&) {
           return num(s.groups.ever_partial);
         }},
        {"partially running core-hours",
         [](const TenantSummary& s, const SimulationResult&) {
           return FormatNumber(s.groups.partial_core_hours);
         }},
        {"partially running GPU-hours",
         [](const TenantSummary& s, const SimulationResult&) {
           return FormatNumber(s.groups.partial_gpu_hours);
         }},
        {"time to start p50",
         [](const TenantSummary& s, const SimulationResult&) {
           return Duration(s.groups.time_to_start.p50_s);
         }},
        {"time to start p95",
         [](const TenantSummary& s, const SimulationResult&) {
           return Duration(s.groups.time_to_start.p95_s);
         }},
        {"member evictions per group start",
         [](const TenantSummary& s, const SimulationResult&) {
           return FormatNumber(s.groups.evictions_per_start);
         }},
    };
    out +=
        "<h2>Pod groups</h2><p>A group is partially running while 1 &le; running members "
        "&lt; minMember and it is not finishing (no member has completed since minMember ran "
        "at once): its members hold capacity for a job that cannot work.</p>";
    out += PolicyColumnsTable(results, summaries, first.tenants.size(), group_rows);
  }

  out += "<h2>Wait times</h2><div class=\"charts\">";
  std::vector<std::pair<std::string, std::vector<int64_t>>> waits;
  for (const auto& r : results)
    waits.emplace_back(r.policy, AllWaits(r));
  out += WaitCdfChart(waits, "Wait-time distribution per policy, all tenants (CDF)", 640);
  BarChart bars;
  bars.title = "p95 wait per tenant and policy";
  bars.width = 640;
  double longest = 0;
  for (const auto& s : summaries) {
    for (std::size_t t = 0; t + 1 < s.size(); ++t)
      longest = std::max(longest, s[t].wait.p95_s);
  }
  const DurationUnit wait_unit = DurationUnitFor(longest);
  bars.y_label = fmt::format("p95 wait ({})", wait_unit.name);
  for (const auto& t : first.tenants)
    bars.categories.push_back(t.name);
  for (std::size_t p = 0; p < results.size(); ++p) {
    bars.series_labels.push_back(results[p].policy);
    std::vector<double> v;
    for (std::size_t t = 0; t + 1 < summaries[p].size(); ++t)
      v.push_back(summaries[p][t].wait.p95_s / wait_unit.seconds_per_unit);
    bars.values.push_back(std::move(v));
  }
  out += RenderBarChart(bars);
  out += "</div>";

  out += "<h2>Cluster cpu utilisation</h2><div class=\"charts\">";
  {
    const TimeUnit unit = TimeUnitFor(first.end_ms);
    LineChart c;
    c.title = "Cluster cpu utilisation per policy";
    c.x_label = fmt::format("time ({})", unit.name);
    c.y_label = "cpu requested / allocatable";
    c.y_percent = true;
    c.width = 640;
    c.x_min = 0;
    for (std::size_t p = 0; p < results.size(); ++p) {
      ChartSeries s{results[p].policy, ChartColor(p), ChartDash(p), 1.8, true, {}};
      for (const auto& pt : results[p].metrics.timeline()) {
        s.points.emplace_back(
            static_cast<double>(pt.t_ms) / unit.ms_per_unit,
            static_cast<double>(pt.cluster_cpu) /
                static_cast<double>(std::max<int64_t>(1, results[p].allocatable_cpu)));
      }
      c.series.push_back(std::move(s));
    }
    out += RenderLineChart(c);
  }
  out += "</div>";

  // Per tenant, one small chart per policy, all on the same scales and (up to four policies) in
  // one row, so they read side by side.
  const int small_width = std::clamp((1296 - 12 * (static_cast<int>(results.size()) - 1)) /
                                         std::max(1, static_cast<int>(results.size())),
                                     300, 640);
  for (std::size_t t = 0; t < first.tenants.size(); ++t) {
    out += "<h2>Tenant " + EscapeHtml(first.tenants[t].name) + "</h2>";
    out += PolicyColumnsTable(results, summaries, t, rows);
    for (const char* which : {"cpu", "gpu"}) {
      if (std::string(which) == "gpu" && first.gpu_resource.empty()) continue;
      const ChartAxes axes = SharedAxes(results, t, which);
      out += "<div class=\"charts\">";
      for (const auto& r : results) {
        out += UsedMinMaxChart(r, t, which, small_width,
                               fmt::format("{} under {}: {}", r.tenants[t].name, r.policy,
                                           std::string(which) == "gpu" ? "GPUs" : "cpu cores"),
                               axes);
      }
      out += "</div>";
    }
  }
  out += NotesSection(context, first.notes);
  out += PageEnd();
  return out;
}

}  // namespace capext
