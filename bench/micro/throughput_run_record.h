// What one run of bench_throughput_bench measured (throughput_run.h says how): the
// configuration and its place in the repetitions, the pods' creation (its time, CPU per process
// and what the pods came back carrying), pods/s, CPU per process, kube-scheduler's log counts
// and the /metrics differences. A plain value, so that the tables (throughput_tables.h)
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
  // The creation of the pods, before the window: from the first POST until the last answer,
  // and the CPU ms of kube-apiserver, etcd and the extender (0 when it starts after the
  // creation) from the first POST until etcd has had no write for 1 s (the work that trails the
  // answers: watch events, status.used patches). The pods the create responses showed carrying
  // our scheduling gate, and the admitted-at annotation (admitted at creation by /mutate).
  double creation_seconds = 0;
  double creation_cpu_ms_apiserver = 0, creation_cpu_ms_etcd = 0, creation_cpu_ms_extender = 0;
  int created_gated = 0, created_admitted = 0;
  MetricSamples creation_apiserver;  // kube-apiserver's /metrics difference over the creation
  int unbound_at_end = -1;           // from the API server, after the tail
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
