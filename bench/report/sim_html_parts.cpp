#include "bench/report/sim_html_parts.h"

#include <algorithm>
#include <optional>

#include <fmt/format.h>

namespace capext::html {

std::string PageStart(const std::string& title) {
  return "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>" +
         EscapeHtml(title) +
         "</title>\n<style>"
         "body{font-family:sans-serif;margin:24px;color:#222;max-width:1320px}"
         "h1{font-size:22px}h2{font-size:18px;margin-top:28px;border-bottom:1px solid "
         "#ddd;padding-bottom:4px}"
         "table{border-collapse:collapse;font-size:13px;margin:8px 0}"
         "th,td{border:1px solid #ccc;padding:3px 8px;text-align:right}"
         "th{background:#f3f3f3}td.l,th.l{text-align:left}"
         ".charts{display:flex;flex-wrap:wrap;gap:12px}.charts svg{border:1px solid #eee}"
         ".note{color:#555;font-size:13px}.bad{color:#b00020;font-weight:bold}.good{color:#1b7a1b}"
         "</style></head><body>\n";
}

std::string PageEnd() {
  return "</body></html>\n";
}

TimeUnit TimeUnitFor(int64_t span_ms) {
  if (span_ms <= 3 * 3'600'000LL) return {60'000.0, "minutes"};
  if (span_ms <= 4 * 86'400'000LL) return {3'600'000.0, "hours"};
  return {86'400'000.0, "days"};
}

std::string Duration(double s) {
  if (s < 60) return FormatNumber(s) + " s";
  if (s < 3600) return FormatNumber(s / 60) + " min";
  if (s < 86400) return FormatNumber(s / 3600) + " h";
  return FormatNumber(s / 86400) + " d";
}

std::string LimitText(const std::optional<ResourceList>& list, const std::string& resource,
                      double scale) {
  if (!list || resource.empty()) return "-";
  auto v = list->Find(resource);
  return v ? FormatNumber(static_cast<double>(*v) / scale) : "-";
}

DurationUnit DurationUnitFor(double max_seconds) {
  if (max_seconds >= 2 * 86400.0) return {86400.0, "days"};
  if (max_seconds >= 2 * 3600.0) return {3600.0, "hours"};
  if (max_seconds >= 2 * 60.0) return {60.0, "minutes"};
  return {1.0, "seconds"};
}

std::optional<double> LimitValue(const std::optional<ResourceList>& list,
                                 const std::string& resource, double scale) {
  if (!list || resource.empty()) return std::nullopt;
  auto v = list->Find(resource);
  if (!v) return std::nullopt;
  return static_cast<double>(*v) / scale;
}

namespace {

// The highest of used, min and max of tenant t in chart units.
double ChartPeak(const SimulationResult& r, std::size_t t, bool gpu) {
  const std::string resource = gpu ? r.gpu_resource : "cpu";
  const double scale = gpu ? static_cast<double>(r.gpu_scale) : 1000.0;
  double top = 0;
  for (const auto& p : r.metrics.timeline()) {
    top = std::max(top, static_cast<double>(gpu ? p.tenants[t].gpu : p.tenants[t].cpu) / scale);
  }
  for (const auto* list : {&r.tenants[t].min, &r.tenants[t].max}) {
    if (auto v = LimitValue(*list, resource, scale)) top = std::max(top, *v);
  }
  return top;
}

}  // namespace

ChartAxes SharedAxes(const std::vector<SimulationResult>& results, std::size_t t,
                     const std::string& which) {
  ChartAxes axes;
  for (const auto& r : results) {
    axes.end_ms = std::max(axes.end_ms, r.end_ms);
    if (t < r.tenants.size()) axes.y_top = std::max(axes.y_top, ChartPeak(r, t, which == "gpu"));
  }
  axes.y_top *= 1.08;
  return axes;
}

std::string UsedMinMaxChart(const SimulationResult& r, std::size_t t, const std::string& which,
                            int width, const std::string& title, const ChartAxes& axes) {
  const bool gpu = which == "gpu";
  const std::string resource = gpu ? r.gpu_resource : "cpu";
  const double scale = gpu ? static_cast<double>(r.gpu_scale) : 1000.0;
  const int64_t end_ms = axes.end_ms > 0 ? axes.end_ms : r.end_ms;
  const TimeUnit unit = TimeUnitFor(end_ms);
  LineChart c;
  c.title = title;
  c.x_label = fmt::format("time ({})", unit.name);
  c.y_label = gpu ? "GPUs" : "cpu cores";
  c.width = width;
  c.height = 250;
  ChartSeries used{"used", ChartColor(t), "", 1.8, true, {}};
  double peak = 0;
  for (const auto& p : r.metrics.timeline()) {
    const double v = static_cast<double>(gpu ? p.tenants[t].gpu : p.tenants[t].cpu) / scale;
    peak = std::max(peak, v);
    used.points.emplace_back(static_cast<double>(p.t_ms) / unit.ms_per_unit, v);
  }
  const double x_end = static_cast<double>(end_ms) / unit.ms_per_unit;
  c.series.push_back(std::move(used));
  const TenantPlanView& plan = r.tenants[t];
  double top = peak;
  const std::string suffix = plan.enforced ? "" : " (plan, not enforced)";
  const std::optional<double> min = LimitValue(plan.min, resource, scale);
  const std::optional<double> max = LimitValue(plan.max, resource, scale);
  auto limit = [&](double y, const std::string& label, const char* color, const char* dash) {
    top = std::max(top, y);
    c.series.push_back(ChartSeries{label, color, dash, 1.6, false, {{0, y}, {x_end, y}}});
  };
  if (min && max && *min == *max) {
    limit(*min, "min = max" + suffix, "#d62728", "6 4");  // one line, not two drawn over each other
  } else {
    if (min) limit(*min, "min" + suffix, "#333333", "6 4");
    if (max) limit(*max, "max" + suffix, "#d62728", "2 3");
  }
  c.x_min = 0;
  c.x_max = std::max(x_end, 1e-9);
  c.y_max = axes.y_top > 0 ? axes.y_top : top > 0 ? top * 1.08 : 1.0;
  return RenderLineChart(c);
}

std::string PendingChart(const SimulationResult& r, int width) {
  const TimeUnit unit = TimeUnitFor(r.end_ms);
  LineChart c;
  c.title = "Pending pods per tenant";
  c.x_label = fmt::format("time ({})", unit.name);
  c.y_label = "pending pods";
  c.width = width;
  for (std::size_t t = 0; t < r.tenants.size(); ++t) {
    ChartSeries s{r.tenants[t].name, ChartColor(t), ChartDash(t), 1.8, true, {}};
    for (const auto& p : r.metrics.timeline()) {
      s.points.emplace_back(static_cast<double>(p.t_ms) / unit.ms_per_unit,
                            static_cast<double>(p.tenants[t].pending));
    }
    c.series.push_back(std::move(s));
  }
  c.x_min = 0;
  return RenderLineChart(c);
}

std::string UtilisationChart(const SimulationResult& r, int width) {
  const TimeUnit unit = TimeUnitFor(r.end_ms);
  LineChart c;
  c.title = fmt::format("Cluster utilisation (requested / allocatable, {} nodes)", r.nodes);
  c.x_label = fmt::format("time ({})", unit.name);
  c.y_label = "utilisation";
  c.y_percent = true;
  c.width = width;
  auto add = [&](const char* label, int64_t TimelinePoint::*field, int64_t total,
                 std::size_t color) {
    if (total <= 0) return;
    ChartSeries s{label, ChartColor(color), "", 1.8, true, {}};
    for (const auto& p : r.metrics.timeline()) {
      s.points.emplace_back(static_cast<double>(p.t_ms) / unit.ms_per_unit,
                            static_cast<double>(p.*field) / static_cast<double>(total));
    }
    c.series.push_back(std::move(s));
  };
  add("cpu", &TimelinePoint::cluster_cpu, r.allocatable_cpu, 0);
  add("memory", &TimelinePoint::cluster_memory, r.allocatable_memory, 1);
  if (!r.gpu_resource.empty()) add("gpu", &TimelinePoint::cluster_gpu, r.allocatable_gpu, 2);
  c.x_min = 0;
  return RenderLineChart(c);
}

std::string WaitCdfChart(const std::vector<std::pair<std::string, std::vector<int64_t>>>& series,
                         const std::string& title, int width) {
  LineChart c;
  c.title = title;
  c.x_label = "wait until first start (seconds, log scale; waits under 1 s drawn at 1 s)";
  c.y_label = "fraction of started pods";
  c.y_percent = true;
  c.log_x = true;
  c.width = width;
  c.y_max = 1.0;
  double x_hi = 10;
  for (std::size_t i = 0; i < series.size(); ++i) {
    ChartSeries s{series[i].first, ChartColor(i), ChartDash(i), 2.0, false, {}};
    for (const auto& [x, y] : WaitCdf(series[i].second)) {
      s.points.emplace_back(std::max(1.0, x), y);
      x_hi = std::max(x_hi, x);
    }
    c.series.push_back(std::move(s));
  }
  c.x_min = 1;
  c.x_max = x_hi;
  return RenderLineChart(c);
}

std::string NotesSection(const ReportContext& context, const std::vector<std::string>& notes) {
  std::string out = "<h2>How this was run</h2><ul class=\"note\">";
  out += "<li>workload: " + EscapeHtml(context.workload_source) +
         fmt::format(" ({} pods)</li>", context.workload_pods);
  for (const auto& [k, v] : context.options)
    out += "<li>" + EscapeHtml(k) + " = " + EscapeHtml(v) + "</li>";
  for (const auto& n : notes)
    out += "<li>" + EscapeHtml(n) + "</li>";
  out += "</ul>";
  return out;
}

}  // namespace capext::html
