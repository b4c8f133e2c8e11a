// What one run of bench_throughput_bench measured (throughput_run.h says how): the
// configuration and its place in the repetitions, pods/s, CPU per process, kube-scheduler's log
// counts and the /metrics differences. A plain value, so that the tables (throughput_tables.h)
// can be computed, and tested, without a control plane.
#pragma once

#include <string>

#include "bench/micro/prometheus_text.h"
#include "bench/micro/scheduler_log.h"

namespace capext::bench {

struct ThroughputRun {
  std::string configuration;
  int repetition = 0;
  int position = 0;  // its place in the repetition's order
  bool ok = false;   // the run happened; else `error` says why
  std::string error;
  int pods = 0;
  int unbound_at_end = -1;  // from the API server, after the tail
  double seconds = 0;
  double pods_per_s = 0;
  bool finished = false;  // every pod bound before the run timeout
  bool collapsed = false;
  SchedulerLogCounts log;
  double tail_seconds = 0;  // from the last bind until etcd was quiet
  // CPU time in ms of kube-scheduler (its whole life), kube-apiserver, etcd and the extender (0
  // without one), over the window and the tail; the same over the window alone.
  double cpu_ms_scheduler = 0, cpu_ms_apiserver = 0, cpu_ms_etcd = 0, cpu_ms_extender = 0;
  double window_cpu_ms_scheduler = 0, window_cpu_ms_apiserver = 0, window_cpu_ms_etcd = 0,
         window_cpu_ms_extender = 0;
  // The machine's other work during the window, in cores; the 1-minute load average at the
  // start and at the end of the window.
  double other_cores = 0, load_before = 0, load_after = 0;
  MetricSamples apiserver;  // the difference over the window and the tail
  MetricSamples etcd;       // the difference over the window and the tail
  MetricSamples extender;   // the extender's scrape after the tail (a fresh process per run)

  double PerPod(double total) const { return pods > 0 ? total / pods : 0; }
};

}  // namespace capext::bench
