// The three measurements of bench_podcost_bench, each on fresh processes (a new API-server double
// and a new extender), so that runs do not inherit each other's state:
//  * RunPerPod: N nodes, 8 namespaces each governed by an ElasticQuota (sized so that no pod is
//    refused), a SchedulerReplay of P pods; the window runs from the first create to the moment
//    the extender has confirmed every binding through its watch and written status.used back.
//  * RunReclaimAtRest: N nodes, every namespace using exactly its min (bound running pods) and
//    a crowd of pending pods marked Unschedulable that the sum-of-mins rule keeps out (no quota
//    is below its min, so nothing can be reclaimed either); after sync, the reclaim loop's first
//    plans of every pod (its backlog empty, from /metrics) and a warm-up, the extender's CPU per
//    second of wall time over fixed windows, while nothing changes.
//  * RunChurn: cycles of P pods created, bound through /bind and deleted; VmRSS after each.
// Every wait is bounded; a phase that cannot complete says why in `error`.
#pragma once

#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <fstream>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "bench/micro/bench_support.h"
#include "bench/micro/podcost_apiserver_double.h"
#include "bench/micro/podcost_cluster_objects.h"
#include "bench/micro/podcost_extender_under_test.h"
#include "bench/micro/podcost_process_stats.h"
#include "bench/micro/podcost_scheduler_replay.h"

namespace capext::bench {

struct BenchEnvironment {
  std::string extender_binary;  // capacity-extender
  std::string double_script;    // tests/apiserver_double/apiserver_double.py
  std::string self;             // this benchmark (re-executed as the do-nothing extender)
  std::string work_dir;         // logs, kubeconfig, port files
  ClusterObjects objects;
  TaskExitListener* exits = nullptr;  // may not be running: then thread counts are lower bounds
  int namespaces = 8;
};

struct LiveClusterShape {
  int nodes = 500;
  int64_t quota_min_cores = 0;  // per namespace; max = 2 x min
  int64_t quota_min_gib = 0;
  int bound_per_namespace = 0;  // running pods created with the cluster
  int pending = 0;              // Unschedulable pods created with the cluster (spread over ns)
};

// `nodes` nodes and quotas roomy enough for `pods` pods spread over the namespaces (each quota's
// min three times its share of cpu, twice in GiB; at least 16 of each).
inline LiveClusterShape ShapeForPods(const BenchEnvironment& env, int nodes, int pods) {
  const int64_t per_namespace = (pods + env.namespaces - 1) / env.namespaces;
  LiveClusterShape shape;
  shape.nodes = nodes;
  shape.quota_min_cores = std::max<int64_t>(16, per_namespace * 3 * 2);
  shape.quota_min_gib = std::max<int64_t>(16, per_namespace * 2);
  return shape;
}

// Creates priority classes, quotas, nodes and the shape's pods in the double.
inline Status FillCluster(const BenchEnvironment& env, ApiServerDouble& api,
                          const LiveClusterShape& shape, std::vector<std::string>* node_names) {
  const ClusterObjects& o = env.objects;
  if (Status s = api.CreateMany("priorityclasses", {ClusterObjects::PriorityClass("low", 100),
                                                    ClusterObjects::PriorityClass("high", 1000)});
      !s.ok()) {
    return s;
  }
  std::vector<std::string> items;
  for (int k = 0; k < env.namespaces; ++k) {
    items.push_back(ClusterObjects::ElasticQuota(
        TeamNamespaceName(k), std::to_string(shape.quota_min_cores),
        fmt::format("{}Gi", shape.quota_min_gib), std::to_string(2 * shape.quota_min_cores),
        fmt::format("{}Gi", 2 * shape.quota_min_gib)));
  }
  if (Status s = api.CreateMany("elasticquotas", items); !s.ok()) return s;
  items.clear();
  node_names->clear();
  const char* zones[] = {"us-east-1a", "us-east-1b", "us-east-1c"};
  for (int i = 0; i < shape.nodes; ++i) {
    node_names->push_back(NodeName(i));
    items.push_back(o.Node(node_names->back(), zones[i % 3], "64", "256Gi"));
  }
  if (Status s = api.CreateMany("nodes", items, 500); !s.ok()) return s;
  items.clear();
  for (int k = 0; k < env.namespaces; ++k) {
    for (int j = 0; j < shape.bound_per_namespace; ++j) {
      const std::string name = fmt::format("running-{:06}", j);
      const std::string& node =
          (*node_names)[static_cast<std::size_t>(k * shape.bound_per_namespace + j) %
                        node_names->size()];
      items.push_back(
          o.Pod({name, TeamNamespaceName(k), "", "", node, ClusterObjects::RunningStatus()}));
    }
  }
  const std::string unschedulable = ClusterObjects::UnschedulableStatus(shape.nodes);
  for (int i = 0; i < shape.pending; ++i) {
    items.push_back(o.Pod({fmt::format("waiting-{:06}", i), TeamNamespaceName(i % env.namespaces),
                           "", "", "", unschedulable}));
  }
  return api.CreateMany("pods", items, 1000);
}

// The double and the extender under test, started on a filled cluster.
struct LiveSetup {
  ApiServerDouble api;
  ExtenderUnderTest extender;
  std::vector<std::string> nodes;
  std::map<std::string, int64_t> base_used_cpu;  // per namespace, before any replayed pod

  Status Start(const BenchEnvironment& env, const LiveClusterShape& shape, bool noop) {
    if (Status s = api.Start(env.double_script, env.work_dir); !s.ok()) return s;
    if (Status s = FillCluster(env, api, shape, &nodes); !s.ok()) return s;
    for (int k = 0; k < env.namespaces; ++k)
      base_used_cpu[TeamNamespaceName(k)] =
          int64_t{shape.bound_per_namespace} * ClusterObjects::kPodCpuMilli;
    if (noop) return extender.StartNoop(env.self, api.port(), env.work_dir);
    const std::string kubeconfig = env.work_dir + "/kubeconfig";
    std::ofstream(kubeconfig) << api.Kubeconfig();
    if (Status s =
            extender.StartCapacity(env.extender_binary, kubeconfig, {},
                                   env.work_dir + "/extender.log", std::chrono::seconds(300));
        !s.ok()) {
      return s;
    }
    // Synced and at rest: the initial status.used write-back is done.
    std::string last;
    if (!extender.WaitForQuotaUsage(base_used_cpu, std::chrono::seconds(120), &last) ||
        !ExtenderUnderTest::WaitForQuotaStatus(api, base_used_cpu, std::chrono::seconds(60))) {
      return Status::Unavailable("the extender did not settle after sync; /quotas: " +
                                 last.substr(0, 2000));
    }
    return {};
  }
  ~LiveSetup() {
    extender.Stop();
    api.Stop();
  }
};

struct PerPodResult {
  std::string error;  // empty when the run completed
  WindowStats window;
  WindowStats idle;  // the same extender at rest before the replay (idle_seconds)
  ReplayResult replay;
  double double_cpu_ms = 0;  // the API-server double's CPU over the window
  double other_cpu_ms = 0;   // everything else on the machine (not this benchmark) meanwhile
};

inline PerPodResult RunPerPod(const BenchEnvironment& env, int nodes, int pods, bool noop,
                              double pods_per_second, double idle_seconds) {
  PerPodResult r;
  const LiveClusterShape shape = ShapeForPods(env, nodes, pods);
  LiveSetup live;
  if (Status s = live.Start(env, shape, noop); !s.ok()) {
    r.error = s.message();
    return r;
  }
  {
    ProcessWindow idle(live.extender.pid(), env.exits);
    idle.Begin();
    std::this_thread::sleep_for(std::chrono::duration<double>(idle_seconds));
    r.idle = idle.End();
  }
  SchedulerReplay replay(env.objects, live.nodes, live.extender.port(), live.api.port(),
                         ApiServerDouble::AuthHeader());
  ReplayOptions options;
  options.pods = pods;
  options.namespaces = env.namespaces;
  options.pods_per_second = pods_per_second;
  ProcessWindow window(live.extender.pid(), env.exits);
  const double double_before = ProcessCpuMs(live.api.pid());
  const double machine_before = MachineBusyMs();
  const double self_before = ProcessCpuMs(getpid());
  window.Begin();
  r.replay = replay.Run(options);
  if (r.replay.failures > 0) {
    const std::string api_log = live.api.Log();
    r.error = fmt::format("{} of {} pods failed; first: {}; extender {}; API-server double: {}",
                          r.replay.failures, pods, r.replay.first_failure,
                          live.extender.Running() ? "running" : "exited",
                          api_log.substr(api_log.size() > 2000 ? api_log.size() - 2000 : 0));
    return r;
  }
  if (!noop) {
    std::map<std::string, int64_t> expected = live.base_used_cpu;
    for (int i = 0; i < pods; ++i)
      expected[TeamNamespaceName(i % env.namespaces)] += ClusterObjects::kPodCpuMilli;
    std::string last;
    if (!live.extender.WaitForQuotaUsage(expected, std::chrono::seconds(120), &last)) {
      r.error = "the extender did not confirm every binding; /quotas: " + last.substr(0, 2000);
      return r;
    }
    if (!ExtenderUnderTest::WaitForQuotaStatus(live.api, expected, std::chrono::seconds(30))) {
      r.error = "status.used was not written back";
      return r;
    }
  }
  r.window = window.End();
  r.double_cpu_ms = ProcessCpuMs(live.api.pid()) - double_before;
  r.other_cpu_ms = MachineBusyMs() - machine_before - r.window.cpu_ms - r.double_cpu_ms -
                   (ProcessCpuMs(getpid()) - self_before);
  return r;
}

// One window at rest: the extender's whole CPU and its busiest thread's.
struct RestWindow {
  WindowStats stats;
  double busiest_thread_cpu_ms = 0;
  int64_t api_writes = 0;   // resourceVersion bumps during the window: nothing should change
  double other_cpu_ms = 0;  // everything else on the machine (not this benchmark) meanwhile
  // From the extender's /metrics, read before and after the window (-1: not exported, e.g. a
  // binary without the event-driven loop): reclaim passes and pods planned in the window, and
  // the pending quota pods the loop tracks at its end (all of them, or the window proves little).
  double reclaim_passes = -1, reclaim_planned = -1, reclaim_tracked = -1;
  double cpu_percent() const { return stats.cpu_ms / (stats.wall_s * 1000) * 100; }
  double busiest_fraction() const { return busiest_thread_cpu_ms / (stats.wall_s * 1000); }
};

struct RestResult {
  std::string error;
  std::vector<RestWindow> windows;
  double setup_seconds = 0;      // filling the double, starting and syncing the extender
  double extender_sync_ms = -1;  // its own "cluster cache synced" sync_ms, when logged
  // From the start of the warm-up until the reclaim loop had planned every pending pod once (its
  // backlog empty, every pod tracked); -1 when the extender does not export those metrics.
  double first_plans_seconds = -1;
};

// CPU ms of every live thread of `pid`.
inline std::map<int, double> ThreadCpuMs(int pid) {
  std::map<int, double> out;
  for (int tid : ListThreads(pid))
    out[tid] = StatCpuMs("/proc/" + std::to_string(pid) + "/task/" + std::to_string(tid) + "/stat");
  return out;
}

inline int64_t DoubleResourceVersion(ApiServerDouble& api) {
  std::string answer;
  if (api.Control("state", "", &answer) != 200) return -1;
  const std::size_t at = answer.find("\"resourceVersion\":");
  return at == std::string::npos ? -1 : std::atoll(answer.c_str() + at + 18);
}

// The value of the unlabelled sample `name` in Prometheus text, or -1.
inline double MetricSample(const std::string& text, const std::string& name) {
  for (std::size_t at = text.find(name); at != std::string::npos; at = text.find(name, at + 1)) {
    const bool line_start = at == 0 || text[at - 1] == '\n';
    if (line_start && text.compare(at + name.size(), 1, " ") == 0)
      return std::atof(text.c_str() + at + name.size() + 1);
  }
  return -1;
}

// `windows` consecutive windows of `window_seconds` after sync and `warmup_seconds`.
inline RestResult RunReclaimAtRest(const BenchEnvironment& env, int nodes, int pending,
                                   double warmup_seconds, double window_seconds, int windows) {
  RestResult r;
  LiveClusterShape shape;
  shape.nodes = nodes;
  shape.bound_per_namespace = 50;
  shape.quota_min_cores = shape.bound_per_namespace * ClusterObjects::kPodCpuMilli / 1000;
  shape.quota_min_gib = shape.bound_per_namespace;
  shape.pending = pending;
  LiveSetup live;
  const auto started = Clock::now();
  if (Status s = live.Start(env, shape, false); !s.ok()) {
    r.error = s.message();
    return r;
  }
  r.setup_seconds = std::chrono::duration<double>(Clock::now() - started).count();
  const std::string log = live.extender.Log();
  const std::size_t synced = log.find("sync_ms=");
  if (synced != std::string::npos) r.extender_sync_ms = std::atof(log.c_str() + synced + 8);
  // At rest only once the first plans are done: the loop plans at most reclaimMaxPodsPerPass pods
  // a pass, so 20,000 pods take many passes after the sync.
  const auto warmup_started = Clock::now();
  std::string metrics;
  const bool exported = PollUntil(  // after the loop's first pass; never, from an older binary
      [&] {
        live.extender.Get("/metrics", &metrics);
        return MetricSample(metrics, "capacity_extender_reclaim_backlog") >= 0;
      },
      std::chrono::seconds(15), std::chrono::milliseconds(200));
  if (exported) {
    const bool planned = PollUntil(
        [&] {
          live.extender.Get("/metrics", &metrics);
          return MetricSample(metrics, "capacity_extender_reclaim_backlog") == 0 &&
                 MetricSample(metrics, "capacity_extender_reclaim_tracked_pods") >= pending;
        },
        std::chrono::minutes(10), std::chrono::milliseconds(500));
    if (!planned) {
      r.error = "the reclaim loop did not plan every pending pod within 10 minutes";
      return r;
    }
    r.first_plans_seconds = std::chrono::duration<double>(Clock::now() - warmup_started).count();
  }
  std::this_thread::sleep_for(std::chrono::duration<double>(warmup_seconds));
  const int pid = live.extender.pid();
  for (int i = 0; i < windows; ++i) {
    RestWindow w;
    std::string metrics_before, metrics_after;
    live.extender.Get("/metrics", &metrics_before);
    const int64_t rv_before = DoubleResourceVersion(live.api);
    const auto threads_before = ThreadCpuMs(pid);
    ProcessWindow window(pid, env.exits);
    const double machine_before = MachineBusyMs();
    const double others_before = ProcessCpuMs(live.api.pid()) + ProcessCpuMs(getpid());
    window.Begin();
    std::this_thread::sleep_for(std::chrono::duration<double>(window_seconds));
    w.stats = window.End();
    w.other_cpu_ms = MachineBusyMs() - machine_before - w.stats.cpu_ms -
                     (ProcessCpuMs(live.api.pid()) + ProcessCpuMs(getpid()) - others_before);
    for (const auto& [tid, ms] : ThreadCpuMs(pid)) {
      auto it = threads_before.find(tid);
      w.busiest_thread_cpu_ms =
          std::max(w.busiest_thread_cpu_ms, ms - (it == threads_before.end() ? 0 : it->second));
    }
    w.api_writes = DoubleResourceVersion(live.api) - rv_before;
    live.extender.Get("/metrics", &metrics_after);
    auto delta = [&](const char* name) {
      const double before = MetricSample(metrics_before, name);
      const double after = MetricSample(metrics_after, name);
      return before < 0 || after < 0 ? -1 : after - before;
    };
    w.reclaim_passes = delta("capacity_extender_reclaim_passes_total");
    w.reclaim_planned = delta("capacity_extender_reclaim_pods_planned_total");
    w.reclaim_tracked = MetricSample(metrics_after, "capacity_extender_reclaim_tracked_pods");
    r.windows.push_back(w);
  }
  return r;
}

struct ChurnResult {
  std::string error;
  std::vector<int64_t> rss_kb;        // after each cycle's deletions were seen
  std::vector<int64_t> rss_bound_kb;  // after each cycle's bindings were seen
  std::vector<double> cpu_ms_per_pod;
};

inline ChurnResult RunChurn(const BenchEnvironment& env, int nodes, int pods, int cycles) {
  ChurnResult r;
  const LiveClusterShape shape = ShapeForPods(env, nodes, pods);
  LiveSetup live;
  if (Status s = live.Start(env, shape, false); !s.ok()) {
    r.error = s.message();
    return r;
  }
  const std::string status_path = "/proc/" + std::to_string(live.extender.pid()) + "/status";
  for (int c = 1; c <= cycles; ++c) {
    const double cpu_before = ProcessCpuMs(live.extender.pid());
    SchedulerReplay replay(env.objects, live.nodes, live.extender.port(), live.api.port(),
                           ApiServerDouble::AuthHeader());
    ReplayOptions options;
    options.pods = pods;
    options.namespaces = env.namespaces;
    options.prefix = fmt::format("c{}", c);
    options.pods_per_second = 0;  // RSS only: as fast as it goes
    const ReplayResult done = replay.Run(options);
    std::map<std::string, int64_t> expected = live.base_used_cpu;
    for (int i = 0; i < pods; ++i)
      expected[TeamNamespaceName(i % env.namespaces)] += ClusterObjects::kPodCpuMilli;
    std::string last;
    if (done.failures > 0 ||
        !live.extender.WaitForQuotaUsage(expected, std::chrono::seconds(120), &last)) {
      r.error = fmt::format("cycle {}: {} failures ({}); /quotas: {}", c, done.failures,
                            done.first_failure, last.substr(0, 1000));
      return r;
    }
    r.cpu_ms_per_pod.push_back((ProcessCpuMs(live.extender.pid()) - cpu_before) / pods);
    r.rss_bound_kb.push_back(ReadStatusFields(status_path)["VmRSS"]);
    for (int k = 0; k < env.namespaces; ++k) {
      if (Status s = live.api.DeletePods(TeamNamespaceName(k), options.prefix + "-"); !s.ok()) {
        r.error = s.message();
        return r;
      }
    }
    if (!live.extender.WaitForQuotaUsage(live.base_used_cpu, std::chrono::seconds(120), &last) ||
        !ExtenderUnderTest::WaitForQuotaStatus(live.api, live.base_used_cpu,
                                               std::chrono::seconds(30))) {
      r.error = fmt::format("cycle {}: deletions not seen; /quotas: {}", c, last.substr(0, 1000));
      return r;
    }
    r.rss_kb.push_back(ReadStatusFields(status_path)["VmRSS"]);
  }
  return r;
}

}  // namespace capext::bench
