#include "bench/report/sim_report_html.h"

#include <fmt/format.h>

#include "bench/report/sim_html_parts.h"
#include "bench/report/sim_quota_tree_html.h"
#include "bench/report/sim_summary.h"

namespace capext {

std::string ReportHtml(const SimulationResult& r, const ReportContext& context) {
  using namespace html;
  const std::vector<TenantSummary> summary = Summarize(r);
  const TenantSummary& total = summary.back();
  const std::string title =
      fmt::format("capacity-sim run: policy {} on {}", r.policy, context.workload_source);
  std::string out = PageStart(title);
  out += "<h1>" + EscapeHtml(title) + "</h1>";
  out += fmt::format(
      "<p>{} nodes ({} cpu cores, {} GPUs). {} pods submitted: {} ran, {} still pending at the "
      "end, {} rejected "
      "({} by quota, {} by nodes). {} evictions ({} by fairness). Simulated time: {}.</p>",
      r.nodes, FormatNumber(static_cast<double>(r.allocatable_cpu) / 1000.0),
      FormatNumber(static_cast<double>(r.allocatable_gpu) / static_cast<double>(r.gpu_scale)),
      total.submitted, total.run, total.pending, total.rejected, total.rejected_by_quota,
      total.rejected_by_nodes, r.evictions, r.fair_evictions,
      Duration(static_cast<double>(r.end_ms) / 1000.0));

  out += "<h2>Tenants</h2><table><tr><th class=\"l\">tenant</th><th>min cpu</th><th>max cpu</th>";
  if (!r.gpu_resource.empty()) out += "<th>min gpu</th><th>max gpu</th>";
  out +=
      "<th>submitted</th><th>run</th><th>pending</th><th>rejected (quota / nodes)</th>"
      "<th>evictions suffered / caused</th><th>wait p50</th><th>wait p95</th><th>wait p99</th>"
      "<th>below guarantee with pending</th><th>borrowed core-hours</th></tr>";
  const double gpu_scale = static_cast<double>(r.gpu_scale);
  for (std::size_t i = 0; i < summary.size(); ++i) {
    const TenantSummary& s = summary[i];
    const bool is_total = i + 1 == summary.size();
    out += "<tr><td class=\"l\">" + EscapeHtml(s.name) + "</td>";
    if (is_total) {
      for (int k = 0; k < (r.gpu_resource.empty() ? 2 : 4); ++k)
        out += "<td></td>";
    } else {
      const TenantPlanView& p = r.tenants[i];
      out += "<td>" + LimitText(p.min, "cpu", 1000.0) + "</td><td>" +
             LimitText(p.max, "cpu", 1000.0) + "</td>";
      if (!r.gpu_resource.empty()) {
        out += "<td>" + LimitText(p.min, r.gpu_resource, gpu_scale) + "</td><td>" +
               LimitText(p.max, r.gpu_resource, gpu_scale) + "</td>";
      }
    }
    out += fmt::format(
        "<td>{}</td><td>{}</td><td>{}</td><td>{} ({} / {})</td><td>{} / "
        "{}</td><td>{}</td><td>{}</td><td>{}</td>"
        "<td>{}</td><td>{}</td></tr>",
        s.submitted, s.run, s.pending, s.rejected, s.rejected_by_quota, s.rejected_by_nodes,
        s.evictions_suffered, s.evictions_caused, Duration(s.wait.p50_s), Duration(s.wait.p95_s),
        Duration(s.wait.p99_s), Duration(s.below_guarantee_with_pending_s),
        FormatNumber(s.borrowed_core_hours));
  }
  out +=
      "</table><p class=\"note\">min/max as this policy enforces them"
      " (\"-\": none). Every submitted pod is exactly one of run, pending or rejected.</p>";

  // A plan with parents: its levels, and no per-tenant chart for a pure grouping quota (no pod
  // of its own: its level is charted in the tree section).
  const PlanTreeView tree = BuildQuotaTree(r);
  std::vector<bool> grouping(r.tenants.size(), false);
  if (!tree.empty()) {
    out += QuotaTreeSection(r, tree);
    for (const auto& node : tree.nodes)
      grouping[node.tenant] = !node.children.empty() && summary[node.tenant].submitted == 0;
  }
  out += "<h2>CPU: used vs min vs max per tenant</h2><div class=\"charts\">";
  for (std::size_t t = 0; t < r.tenants.size(); ++t) {
    if (grouping[t]) continue;
    out += UsedMinMaxChart(r, t, "cpu", 640,
                           fmt::format("{}: cpu cores used vs min and max", r.tenants[t].name));
  }
  out += "</div>";
  if (!r.gpu_resource.empty()) {
    out += "<h2>GPUs: used vs min vs max per tenant</h2><div class=\"charts\">";
    for (std::size_t t = 0; t < r.tenants.size(); ++t) {
      if (grouping[t]) continue;
      out += UsedMinMaxChart(r, t, "gpu", 640,
                             fmt::format("{}: GPUs used vs min and max", r.tenants[t].name));
    }
    out += "</div>";
  }
  out += "<h2>Cluster and queue</h2><div class=\"charts\">";
  out += UtilisationChart(r, 640);
  out += PendingChart(r, 640);
  out += "</div><h2>Wait times</h2><div class=\"charts\">";
  std::vector<std::pair<std::string, std::vector<int64_t>>> waits;
  for (std::size_t t = 0; t < r.tenants.size(); ++t) {
    waits.emplace_back(r.tenants[t].name, r.metrics.counters()[t].waits_ms);
  }
  out += WaitCdfChart(waits, "Wait-time distribution per tenant (CDF)", 800);
  out += "</div>";
  out += NotesSection(context, r.notes);
  out += PageEnd();
  return out;
}

}  // namespace capext
