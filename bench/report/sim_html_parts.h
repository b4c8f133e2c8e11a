// Building blocks shared by report.html and compare.html (sim_report_html.cpp,
// sim_compare_html.cpp): the page frame, time axes, and the standard charts of one result.
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <vector>

#include "bench/report/sim_report_json.h"
#include "bench/report/sim_summary.h"
#include "bench/report/svg_chart.h"
#include "bench/sim/simulation.h"

namespace capext::html {

// <!DOCTYPE html>...<body> with the inline stylesheet, and the closing tags.
std::string PageStart(const std::string& title);
std::string PageEnd();

// The unit a time axis uses for a span: minutes up to 3 h, hours up to 4 days, else days.
struct TimeUnit {
  double ms_per_unit;
  const char* name;  // "minutes", "hours", "days"
};
TimeUnit TimeUnitFor(int64_t span_ms);

// "12 s", "3.4 min", "2.1 h", "1.5 d".
std::string Duration(double seconds);

// Used vs min vs max of tenant `t` over time, for "cpu" (cores) or "gpu" (GPUs). Charts meant
// to be read side by side (one per policy) pass the same `axes` so they share both scales.
struct ChartAxes {
  int64_t end_ms = 0;  // x from 0 to here (0: the result's own end)
  double y_top = 0;    // in cores / GPUs (0: from the data)
};
std::string UsedMinMaxChart(const SimulationResult& r, std::size_t t, const std::string& which,
                            int width, const std::string& title, const ChartAxes& axes = {});
// The axes that hold UsedMinMaxChart(r, t, which) for every result.
ChartAxes SharedAxes(const std::vector<SimulationResult>& results, std::size_t t,
                     const std::string& which);

// A unit for durations up to `max_seconds` on an axis: seconds, minutes, hours or days.
struct DurationUnit {
  double seconds_per_unit;
  const char* name;
};
DurationUnit DurationUnitFor(double max_seconds);
std::string PendingChart(const SimulationResult& r, int width);
std::string UtilisationChart(const SimulationResult& r, int width);
// Wait CDFs: one series per (label, sorted waits).
std::string WaitCdfChart(const std::vector<std::pair<std::string, std::vector<int64_t>>>& series,
                         const std::string& title, int width);

// Plan min/max of a tenant for one resource in chart units (divided by `scale`), if any.
std::optional<double> LimitValue(const std::optional<ResourceList>& list,
                                 const std::string& resource, double scale);

// Plan min/max of a tenant for one resource as text ("300", "-" when absent).
std::string LimitText(const std::optional<ResourceList>& list, const std::string& resource,
                      double scale);

// The notes and the options as an HTML list.
std::string NotesSection(const ReportContext& context, const std::vector<std::string>& notes);

}  // namespace capext::html
