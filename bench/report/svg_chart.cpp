#include "bench/report/svg_chart.h"

#include <algorithm>
#include <cmath>
#include <functional>

#include <fmt/format.h>

namespace capext {
namespace {

constexpr double kLeft = 70, kRight = 18, kTop = 36, kAxisBottom = 46;
constexpr double kLegendRow = 18;
constexpr double kCharWidth = 6.6;  // approximate width of one 11px sans-serif character

// NiceTicks(0, hi) extended by one step when the data goes above the last tick, so the top of
// the axis is labelled.
std::vector<double> YTicks(double hi, int target);

std::vector<double> NiceTicks(double lo, double hi, int target) {
  std::vector<double> ticks;
  if (!(hi > lo)) hi = lo + 1;
  const double raw = (hi - lo) / std::max(1, target);
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  double step = mag;
  for (double m : {1.0, 2.0, 2.5, 5.0, 10.0}) {
    step = m * mag;
    if (step >= raw) break;
  }
  for (double v = std::ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) {
    ticks.push_back(std::abs(v) < step * 1e-9 ? 0.0 : v);
  }
  return ticks;
}

std::vector<double> YTicks(double hi, int target) {
  std::vector<double> ticks = NiceTicks(0, hi, target);
  if (ticks.size() >= 2 && ticks.back() < hi * (1 - 1e-9))
    ticks.push_back(ticks.back() + (ticks[1] - ticks[0]));
  return ticks;
}

struct Legend {
  std::vector<std::pair<std::string, std::string>> items;  // label, svg swatch
  // Rows needed for `width` pixels.
  int Rows(double width) const {
    int rows = items.empty() ? 0 : 1;
    double x = 0;
    for (const auto& [label, swatch] : items) {
      const double w = 30 + kCharWidth * static_cast<double>(label.size()) + 14;
      if (x > 0 && x + w > width) {
        ++rows;
        x = 0;
      }
      x += w;
    }
    return rows;
  }
  std::string Render(double left, double top, double width) const {
    std::string out;
    double x = 0, y = 0;
    for (const auto& [label, swatch] : items) {
      const double w = 30 + kCharWidth * static_cast<double>(label.size()) + 14;
      if (x > 0 && x + w > width) {
        x = 0;
        y += kLegendRow;
      }
      out += fmt::format(
          "<g transform=\"translate({:.1f},{:.1f})\">{}<text x=\"28\" y=\"4\" "
          "font-size=\"11\">{}</text></g>",
          left + x, top + y, swatch, EscapeHtml(label));
      x += w;
    }
    return out;
  }
};

std::string LineSwatch(const ChartSeries& s) {
  return fmt::format(
      "<line x1=\"0\" y1=\"0\" x2=\"22\" y2=\"0\" stroke=\"{}\" stroke-width=\"{:.1f}\"{}/>",
      s.color, std::max(2.0, s.width),
      s.dash.empty() ? "" : fmt::format(" stroke-dasharray=\"{}\"", s.dash));
}

std::string Frame(int width, int height, const std::string& title) {
  // Over the plot when it fits, else from the left edge, smaller if need be (narrow charts).
  constexpr double kTitleCharWidth = 8.2;  // approximate, 14px bold sans-serif
  const double title_width = kTitleCharWidth * static_cast<double>(title.size());
  const double x = kLeft + title_width <= width - 8 ? kLeft : 10;
  const int font = x + title_width <= width - 8 ? 14 : 12;
  return fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} "
      "{1}\" "
      "font-family=\"sans-serif\" role=\"img\" aria-label=\"{2}\">"
      "<rect width=\"{0}\" height=\"{1}\" fill=\"#ffffff\"/>"
      "<text x=\"{3}\" y=\"20\" font-size=\"{4}\" font-weight=\"bold\">{2}</text>",
      width, height, EscapeHtml(title), x, font);
}

std::string YAxis(double top, double bottom, double right, const std::vector<double>& ticks,
                  const std::function<double(double)>& to_y, bool percent,
                  const std::string& label) {
  std::string out;
  for (double t : ticks) {
    const double y = to_y(t);
    out += fmt::format(
        "<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#e3e3e3\"/>", kLeft,
        y, right, y);
    out += fmt::format(
        "<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"11\" text-anchor=\"end\">{}</text>", kLeft - 6,
        y + 4, percent ? FormatNumber(t * 100) + "%" : FormatNumber(t));
  }
  out += fmt::format(
      "<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{0:.1f}\" y2=\"{2:.1f}\" stroke=\"#333\"/>", kLeft,
      top, bottom);
  out += fmt::format(
      "<text transform=\"translate(16,{:.1f}) rotate(-90)\" font-size=\"12\" "
      "text-anchor=\"middle\">{}</text>",
      (top + bottom) / 2, EscapeHtml(label));
  return out;
}

}  // namespace

const std::string& ChartColor(std::size_t i) {
  static const std::vector<std::string> kPalette = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728",
                                                    "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
                                                    "#bcbd22", "#17becf"};
  return kPalette[i % kPalette.size()];
}

const std::string& ChartDash(std::size_t i) {
  static const std::vector<std::string> kDashes = {"", "7 4", "2 3", "9 3 2 3", "4 2", "12 3"};
  return kDashes[i % kDashes.size()];
}

std::string EscapeHtml(std::string_view text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string FormatNumber(double v) {
  const double a = std::abs(v);
  std::string s;
  if (a >= 1e6) {
    s = fmt::format("{:.2f}", v / 1e6);
  } else if (a >= 1e4) {
    s = fmt::format("{:.1f}", v / 1e3);
  } else if (a >= 100) {
    s = fmt::format("{:.0f}", v);
  } else {
    s = fmt::format("{:.2f}", v);
  }
  if (s.find('.') != std::string::npos) {
    while (s.back() == '0')
      s.pop_back();
    if (s.back() == '.') s.pop_back();
  }
  if (s == "-0") s = "0";
  if (a >= 1e6) return s + "M";
  if (a >= 1e4) return s + "k";
  return s;
}

std::string RenderLineChart(const LineChart& c) {
  Legend legend;
  for (const auto& s : c.series)
    legend.items.emplace_back(s.label, LineSwatch(s));
  const double plot_right = c.width - kRight;
  const double plot_width = plot_right - kLeft;
  const int rows = legend.Rows(plot_width);
  const int height = c.height + static_cast<int>(rows * kLegendRow);
  const double bottom = c.height - kAxisBottom;

  double x_lo = INFINITY, x_hi = -INFINITY, y_hi = 0;
  for (const auto& s : c.series) {
    for (const auto& [x, y] : s.points) {
      if (!c.log_x || x > 0) {
        x_lo = std::min(x_lo, x);
        x_hi = std::max(x_hi, x);
      }
      y_hi = std::max(y_hi, y);
    }
  }
  if (c.x_min) x_lo = *c.x_min;
  if (c.x_max) x_hi = *c.x_max;
  if (!std::isfinite(x_lo)) x_lo = c.log_x ? 1 : 0;
  if (!std::isfinite(x_hi) || x_hi <= x_lo) x_hi = c.log_x ? x_lo * 10 : x_lo + 1;
  if (c.y_max) y_hi = *c.y_max;
  if (y_hi <= 0) y_hi = c.y_percent ? 1 : 1;

  std::vector<double> x_ticks;
  std::function<double(double)> to_x;
  if (c.log_x) {
    const double lo = std::log10(x_lo), hi = std::log10(x_hi);
    for (double e = std::floor(lo); e <= std::ceil(hi); e += 1) {
      const double v = std::pow(10.0, e);
      if (v >= x_lo * 0.999 && v <= x_hi * 1.001) x_ticks.push_back(v);
    }
    to_x = [=](double x) {
      const double lx = std::log10(std::max(x, x_lo));
      return kLeft + (lx - lo) / std::max(1e-9, hi - lo) * plot_width;
    };
  } else {
    x_ticks = NiceTicks(x_lo, x_hi, 6);
    to_x = [=](double x) { return kLeft + (x - x_lo) / (x_hi - x_lo) * plot_width; };
  }
  std::vector<double> y_ticks = YTicks(y_hi, 5);
  const double y_top = std::max(y_hi, y_ticks.empty() ? y_hi : y_ticks.back());
  auto to_y = [=](double y) { return bottom - y / y_top * (bottom - kTop); };

  std::string out = Frame(c.width, height, c.title);
  out += YAxis(kTop, bottom, plot_right, y_ticks, to_y, c.y_percent, c.y_label);
  for (double t : x_ticks) {
    const double x = to_x(t);
    out += fmt::format(
        "<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{0:.1f}\" y2=\"{2:.1f}\" stroke=\"#333\"/>", x,
        bottom, bottom + 4);
    out += fmt::format(
        "<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"11\" text-anchor=\"middle\">{}</text>", x,
        bottom + 16, FormatNumber(t));
  }
  out +=
      fmt::format("<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#333\"/>",
                  kLeft, bottom, plot_right, bottom);
  out += fmt::format(
      "<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"12\" text-anchor=\"middle\">{}</text>",
      kLeft + plot_width / 2, bottom + 34, EscapeHtml(c.x_label));
  for (const auto& s : c.series) {
    if (s.points.empty()) continue;
    std::string d;
    double last_y = 0;
    for (std::size_t i = 0; i < s.points.size(); ++i) {
      const double x = to_x(std::clamp(s.points[i].first, x_lo, x_hi));
      const double y = to_y(std::min(s.points[i].second, y_top));
      if (i == 0) {
        d += fmt::format("M{:.1f} {:.1f}", x, y);
      } else if (s.step) {
        d += fmt::format("H{:.1f}V{:.1f}", x, y);
      } else {
        d += fmt::format("L{:.1f} {:.1f}", x, y);
      }
      last_y = y;
    }
    (void)last_y;
    if (s.points.size() == 1) {
      // One point has no line to draw: a dot.
      out += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3.5\" fill=\"{}\"/>",
                         to_x(std::clamp(s.points[0].first, x_lo, x_hi)),
                         to_y(std::min(s.points[0].second, y_top)), s.color);
      continue;
    }
    out += fmt::format("<path d=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"{:.1f}\"{}/>", d,
                       s.color, s.width,
                       s.dash.empty() ? "" : fmt::format(" stroke-dasharray=\"{}\"", s.dash));
  }
  out += legend.Render(kLeft, c.height - 4, plot_width);
  out += "</svg>";
  return out;
}

std::string RenderBarChart(const BarChart& c) {
  Legend legend;
  for (std::size_t s = 0; s < c.series_labels.size(); ++s) {
    legend.items.emplace_back(
        c.series_labels[s],
        fmt::format("<rect x=\"0\" y=\"-6\" width=\"22\" height=\"12\" fill=\"{}\"/>",
                    ChartColor(s)));
  }
  const double plot_right = c.width - kRight;
  const double plot_width = plot_right - kLeft;
  const int rows = legend.Rows(plot_width);
  const int height = c.height + static_cast<int>(rows * kLegendRow);
  const double bottom = c.height - kAxisBottom;
  double y_hi = 0;
  for (const auto& series : c.values) {
    for (double v : series)
      y_hi = std::max(y_hi, v);
  }
  if (y_hi <= 0) y_hi = 1;
  std::vector<double> y_ticks = YTicks(y_hi, 5);
  const double y_top = std::max(y_hi, y_ticks.back());
  auto to_y = [=](double y) { return bottom - y / y_top * (bottom - kTop); };
  std::string out = Frame(c.width, height, c.title);
  out += YAxis(kTop, bottom, plot_right, y_ticks, to_y, false, c.y_label);
  out +=
      fmt::format("<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#333\"/>",
                  kLeft, bottom, plot_right, bottom);
  const std::size_t groups = c.categories.size();
  const std::size_t bars = std::max<std::size_t>(1, c.series_labels.size());
  const double group_width = plot_width / static_cast<double>(std::max<std::size_t>(1, groups));
  const double bar_width = group_width * 0.8 / static_cast<double>(bars);
  for (std::size_t g = 0; g < groups; ++g) {
    const double gx = kLeft + group_width * static_cast<double>(g) + group_width * 0.1;
    for (std::size_t s = 0; s < c.values.size() && s < bars; ++s) {
      const double v = g < c.values[s].size() ? c.values[s][g] : 0;
      const double y = to_y(v);
      const double bx = gx + bar_width * static_cast<double>(s);
      out += fmt::format(
          "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" "
          "fill=\"{}\"><title>{} / {}: {}</title></rect>",
          bx, y, std::max(1.0, bar_width - 1), bottom - y, ChartColor(s),
          EscapeHtml(c.categories[g]), EscapeHtml(c.series_labels[s]), FormatNumber(v));
      // The value over the bar when it fits (so a zero reads as 0, not as a missing bar).
      const std::string text = FormatNumber(v);
      if (5.5 * static_cast<double>(text.size()) <= bar_width + 2) {
        out += fmt::format(
            "<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"9\" text-anchor=\"middle\" "
            "fill=\"#444\">{}</text>",
            bx + bar_width / 2 - 0.5, y - 3, text);
      }
    }
    out += fmt::format(
        "<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"11\" text-anchor=\"middle\">{}</text>",
        gx + group_width * 0.4, bottom + 16, EscapeHtml(c.categories[g]));
  }
  out += legend.Render(kLeft, c.height - 4, plot_width);
  out += "</svg>";
  return out;
}

}  // namespace capext
