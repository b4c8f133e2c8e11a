// Metrics in the Prometheus text format (names capacity_extender_*): per-verb request counts and
// latency histograms, decisions by outcome, reclaim and eviction counters, named histograms of
// durations in seconds (e.g. a reclaim's time to bind); quota gauges are rendered from the
// cache at scrape time.
// Thread-safety: all methods are safe from any thread (atomics and a mutex for label sets).
#pragma once

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>

namespace capext {

class Metrics {
 public:
  // Latency buckets in seconds (upper bounds), from 50 us to 5 s: kube-scheduler's budget.
  static constexpr std::array<double, 12> kBuckets = {
      0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.05, 0.25, 1.0, 5.0};

  void ObserveRequest(const std::string& verb, int status, double seconds);
  // decision: e.g. filter/pass, filter/quota-rejected, bind/bound, bind/refused, preempt/victims.
  void CountDecision(const std::string& verb, const std::string& outcome);
  // A named counter with one optional label (e.g. evictions by namespace).
  void Count(const std::string& name, const std::string& label_name = "",
             const std::string& label_value = "", double amount = 1);
  // A named gauge, set.
  void SetGauge(const std::string& name, double value);
  // A named gauge, moved by `delta` (exact under concurrent changes, unlike Get-then-Set).
  void AddGauge(const std::string& name, double delta);

  // Buckets of the named duration histograms, in seconds (upper bounds): 100 ms to 30 min, the
  // range of a reclaim (evictions, grace periods, kube-scheduler's backoff).
  static constexpr std::array<double, 14> kDurationBuckets = {0.1, 0.25, 0.5, 1,   2.5, 5,   10,
                                                              20,  30,   60,  120, 300, 600, 1800};
  // The buckets of a named histogram: kDurationBuckets (the default) or, for waits measured in
  // milliseconds, the request latency buckets kBuckets.
  enum class Scale { kDurations, kLatency };
  // Declares a duration histogram, so it is rendered (all zero) before its first observation.
  void DeclareHistogram(const std::string& name, const std::string& help,
                        Scale scale = Scale::kDurations);
  // One observation of the named histogram (declared on first use when it was not).
  void Observe(const std::string& name, double seconds);

  // Everything recorded so far, in the text format.
  std::string Render() const;

 private:
  struct Histogram {
    std::array<uint64_t, kBuckets.size()> buckets{};
    uint64_t count = 0;
    double sum = 0;
  };
  mutable std::mutex mutex_;
  std::map<std::pair<std::string, int>, uint64_t> requests_;
  std::map<std::string, Histogram> latency_;
  std::map<std::pair<std::string, std::string>, uint64_t> decisions_;
  std::map<std::string, std::map<std::string, double>> counters_;  // name -> labels -> value
  std::map<std::string, double> gauges_;
  struct DurationHistogram {
    std::string help;
    Scale scale = Scale::kDurations;
    std::array<uint64_t, std::max(kDurationBuckets.size(), kBuckets.size())> buckets{};
    uint64_t count = 0;
    double sum = 0;
  };
  std::map<std::string, DurationHistogram> durations_;
};

}  // namespace capext
