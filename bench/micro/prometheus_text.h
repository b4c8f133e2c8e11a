// Reading the Prometheus text format that kube-apiserver, etcd, kube-scheduler and the extenders
// serve on /metrics, for bench_throughput_bench: every sample as (name, labels, value), the
// difference of two scrapes of the same process (counters and histogram buckets grow, so the
// difference is what happened between the scrapes), sums over a label, and quantiles of a
// histogram's difference, interpolated inside buckets as Prometheus's histogram_quantile() does.
// Comment lines (# HELP, # TYPE) and timestamps are ignored; a line that does not parse is
// skipped, never guessed at.
// Thread-safety: plain values.
#pragma once

#include <cmath>
#include <cstdlib>
#include <functional>
#include <limits>
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace capext::bench {

using MetricLabels = std::map<std::string, std::string>;

// One scrape: (metric name, labels) -> value.
class MetricSamples {
 public:
  static MetricSamples Parse(const std::string& text) {
    MetricSamples out;
    std::istringstream lines(text);
    std::string line;
    while (std::getline(lines, line)) {
      if (line.empty() || line[0] == '#') continue;
      std::string name;
      MetricLabels labels;
      std::size_t at = 0;
      while (at < line.size() && line[at] != '{' && line[at] != ' ')
        ++at;
      name = line.substr(0, at);
      if (name.empty()) continue;
      if (at < line.size() && line[at] == '{') {
        if (!ParseLabels(line, &at, &labels)) continue;
      }
      while (at < line.size() && line[at] == ' ')
        ++at;
      if (at >= line.size()) continue;
      char* end = nullptr;
      const double value = std::strtod(line.c_str() + at, &end);
      if (end == line.c_str() + at) continue;
      out.samples_[{name, labels}] = value;
    }
    return out;
  }

  // this - earlier, sample by sample (a sample absent earlier counts from 0).
  MetricSamples Minus(const MetricSamples& earlier) const {
    MetricSamples out;
    for (const auto& [key, value] : samples_) {
      auto it = earlier.samples_.find(key);
      out.samples_[key] = value - (it == earlier.samples_.end() ? 0 : it->second);
    }
    return out;
  }

  bool empty() const { return samples_.empty(); }

  // The sum of every sample of `name` whose labels pass `keep` (all when empty).
  double Sum(const std::string& name,
             const std::function<bool(const MetricLabels&)>& keep = nullptr) const {
    double total = 0;
    for (const auto& [key, value] : samples_) {
      if (key.first == name && (!keep || keep(key.second))) total += value;
    }
    return total;
  }

  // The samples of `name` passing `keep`, summed by the string `group` makes of their labels.
  std::map<std::string, double> SumBy(
      const std::string& name, const std::function<std::string(const MetricLabels&)>& group,
      const std::function<bool(const MetricLabels&)>& keep = nullptr) const {
    std::map<std::string, double> out;
    for (const auto& [key, value] : samples_) {
      if (key.first == name && (!keep || keep(key.second))) out[group(key.second)] += value;
    }
    return out;
  }

  // The cumulative buckets (upper bound -> count) of histogram `name` over the samples passing
  // `keep`, summed across them. +Inf is std::numeric_limits<double>::infinity().
  std::map<double, double> Buckets(const std::string& name,
                                   const std::function<bool(const MetricLabels&)>& keep) const {
    std::map<double, double> out;
    for (const auto& [key, value] : samples_) {
      if (key.first != name + "_bucket" || !keep(key.second)) continue;
      auto le = key.second.find("le");
      if (le == key.second.end()) continue;
      const double bound = le->second == "+Inf" ? std::numeric_limits<double>::infinity()
                                                : std::strtod(le->second.c_str(), nullptr);
      out[bound] += value;
    }
    return out;
  }

 private:
  // Reads {a="x",b="y"} from line[*at] ('{'); escapes \\ \" \n in values.
  static bool ParseLabels(const std::string& line, std::size_t* at, MetricLabels* labels) {
    std::size_t i = *at + 1;
    while (i < line.size() && line[i] != '}') {
      const std::size_t eq = line.find('=', i);
      if (eq == std::string::npos || eq + 1 >= line.size() || line[eq + 1] != '"') return false;
      std::string key = line.substr(i, eq - i);
      std::string value;
      std::size_t j = eq + 2;
      for (; j < line.size() && line[j] != '"'; ++j) {
        if (line[j] == '\\' && j + 1 < line.size()) {
          ++j;
          value += line[j] == 'n' ? '\n' : line[j];
        } else {
          value += line[j];
        }
      }
      if (j >= line.size()) return false;
      (*labels)[key] = value;
      i = j + 1;
      if (i < line.size() && line[i] == ',') ++i;
    }
    if (i >= line.size()) return false;
    *at = i + 1;
    return true;
  }

  std::map<std::pair<std::string, MetricLabels>, double> samples_;
};

// The q-quantile (0 < q < 1) of cumulative `buckets`, linear inside the bucket it falls in (the
// first bucket from 0); the largest finite bound when it falls in +Inf; NaN with no observation.
inline double HistogramQuantile(const std::map<double, double>& buckets, double q) {
  if (buckets.empty()) return std::nan("");
  const double total = buckets.rbegin()->second;
  if (total <= 0) return std::nan("");
  const double rank = q * total;
  double lower_bound = 0, lower_count = 0;
  for (const auto& [bound, count] : buckets) {
    if (count >= rank) {
      if (std::isinf(bound)) return lower_bound;
      if (count == lower_count) return bound;
      return lower_bound + (bound - lower_bound) * (rank - lower_count) / (count - lower_count);
    }
    lower_bound = bound;
    lower_count = count;
  }
  return lower_bound;
}

}  // namespace capext::bench
