// Self-contained SVG charts for the HTML reports: line charts (linear or log x, optional step
// drawing) and grouped bar charts, each with a title, labelled axes with round tick values (the
// top of the y axis is always a labelled tick), a light grid and a legend. A series of a single
// point is drawn as a dot. Output is an <svg> element with inline attributes only (no scripts,
// no external fonts or styles), deterministic for the same input.
// Thread-safety: pure functions.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace capext {

// Distinguishable colours (the "tab10" palette) for series i.
const std::string& ChartColor(std::size_t i);
// Dash patterns for series i of a chart whose series may coincide (policies with the same
// result): solid, dashed, dotted, dash-dot, ... so a curve drawn over an identical one still
// lets it show through.
const std::string& ChartDash(std::size_t i);

struct ChartSeries {
  std::string label;
  std::string color;
  std::string dash;  // SVG stroke-dasharray: "" solid, "6 4" dashed, "2 3" dotted
  double width = 1.8;
  bool step = false;  // a value holds until the next point (usage over time)
  std::vector<std::pair<double, double>> points;
};

struct LineChart {
  std::string title;
  std::string x_label;
  std::string y_label;
  std::vector<ChartSeries> series;
  int width = 620;
  int height = 300;
  bool log_x = false;      // x must be > 0; smaller values are drawn at the axis minimum
  bool y_percent = false;  // y values are fractions, ticks read "25%"
  std::optional<double> x_min, x_max, y_max;
};

struct BarChart {
  std::string title;
  std::string y_label;
  std::vector<std::string> categories;      // groups along x
  std::vector<std::string> series_labels;   // one bar per series in each group
  std::vector<std::vector<double>> values;  // [series][category]
  int width = 620;
  int height = 300;
};

std::string RenderLineChart(const LineChart& chart);
std::string RenderBarChart(const BarChart& chart);

std::string EscapeHtml(std::string_view text);
// A compact number for ticks and tables: "1.5M", "12k", "0.25", "3".
std::string FormatNumber(double v);

}  // namespace capext
