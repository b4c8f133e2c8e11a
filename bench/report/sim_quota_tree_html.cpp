#include "bench/report/sim_quota_tree_html.h"

#include <algorithm>

#include <fmt/format.h>

#include "bench/report/sim_html_parts.h"
#include "bench/report/svg_chart.h"

namespace capext {
namespace {

using html::LimitText;
using html::LimitValue;

const std::string& NameOf(const SimulationResult& r, const PlanTreeView& tree, std::size_t node) {
  return r.tenants[tree.nodes[node].tenant].name;
}

std::string Table(const SimulationResult& r, const PlanTreeView& tree) {
  const bool gpu = !r.gpu_resource.empty();
  const double gpu_scale = ReportScale(r, "gpu");
  std::string out =
      "<table><tr><th class=\"l\">quota (by level)</th><th class=\"l\">parent</th><th>level</th>"
      "<th>min cpu</th><th>max cpu</th><th>used cpu peak</th><th>used cpu mean</th>";
  if (gpu) out += "<th>min gpu</th><th>max gpu</th><th>used gpu peak</th><th>used gpu mean</th>";
  out += "<th>samples above min</th><th>samples above max</th></tr>";
  for (std::size_t i = 0; i < tree.nodes.size(); ++i) {
    const QuotaTreeNode& node = tree.nodes[i];
    const TenantPlanView& plan = r.tenants[node.tenant];
    const LevelUsage cpu = UsageOf(r, node, "cpu");
    std::string indent;
    for (int l = 0; l < node.level; ++l)
      indent += "&nbsp;&nbsp;&nbsp;&nbsp;";
    out += fmt::format(
        "<tr><td class=\"l\">{}{}{}</td><td class=\"l\">{}</td><td>{}</td><td>{}</td><td>{}</td>"
        "<td>{}</td><td>{}</td>",
        indent, node.level > 0 ? "&#8627; " : "", EscapeHtml(plan.name),
        node.parent ? EscapeHtml(NameOf(r, tree, *node.parent)) : "-", node.level,
        LimitText(plan.min, "cpu", 1000.0), LimitText(plan.max, "cpu", 1000.0),
        FormatNumber(cpu.peak), FormatNumber(cpu.mean));
    int64_t above_min = cpu.samples_above_min, above_max = cpu.samples_above_max;
    if (gpu) {
      const LevelUsage g = UsageOf(r, node, "gpu");
      out += fmt::format("<td>{}</td><td>{}</td><td>{}</td><td>{}</td>",
                         LimitText(plan.min, r.gpu_resource, gpu_scale),
                         LimitText(plan.max, r.gpu_resource, gpu_scale), FormatNumber(g.peak),
                         FormatNumber(g.mean));
      above_min = std::max(above_min, g.samples_above_min);
      above_max = std::max(above_max, g.samples_above_max);
    }
    out += fmt::format("<td>{}</td><td{}>{}</td></tr>", above_min,
                       above_max > 0 ? " class=\"bad\"" : "", above_max);
  }
  out +=
      "</table><p class=\"note\">used is the quota's whole subtree: its own namespace plus its "
      "children's used. Samples above min/max: timeline samples at which used exceeded the "
      "quota's min (borrowing) or its max, in cpu" +
      std::string(gpu ? " or GPUs" : "") +
      " (the larger count). A policy that enforces the hierarchy never exceeds a max.</p>";
  return out;
}

// Used over time at a parent's level and at each child's, against the parent's min and max.
std::string LevelChart(const SimulationResult& r, const PlanTreeView& tree, std::size_t index,
                       const std::string& which) {
  const QuotaTreeNode& node = tree.nodes[index];
  const TenantPlanView& plan = r.tenants[node.tenant];
  const bool gpu = which == "gpu";
  const std::string resource = gpu ? r.gpu_resource : "cpu";
  const double scale = ReportScale(r, which);
  const html::TimeUnit unit = html::TimeUnitFor(r.end_ms);
  const auto& timeline = r.metrics.timeline();
  LineChart c;
  c.title = fmt::format("{} (level {}) and its children: {} used vs {}'s min and max", plan.name,
                        node.level, gpu ? "GPUs" : "cpu cores", plan.name);
  c.x_label = fmt::format("time ({})", unit.name);
  c.y_label = gpu ? "GPUs" : "cpu cores";
  c.width = 640;
  c.height = 280;
  double top = 0;
  auto used = [&](const QuotaTreeNode& n, const std::string& label, std::size_t color,
                  double width) {
    ChartSeries s{label, ChartColor(color), "", width, true, {}};
    const std::vector<int64_t>& series = UsedSeries(n, which);
    for (std::size_t i = 0; i < timeline.size() && i < series.size(); ++i) {
      const double v = static_cast<double>(series[i]) / scale;
      top = std::max(top, v);
      s.points.emplace_back(static_cast<double>(timeline[i].t_ms) / unit.ms_per_unit, v);
    }
    c.series.push_back(std::move(s));
  };
  used(node, plan.name + " (subtree)", 0, 2.4);
  for (std::size_t k = 0; k < node.children.size(); ++k) {
    const QuotaTreeNode& child = tree.nodes[node.children[k]];
    used(child, r.tenants[child.tenant].name, k + 1, 1.4);
  }
  const double x_end = std::max(static_cast<double>(r.end_ms) / unit.ms_per_unit, 1e-9);
  auto limit = [&](std::optional<double> y, const std::string& label, const char* color,
                   const char* dash) {
    if (!y) return;
    top = std::max(top, *y);
    c.series.push_back(ChartSeries{label, color, dash, 1.6, false, {{0, *y}, {x_end, *y}}});
  };
  limit(LimitValue(plan.min, resource, scale), plan.name + " min", "#333333", "6 4");
  limit(LimitValue(plan.max, resource, scale), plan.name + " max", "#d62728", "2 3");
  c.x_min = 0;
  c.x_max = x_end;
  c.y_max = top > 0 ? top * 1.08 : 1.0;
  return RenderLineChart(c);
}

}  // namespace

std::string QuotaTreeSection(const SimulationResult& r, const PlanTreeView& tree) {
  std::string out =
      fmt::format("<h2>Quota tree: used vs min vs max per level</h2><p>{} quotas on {} levels.</p>",
                  tree.nodes.size(), tree.levels);
  out += Table(r, tree);
  for (const char* which : {"cpu", "gpu"}) {
    if (std::string(which) == "gpu" && r.gpu_resource.empty()) continue;
    out += "<div class=\"charts\">";
    for (std::size_t i = 0; i < tree.nodes.size(); ++i) {
      if (!tree.nodes[i].children.empty()) out += LevelChart(r, tree, i, which);
    }
    out += "</div>";
  }
  return out;
}

}  // namespace capext
