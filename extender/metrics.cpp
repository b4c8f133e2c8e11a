#include "extender/metrics.h"

#include <vector>

#include <fmt/format.h>

namespace capext {
namespace {

// A label value as the Prometheus text format requires: backslash, quote and newline escaped.
// The upper bounds of a named histogram's buckets.
std::vector<double> Bounds(Metrics::Scale scale) {
  if (scale == Metrics::Scale::kLatency)
    return {Metrics::kBuckets.begin(), Metrics::kBuckets.end()};
  return {Metrics::kDurationBuckets.begin(), Metrics::kDurationBuckets.end()};
}

std::string EscapeLabel(const std::string& v) {
  std::string out;
  for (char c : v) {
    if (c == '\\' || c == '"') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace

void Metrics::ObserveRequest(const std::string& verb, int status, double seconds) {
  std::lock_guard lock(mutex_);
  ++requests_[{verb, status}];
  Histogram& h = latency_[verb];
  for (std::size_t i = 0; i < kBuckets.size(); ++i) {
    if (seconds <= kBuckets[i]) ++h.buckets[i];
  }
  ++h.count;
  h.sum += seconds;
}

void Metrics::CountDecision(const std::string& verb, const std::string& outcome) {
  std::lock_guard lock(mutex_);
  ++decisions_[{verb, outcome}];
}

void Metrics::Count(const std::string& name, const std::string& label_name,
                    const std::string& label_value, double amount) {
  std::lock_guard lock(mutex_);
  std::string labels =
      label_name.empty() ? "" : fmt::format("{}=\"{}\"", label_name, EscapeLabel(label_value));
  counters_[name][labels] += amount;
}

void Metrics::SetGauge(const std::string& name, double value) {
  std::lock_guard lock(mutex_);
  gauges_[name] = value;
}

void Metrics::AddGauge(const std::string& name, double delta) {
  std::lock_guard lock(mutex_);
  gauges_[name] += delta;
}

void Metrics::DeclareHistogram(const std::string& name, const std::string& help, Scale scale) {
  std::lock_guard lock(mutex_);
  DurationHistogram& h = durations_[name];
  h.help = help;
  h.scale = scale;
}

void Metrics::Observe(const std::string& name, double seconds) {
  std::lock_guard lock(mutex_);
  DurationHistogram& h = durations_[name];
  const std::vector<double> bounds = Bounds(h.scale);
  for (std::size_t i = 0; i < bounds.size(); ++i) {
    if (seconds <= bounds[i]) ++h.buckets[i];
  }
  ++h.count;
  h.sum += seconds;
}

std::string Metrics::Render() const {
  std::lock_guard lock(mutex_);
  std::string out;
  out += "# HELP capacity_extender_requests_total HTTP requests by verb and status code.\n";
  out += "# TYPE capacity_extender_requests_total counter\n";
  for (const auto& [key, n] : requests_) {
    out += fmt::format("capacity_extender_requests_total{{verb=\"{}\",code=\"{}\"}} {}\n",
                       key.first, key.second, n);
  }
  out += "# HELP capacity_extender_request_duration_seconds Time to answer a request, by verb.\n";
  out += "# TYPE capacity_extender_request_duration_seconds histogram\n";
  for (const auto& [verb, h] : latency_) {
    for (std::size_t i = 0; i < kBuckets.size(); ++i) {
      out += fmt::format(
          "capacity_extender_request_duration_seconds_bucket{{verb=\"{}\",le=\"{}\"}} {}\n", verb,
          kBuckets[i], h.buckets[i]);
    }
    out += fmt::format(
        "capacity_extender_request_duration_seconds_bucket{{verb=\"{}\",le=\"+Inf\"}} {}\n", verb,
        h.count);
    out += fmt::format("capacity_extender_request_duration_seconds_sum{{verb=\"{}\"}} {}\n", verb,
                       h.sum);
    out += fmt::format("capacity_extender_request_duration_seconds_count{{verb=\"{}\"}} {}\n", verb,
                       h.count);
  }
  out += "# HELP capacity_extender_decisions_total Scheduling decisions by verb and outcome.\n";
  out += "# TYPE capacity_extender_decisions_total counter\n";
  for (const auto& [key, n] : decisions_) {
    out += fmt::format("capacity_extender_decisions_total{{verb=\"{}\",outcome=\"{}\"}} {}\n",
                       key.first, key.second, n);
  }
  for (const auto& [name, by_labels] : counters_) {
    out += fmt::format("# TYPE {} counter\n", name);
    for (const auto& [labels, v] : by_labels) {
      out += labels.empty() ? fmt::format("{} {}\n", name, v)
                            : fmt::format("{}{{{}}} {}\n", name, labels, v);
    }
  }
  for (const auto& [name, v] : gauges_) {
    out += fmt::format("# TYPE {} gauge\n{} {}\n", name, name, v);
  }
  for (const auto& [name, h] : durations_) {
    if (!h.help.empty()) out += fmt::format("# HELP {} {}\n", name, h.help);
    out += fmt::format("# TYPE {} histogram\n", name);
    const std::vector<double> bounds = Bounds(h.scale);
    for (std::size_t i = 0; i < bounds.size(); ++i) {
      out += fmt::format("{}_bucket{{le=\"{}\"}} {}\n", name, bounds[i], h.buckets[i]);
    }
    out += fmt::format("{}_bucket{{le=\"+Inf\"}} {}\n", name, h.count);
    out += fmt::format("{}_sum {}\n{}_count {}\n", name, h.sum, name, h.count);
  }
  return out;
}

}  // namespace capext
