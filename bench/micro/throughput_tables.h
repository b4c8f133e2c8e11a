// What bench_throughput_bench reports from its runs (throughput_run.h): per configuration the
// medians over its runs, the paired ratios (the same repetition's runs, so that a slow moment of
// the machine hits both sides of a pair), issue 24's "Why" table, the creation table (the pods'
// creation before the window: its time and CPU, what the pods came back carrying), and, from
// the /metrics differences of the window, the API requests, etcd operations and watch events
// per pod by kind.
// Thread-safety: plain functions over finished runs.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "bench/micro/bench_support.h"
#include "bench/micro/throughput_configurations.h"
#include "bench/micro/throughput_run_record.h"

namespace capext::bench {

using RunValue = std::function<double(const ThroughputRun&)>;

// The runs of `configuration` that happened, in repetition order.
inline std::vector<const ThroughputRun*> RunsOf(const std::vector<ThroughputRun>& runs,
                                                const std::string& configuration,
                                                bool healthy_only = false) {
  std::vector<const ThroughputRun*> out;
  for (const ThroughputRun& run : runs) {
    if (run.ok && run.configuration == configuration && (!healthy_only || !run.collapsed))
      out.push_back(&run);
  }
  return out;
}

inline std::vector<double> ValuesOf(const std::vector<const ThroughputRun*>& runs,
                                    const RunValue& value) {
  std::vector<double> out;
  for (const ThroughputRun* run : runs)
    out.push_back(value(*run));
  return out;
}

// value(a) / value(b), or value(a) - value(b) with `difference`, for each repetition in which
// both `a` and `b` ran and neither collapsed: a collapsed run measures kube-scheduler's retries,
// not the configuration, and one collapsed baseline would make any ratio look like a win
// (collapsed runs are counted apart: CollapsedPairs). `collapsed_too` keeps them, for a value
// measured before the window (the creation), which a collapse does not touch.
inline std::vector<double> Paired(const std::vector<ThroughputRun>& runs, const std::string& a,
                                  const std::string& b, const RunValue& value,
                                  bool difference = false, bool collapsed_too = false) {
  std::vector<double> out;
  for (const ThroughputRun* x : RunsOf(runs, a)) {
    for (const ThroughputRun* y : RunsOf(runs, b)) {
      if (x->repetition != y->repetition) continue;
      if (!collapsed_too && (x->collapsed || y->collapsed)) continue;
      const double vx = value(*x), vy = value(*y);
      if (difference) {
        out.push_back(vx - vy);
      } else if (vy > 0) {
        out.push_back(vx / vy);
      }
    }
  }
  return out;
}

// The repetitions in which both `a` and `b` ran and at least one of them collapsed.
inline int CollapsedPairs(const std::vector<ThroughputRun>& runs, const std::string& a,
                          const std::string& b) {
  int n = 0;
  for (const ThroughputRun* x : RunsOf(runs, a)) {
    for (const ThroughputRun* y : RunsOf(runs, b))
      n += x->repetition == y->repetition && (x->collapsed || y->collapsed) ? 1 : 0;
  }
  return n;
}

// "a-b" with `digits` decimals ("a" when equal); "-" when empty.
inline std::string Range(std::vector<double> values, int digits = 1) {
  if (values.empty()) return "-";
  std::sort(values.begin(), values.end());
  const std::string lo = fmt::format("{:.{}f}", values.front(), digits);
  const std::string hi = fmt::format("{:.{}f}", values.back(), digits);
  return lo == hi ? lo : lo + "-" + hi;
}

inline double ApiServerEtcdCpuPerPod(const ThroughputRun& r) {
  return r.PerPod(r.cpu_ms_apiserver + r.cpu_ms_etcd);
}

// Issue 24's "Why" table: runs, healthy runs' pods/s, collapsed runs' pods/s, and CPU ms per pod
// of each process in the healthy runs.
inline void PrintWhyTable(const std::vector<ThroughputRun>& runs,
                          const std::vector<ThroughputConfiguration>& configurations) {
  std::printf(
      "\n| config | runs | healthy runs, pods/s (median) | collapsed runs, pods/s | CPU ms "
      "per pod in healthy runs: scheduler / apiserver / etcd / extender | load avg |\n"
      "|---|---|---|---|---|---|\n");
  for (const ThroughputConfiguration& c : configurations) {
    const auto all = RunsOf(runs, c.name);
    if (all.empty()) continue;
    const auto healthy = RunsOf(runs, c.name, true);
    std::vector<const ThroughputRun*> collapsed;
    for (const ThroughputRun* r : all)
      if (r->collapsed) collapsed.push_back(r);
    const auto pps = [](const ThroughputRun& r) { return r.pods_per_s; };
    const std::string healthy_pps =
        healthy.empty() ? "none"
                        : Range(ValuesOf(healthy, pps), 0) +
                              fmt::format(" ({:.0f})", Median(ValuesOf(healthy, pps)));
    const std::string collapsed_pps =
        collapsed.empty()
            ? "none"
            : fmt::format("{}: {}", collapsed.size(), Range(ValuesOf(collapsed, pps), 0));
    const std::string extender =
        c.kind == ExtenderKind::kNone ? "-" : Range(ValuesOf(healthy, [](const ThroughputRun& r) {
          return r.PerPod(r.cpu_ms_extender);
        }));
    std::printf(
        "| %s | %zu | %s | %s | %s / %s / %s / %s | %s |\n", c.title.c_str(), all.size(),
        healthy_pps.c_str(), collapsed_pps.c_str(),
        Range(
            ValuesOf(healthy, [](const ThroughputRun& r) { return r.PerPod(r.cpu_ms_scheduler); }))
            .c_str(),
        Range(
            ValuesOf(healthy, [](const ThroughputRun& r) { return r.PerPod(r.cpu_ms_apiserver); }))
            .c_str(),
        Range(ValuesOf(healthy, [](const ThroughputRun& r) { return r.PerPod(r.cpu_ms_etcd); }))
            .c_str(),
        extender.c_str(),
        Range(ValuesOf(all, [](const ThroughputRun& r) { return r.load_before; })).c_str());
  }
}

inline double CreationPodsPerS(const ThroughputRun& r) {
  return r.creation_seconds > 0 ? r.pods / r.creation_seconds : 0;
}

// The creation of the pods, before the window (throughput_run.h): runs, the creation's time and
// rate, CPU ms per pod of kube-apiserver, etcd and the extender (when it ran during the
// creation), and the pods that came back gated and admitted at creation, over every run that
// happened (collapsed or not: the window's fate does not change the creation).
inline void PrintCreationTable(const std::vector<ThroughputRun>& runs,
                               const std::vector<ThroughputConfiguration>& configurations) {
  std::printf(
      "\ncreation of the pods, before the window\n"
      "| config | runs | creation s (median) | pods/s (median) | CPU ms per pod: apiserver / "
      "etcd / extender | pods gated / admitted at creation |\n"
      "|---|---|---|---|---|---|\n");
  for (const ThroughputConfiguration& c : configurations) {
    const auto all = RunsOf(runs, c.name);
    if (all.empty()) continue;
    const auto seconds = ValuesOf(all, [](const ThroughputRun& r) { return r.creation_seconds; });
    const auto pps = ValuesOf(all, CreationPodsPerS);
    std::printf(
        "| %s | %zu | %s (%.2f) | %s (%.0f) | %s / %s / %s | %s / %s |\n", c.title.c_str(),
        all.size(), Range(seconds, 2).c_str(), Median(seconds), Range(pps, 0).c_str(), Median(pps),
        Range(
            ValuesOf(all,
                     [](const ThroughputRun& r) { return r.PerPod(r.creation_cpu_ms_apiserver); }),
            2)
            .c_str(),
        Range(
            ValuesOf(all, [](const ThroughputRun& r) { return r.PerPod(r.creation_cpu_ms_etcd); }),
            2)
            .c_str(),
        Range(ValuesOf(all,
                       [](const ThroughputRun& r) { return r.PerPod(r.creation_cpu_ms_extender); }),
              2)
            .c_str(),
        Range(ValuesOf(all, [](const ThroughputRun& r) { return double(r.created_gated); }), 0)
            .c_str(),
        Range(ValuesOf(all, [](const ThroughputRun& r) { return double(r.created_admitted); }), 0)
            .c_str());
  }
}

// Per-pod counts by kind from a run's /metrics differences; `kinds` names the rows.
using KindCounts = std::function<std::map<std::string, double>(const ThroughputRun&)>;

// apiserver_request_total by "VERB group/resource/subresource" (the benchmark's own scrapes of
// /metrics have no resource and are left out).
inline std::map<std::string, double> ApiRequestsPerPod(const ThroughputRun& r, bool writes) {
  static const std::vector<std::string> kWriteVerbs = {
      "POST", "PUT", "PATCH", "DELETE", "DELETECOLLECTION", "APPLY"};
  auto out = r.apiserver.SumBy(
      "apiserver_request_total",
      [](const MetricLabels& l) {
        auto get = [&](const char* k) {
          auto it = l.find(k);
          return it == l.end() ? std::string() : it->second;
        };
        std::string kind = get("verb") + " ";
        if (!get("group").empty()) kind += get("group") + "/";
        kind += get("resource");
        if (!get("subresource").empty()) kind += "/" + get("subresource");
        return kind;
      },
      [&](const MetricLabels& l) {
        auto resource = l.find("resource");
        auto verb = l.find("verb");
        if (resource == l.end() || resource->second.empty() || verb == l.end()) return false;
        const bool is_write =
            std::find(kWriteVerbs.begin(), kWriteVerbs.end(), verb->second) != kWriteVerbs.end();
        return is_write == writes;
      });
  for (auto& [kind, n] : out)
    n = r.PerPod(n);
  return out;
}

// kube-apiserver's requests to etcd, by "operation type" (etcd_request_duration_seconds_count).
inline std::map<std::string, double> EtcdRequestsPerPod(const ThroughputRun& r) {
  auto out = r.apiserver.SumBy("etcd_request_duration_seconds_count", [](const MetricLabels& l) {
    auto op = l.find("operation");
    auto type = l.find("type");
    return (op == l.end() ? "?" : op->second) + " " + (type == l.end() ? "?" : type->second);
  });
  for (auto& [kind, n] : out)
    n = r.PerPod(n);
  return out;
}

// etcd's own counters: gRPC calls by method, key-value operations, disk syncs, bytes.
inline std::map<std::string, double> EtcdServerPerPod(const ThroughputRun& r) {
  std::map<std::string, double> out =
      r.etcd.SumBy("grpc_server_handled_total", [](const MetricLabels& l) {
        auto m = l.find("grpc_method");
        return "grpc " + (m == l.end() ? std::string("?") : m->second);
      });
  for (const char* name :
       {"etcd_mvcc_put_total", "etcd_mvcc_delete_total", "etcd_mvcc_range_total",
        "etcd_debugging_mvcc_events_total", "etcd_disk_wal_fsync_duration_seconds_count",
        "etcd_disk_backend_commit_duration_seconds_count",
        "etcd_network_client_grpc_received_bytes_total",
        "etcd_network_client_grpc_sent_bytes_total"}) {
    const double v = r.etcd.Sum(name);
    if (v != 0) out[name] = v;
  }
  for (auto& [kind, n] : out)
    n = r.PerPod(n);
  return out;
}

// Watch events kube-apiserver sent, by kind, and their bytes.
inline std::map<std::string, double> WatchEventsPerPod(const ThroughputRun& r) {
  auto kind_of = [](const MetricLabels& l) {
    auto k = l.find("kind");
    return k == l.end() ? std::string("?") : k->second;
  };
  std::map<std::string, double> out;
  const auto events = r.apiserver.SumBy("apiserver_watch_events_total", kind_of);
  for (const auto& [kind, n] : events)
    out["events " + kind] = r.PerPod(n);
  for (const auto& [kind, n] : r.apiserver.SumBy("apiserver_watch_events_sizes_sum", kind_of)) {
    auto count = events.find(kind);  // the bytes of the kinds with events enough to show
    if (count != events.end() && r.PerPod(count->second) >= 0.005)
      out["bytes " + kind] = r.PerPod(n);
  }
  return out;
}

// A table of per-pod counts: one row per kind seen anywhere (at least `floor` per pod in some
// configuration), one column per configuration, the median over its runs. Returns the medians
// ([configuration][kind]) for the JSON.
inline std::map<std::string, std::map<std::string, double>> PrintKindTable(
    const std::string& title, const std::vector<ThroughputRun>& runs,
    const std::vector<ThroughputConfiguration>& configurations, const KindCounts& counts,
    double floor = 0.005) {
  std::map<std::string, std::map<std::string, double>> medians;  // configuration -> kind -> median
  std::vector<std::string> columns;                              // in the configurations' order
  std::map<std::string, bool> kinds;
  for (const ThroughputConfiguration& c : configurations) {
    const auto of = RunsOf(runs, c.name);
    if (of.empty()) continue;
    columns.push_back(c.name);
    std::map<std::string, std::vector<double>> values;
    for (const ThroughputRun* r : of) {
      for (const auto& [kind, n] : counts(*r))
        values[kind].push_back(n);
    }
    for (auto& [kind, v] : values) {
      v.resize(of.size(), 0.0);  // a run without the kind counted 0
      medians[c.name][kind] = Median(v);
      if (std::fabs(medians[c.name][kind]) >= floor) kinds[kind] = true;
    }
  }
  for (auto& [name, by_kind] : medians) {  // the rows shown are the rows kept
    std::erase_if(by_kind, [&](const auto& entry) { return !kinds.count(entry.first); });
  }
  std::printf("\n%s (per pod, median of the runs)\n| kind |", title.c_str());
  for (const std::string& name : columns)
    std::printf(" %s |", name.c_str());
  std::printf("\n|---|");
  for (std::size_t i = 0; i < columns.size(); ++i)
    std::printf("---|");
  std::printf("\n");
  for (const auto& [kind, unused] : kinds) {
    std::printf("| %s |", kind.c_str());
    for (const std::string& name : columns) {
      const auto& by_kind = medians[name];
      auto it = by_kind.find(kind);
      const double v = it == by_kind.end() ? 0 : it->second;
      std::printf(v >= 100 ? " %.0f |" : " %.3f |", v);
    }
    std::printf("\n");
  }
  return medians;
}

}  // namespace capext::bench
