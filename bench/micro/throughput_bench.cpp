// bench_throughput_bench: pods/s of a real kube-scheduler with and without the product, and what
// each configuration costs every process per pod (issue 24). On a real etcd + kube-apiserver +
// kube-scheduler (v1.26) on 127.0.0.1 (tests/support/real_control_plane.h over
// scripts/control-plane.sh; skipped, with the reason, when the binaries are absent):
//  * prequeued: --nodes fake nodes (500) and --pods pending pods (3,000), every pod under an
//    ElasticQuota big enough to admit it, created before kube-scheduler starts; the window is
//    the time from kube-scheduler's start until every pod is bound (throughput_run.h);
//  * the configurations of throughput_configurations.h (no extender, the do-nothing Go
//    extender, the product with filter + bind, with every verb, with --scoring none, with
//    --reserve-at filter (filter alone, kube-scheduler binds), in gate mode as users run it
//    (product-gate: the pods created through the product's registered /mutate webhook, which
//    admits each at its creation) and gate mode's path of pods that waited (product-gate-lift:
//    the pods created gated, the product lifting the gates in the window)), with deploy/'s
//    extender settings;
//  * --reps interleaved repetitions (5): each runs every configuration once on a fresh control
//    plane, the order rotated by one per repetition; ratios are paired within a repetition,
//    medians reported;
//  * per run, the creation (before the window, not in pods/s): the pods' creation time and the
//    CPU of kube-apiserver, etcd and the extender when it runs then, and how many pods came back
//    gated or admitted at creation (checked against the configuration: a mismatch fails the
//    run). For product-gate the webhook's whole cost, its call in every creation and the
//    extender's creation holds, is there, reported as information beside no-extender's creation
//    (the reference: plain pods, no webhook), not in the window;
//  * per run, the window: pods/s; CPU ms per pod of kube-scheduler, kube-apiserver, etcd and
//    the extender from /proc/<pid>/stat; kube-scheduler's errors and extender timeouts from its
//    log and a "collapsed" flag; the load average and the other work on the machine;
//  * per configuration: the Binding POST's latency (kube-apiserver's histogram) and the
//    extender's /bind latency (its /metrics); API requests, etcd operations and watch events per
//    pod by kind (the /metrics differences of kube-apiserver and etcd over the window); over the
//    creation, the pod POST's latency and the webhook call's (kube-apiserver's histograms) and
//    the extender's /mutate latency.
// Targets (issue 24) are in the JSON with their verdict: out/bench/throughput_bench.json.
// pods_per_s_gate_over_no_extender is product-gate's window; product-gate-lift's ratio is
// reported beside it as information (pods_per_s_gate_lift_over_no_extender).
// Run from the repository root (bench.sh does); the Go extender is built by bench.sh.
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "bench/micro/bench_support.h"
#include "bench/micro/throughput_run.h"
#include "bench/micro/throughput_tables.h"
#include "bench/micro/throughput_webhook.h"
#include "tests/support/real_control_plane.h"

namespace capext::bench {
namespace {

constexpr const char* kUsage =
    "Usage: bench_throughput_bench [--quick] [--json FILE] [--reps N] [--nodes N] [--pods N]\n"
    "                              [--namespaces N] [--configs A,B] [--run-timeout S]\n"
    "                              [--settle-ms MS] [--scheduler-qps N] [--extender BIN]\n"
    "                              [--noop-extender BIN] [--work-dir DIR]\n"
    "  --reps N          interleaved repetitions; each runs every configuration once (5; quick 1)\n"
    "  --nodes N         fake nodes (500; quick 100); 5000 for the one-off large run\n"
    "  --pods N          prequeued pods (3000; quick 600)\n"
    "  --namespaces N    namespaces, each with an ElasticQuota (10)\n"
    "  --configs A,B     configurations to run (default: all that can run but the last two):\n"
    "                    no-extender, go-noop, product-filter-bind, product-full,\n"
    "                    product-scoring-none, product-gate, product-gate-lift,\n"
    "                    product-filter-hold; only when named: product-filter-bind-unpaced\n"
    "                    (--filter-hold-limit 0s), product-filter-bind-json-watch\n"
    "                    (--watch-encoding json), and measurements of the Go extender with\n"
    "                    a pod watch: go-noop-json-watch, go-noop-protobuf-watch\n"
    "  --run-timeout S   a run that has not bound every pod by then ends, collapsed (120)\n"
    "  --settle-ms MS    pause between the extender's start and kube-scheduler's (1000)\n"
    "  --scheduler-qps N kube-scheduler's clientConnection qps and burst (1000); 0 leaves its\n"
    "                    defaults (50, burst 100: deploy/'s), which cap its own binds at 50/s\n"
    "  --extender BIN    capacity-extender (default: ../extender/capacity-extender beside this)\n"
    "  --noop-extender BIN  the do-nothing Go extender (default: noop-extender beside this)\n"
    "  --work-dir DIR    every run's kube-scheduler and extender logs "
    "(out/bench/throughput_bench)\n"
    "Binaries: as for the real-cluster tests (KUBE_BIN_DIR; scripts/control-plane.sh check).";

std::string BesideSelf(const std::string& relative) {
  std::error_code ec;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  return (self.parent_path() / relative).lexically_normal().string();
}

std::set<std::string> CommaSet(const std::string& text) {
  std::set<std::string> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = text.find(',', start);
    const std::string part = text.substr(start, comma == std::string::npos ? comma : comma - start);
    if (!part.empty()) out.insert(part);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

// The run's creation: time, CPU ms per pod, what the pods came back carrying.
std::string CreationLine(const ThroughputRun& r) {
  return fmt::format(
      "creation {:.1f} s {:.0f} pods/s | CPU ms/pod api {:.2f} etcd {:.2f} ext {:.2f} | gated {} "
      "admitted at creation {}",
      r.creation_seconds, CreationPodsPerS(r), r.PerPod(r.creation_cpu_ms_apiserver),
      r.PerPod(r.creation_cpu_ms_etcd), r.PerPod(r.creation_cpu_ms_extender), r.created_gated,
      r.created_admitted);
}

void PrintRun(const ThroughputRun& r) {
  if (!r.ok) {
    std::printf("  rep %d %-21s FAILED: %s\n", r.repetition, r.configuration.c_str(),
                r.error.c_str());
    if (r.creation_seconds > 0) std::printf("      %s\n", CreationLine(r).c_str());
    std::fflush(stdout);
    return;
  }
  std::string timeouts;
  for (const auto& [verb, n] : r.log.timeouts_by_verb)
    timeouts += fmt::format(" {}={}", verb, n);
  std::printf(
      "  rep %d %-21s %5d pods %6.1f s %6.1f pods/s (tail %.1f s) | CPU ms/pod sched %.2f api %.2f "
      "etcd %.2f "
      "ext %.2f | errors %d timeouts %d%s%s | load %.1f-%.1f, other work %.2f cores\n",
      r.repetition, r.configuration.c_str(), r.pods, r.seconds, r.pods_per_s, r.tail_seconds,
      r.PerPod(r.cpu_ms_scheduler), r.PerPod(r.cpu_ms_apiserver), r.PerPod(r.cpu_ms_etcd),
      r.PerPod(r.cpu_ms_extender), r.log.errors, r.log.timeouts, timeouts.c_str(),
      r.collapsed ? (r.finished ? " COLLAPSED" : " COLLAPSED (run timeout)") : "", r.load_before,
      r.load_after, r.other_cores);
  std::printf("      %s\n", CreationLine(r).c_str());
  for (const std::string& line : r.log.first_errors)
    std::printf("      %s\n", line.substr(0, 300).c_str());
  std::fflush(stdout);
}

// p50/p90/p99 in ms of histogram `name` summed over the runs (label filter `keep`).
void ReportLatency(Report& report, const std::string& key,
                   const std::vector<const ThroughputRun*>& runs, const std::string& name,
                   const std::function<const MetricSamples&(const ThroughputRun&)>& samples,
                   const std::function<bool(const MetricLabels&)>& keep) {
  std::map<double, double> buckets;
  for (const ThroughputRun* r : runs)
    for (const auto& [le, n] : samples(*r).Buckets(name, keep))
      buckets[le] += n;
  if (buckets.empty() || buckets.rbegin()->second <= 0) return;
  std::printf("  %-54s n=%-7.0f p50 %8.2f ms  p90 %8.2f ms  p99 %8.2f ms\n", key.c_str(),
              buckets.rbegin()->second, 1000 * HistogramQuantile(buckets, 0.5),
              1000 * HistogramQuantile(buckets, 0.9), 1000 * HistogramQuantile(buckets, 0.99));
  for (double q : {0.5, 0.9, 0.99}) {
    report.Number(fmt::format("{}.p{:.0f}_ms", key, q * 100), 1000 * HistogramQuantile(buckets, q));
  }
  report.Number(key + ".n", buckets.rbegin()->second);
}

void ReportConfiguration(Report& report, const std::vector<ThroughputRun>& runs,
                         const ThroughputConfiguration& c) {
  const auto all = RunsOf(runs, c.name);
  if (all.empty()) return;
  const auto healthy = RunsOf(runs, c.name, true);
  const std::string& n = c.name;
  const std::vector<std::pair<std::string, RunValue>> per_run = {
      {"pods_per_s", [](const ThroughputRun& r) { return r.pods_per_s; }},
      {"seconds", [](const ThroughputRun& r) { return r.seconds; }},
      {"cpu_ms_per_pod.scheduler",
       [](const ThroughputRun& r) { return r.PerPod(r.cpu_ms_scheduler); }},
      {"cpu_ms_per_pod.apiserver",
       [](const ThroughputRun& r) { return r.PerPod(r.cpu_ms_apiserver); }},
      {"cpu_ms_per_pod.etcd", [](const ThroughputRun& r) { return r.PerPod(r.cpu_ms_etcd); }},
      {"cpu_ms_per_pod.extender",
       [](const ThroughputRun& r) { return r.PerPod(r.cpu_ms_extender); }},
      {"cpu_ms_per_pod.apiserver_etcd", ApiServerEtcdCpuPerPod},
      {"window_cpu_ms_per_pod.scheduler",
       [](const ThroughputRun& r) { return r.PerPod(r.window_cpu_ms_scheduler); }},
      {"window_cpu_ms_per_pod.apiserver",
       [](const ThroughputRun& r) { return r.PerPod(r.window_cpu_ms_apiserver); }},
      {"window_cpu_ms_per_pod.etcd",
       [](const ThroughputRun& r) { return r.PerPod(r.window_cpu_ms_etcd); }},
      {"window_cpu_ms_per_pod.extender",
       [](const ThroughputRun& r) { return r.PerPod(r.window_cpu_ms_extender); }},
      {"tail_seconds", [](const ThroughputRun& r) { return r.tail_seconds; }},
      // How many writes share one WAL fsync: etcd batches the writes that arrive together, so
      // the same writes cost it less when more are in flight at once.
      {"etcd_writes_per_fsync",
       [](const ThroughputRun& r) {
         const double syncs = r.etcd.Sum("etcd_disk_wal_fsync_duration_seconds_count");
         const double writes =
             r.etcd.Sum("etcd_mvcc_put_total") + r.etcd.Sum("etcd_mvcc_delete_total");
         return syncs > 0 ? writes / syncs : 0.0;
       }},
      {"collapsed", [](const ThroughputRun& r) { return r.collapsed ? 1.0 : 0.0; }},
      // The creation, before the window (information: no target).
      {"creation_seconds", [](const ThroughputRun& r) { return r.creation_seconds; }},
      {"creation_pods_per_s", CreationPodsPerS},
      {"creation_cpu_ms_per_pod.apiserver",
       [](const ThroughputRun& r) { return r.PerPod(r.creation_cpu_ms_apiserver); }},
      {"creation_cpu_ms_per_pod.etcd",
       [](const ThroughputRun& r) { return r.PerPod(r.creation_cpu_ms_etcd); }},
      {"creation_cpu_ms_per_pod.extender",
       [](const ThroughputRun& r) { return r.PerPod(r.creation_cpu_ms_extender); }},
      {"creation_cpu_ms_per_pod.apiserver_etcd",
       [](const ThroughputRun& r) {
         return r.PerPod(r.creation_cpu_ms_apiserver + r.creation_cpu_ms_etcd);
       }},
      {"created_gated", [](const ThroughputRun& r) { return double(r.created_gated); }},
      {"created_admitted", [](const ThroughputRun& r) { return double(r.created_admitted); }},
      {"scheduler_errors", [](const ThroughputRun& r) { return double(r.log.errors); }},
      {"extender_timeouts", [](const ThroughputRun& r) { return double(r.log.timeouts); }},
      {"load_before", [](const ThroughputRun& r) { return r.load_before; }},
      {"other_cores", [](const ThroughputRun& r) { return r.other_cores; }},
  };
  for (const auto& [key, value] : per_run) {
    report.Series(n + "." + key, ValuesOf(all, value));
    report.Number(n + "." + key + ".median", Median(ValuesOf(all, value)));
  }
  report.Number(n + ".runs", static_cast<double>(all.size()));
  report.Number(n + ".collapsed_runs", static_cast<double>(all.size() - healthy.size()));
  if (!healthy.empty()) {
    report.Number(n + ".pods_per_s.healthy_median",
                  Median(ValuesOf(healthy, [](const ThroughputRun& r) { return r.pods_per_s; })));
  }
  ReportLatency(
      report, n + ".binding_post_latency", all, "apiserver_request_duration_seconds",
      [](const ThroughputRun& r) -> const MetricSamples& { return r.apiserver; },
      [](const MetricLabels& l) {
        auto v = l.find("verb"), res = l.find("resource"), sub = l.find("subresource");
        return v != l.end() && v->second == "POST" && res != l.end() && res->second == "pods" &&
               sub != l.end() && sub->second == "binding";
      });
  ReportLatency(
      report, n + ".creation_pod_post_latency", all, "apiserver_request_duration_seconds",
      [](const ThroughputRun& r) -> const MetricSamples& { return r.creation_apiserver; },
      [](const MetricLabels& l) {
        auto v = l.find("verb"), res = l.find("resource"), sub = l.find("subresource");
        return v != l.end() && v->second == "POST" && res != l.end() && res->second == "pods" &&
               (sub == l.end() || sub->second.empty());
      });
  ReportLatency(
      report, n + ".creation_webhook_latency", all,
      "apiserver_admission_webhook_admission_duration_seconds",
      [](const ThroughputRun& r) -> const MetricSamples& { return r.creation_apiserver; },
      [](const MetricLabels&) { return true; });
  const std::string histogram = c.kind == ExtenderKind::kProduct
                                    ? "capacity_extender_request_duration_seconds"
                                    : "noop_extender_request_duration_seconds";
  // mutate: the webhook's calls, from its start (for product-gate: the creation's).
  for (const char* verb : {"filter", "prioritize", "bind", "mutate"}) {
    ReportLatency(
        report, n + ".extender_" + verb + "_latency", all, histogram,
        [](const ThroughputRun& r) -> const MetricSamples& { return r.extender; },
        [verb](const MetricLabels& l) {
          auto v = l.find("verb");
          return v != l.end() && v->second == verb;
        });
  }
}

void ReportKinds(Report& report, const std::string& prefix,
                 const std::map<std::string, std::map<std::string, double>>& medians) {
  for (const auto& [configuration, kinds] : medians)
    for (const auto& [kind, v] : kinds)
      report.Number(prefix + "." + configuration + "." + kind, v);
}

int Main(int argc, char** argv) {
  const Args args = Args::Parse(argc, argv, kUsage);
  ThroughputShape shape;
  shape.nodes = args.Int("--nodes", args.quick ? 100 : 500);
  shape.pods = args.Int("--pods", args.quick ? 600 : 3000);
  shape.namespaces = std::max(1, args.Int("--namespaces", 10));
  const int reps = std::max(1, args.Int("--reps", args.quick ? 1 : 5));
  ThroughputRunOptions options;
  options.product_binary = args.Str("--extender", BesideSelf("../extender/capacity-extender"));
  options.go_noop_binary = args.Str("--noop-extender", BesideSelf("noop-extender"));
  options.work_dir = args.Str("--work-dir", "out/bench/throughput_bench");
  options.run_timeout = std::chrono::seconds(args.Int("--run-timeout", 120));
  options.settle = std::chrono::milliseconds(args.Int("--settle-ms", 1000));
  options.scheduler_qps = std::max(0, args.Int("--scheduler-qps", 1000));
  Report report("throughput_bench");

  const std::string unavailable = test::RealControlPlane::Unavailable();
  if (!unavailable.empty()) {
    std::printf("throughput_bench: skipped, no real control plane here: %s\n", unavailable.c_str());
    report.Note("skipped", unavailable);
    report.Write(args.Str("--json", ""));
    return 0;
  }
  std::error_code ec;
  std::filesystem::create_directories(options.work_dir, ec);
  const std::set<std::string> wanted = CommaSet(args.Str("--configs", ""));
  std::vector<ThroughputConfiguration> configurations;
  for (ThroughputConfiguration c : ThroughputConfigurations()) {
    if (wanted.empty() ? c.on_request : !wanted.count(c.name)) continue;
    if (c.kind == ExtenderKind::kGoNoop && access(options.go_noop_binary.c_str(), X_OK) != 0) {
      c.unavailable = "no do-nothing Go extender at " + options.go_noop_binary +
                      " (bench.sh builds it with Debian's golang-go)";
    }
    // The webhook's certificate, made once for every run that needs it.
    if (c.creation == PodCreation::kWebhook && c.unavailable.empty() && !options.webhook_tls.ok()) {
      if (Status s = MakeWebhookTls(options.work_dir + "/webhook-tls", &options.webhook_tls);
          !s.ok()) {
        c.unavailable = "no certificate for the webhook: " + s.message();
      }
    }
    if (!c.unavailable.empty()) {
      std::printf("  not run: %s: %s\n", c.name.c_str(), c.unavailable.c_str());
      report.Note("not_run." + c.name, c.unavailable);
      continue;
    }
    configurations.push_back(c);
  }
  if (configurations.empty()) {
    std::fprintf(stderr, "no configuration to run\n");
    return 2;
  }

  std::printf(
      "throughput: %d fake nodes, %d prequeued pods in %d namespaces with ElasticQuotas, "
      "%d repetitions of %zu configurations, kube-scheduler qps %s; load average %.1f on %ld "
      "cores\n",
      shape.nodes, shape.pods, shape.namespaces, reps, configurations.size(),
      options.scheduler_qps > 0 ? std::to_string(options.scheduler_qps).c_str() : "default (50)",
      LoadAverage1(), sysconf(_SC_NPROCESSORS_ONLN));
  const auto started = std::chrono::steady_clock::now();
  // A fresh control plane per repetition: each repetition starts from the same state. One kept
  // for every run drifted: CPU per pod of kube-apiserver and etcd grew by up to half over 25
  // runs of creating, binding and deleting 3,000 pods (etcd's history and free pages, the API
  // server's watch cache), on a quiet machine.
  std::vector<ThroughputRun> runs;
  for (int rep = 1; rep <= reps; ++rep) {
    const auto setting_up = std::chrono::steady_clock::now();
    test::ControlPlaneOptions plane;
    for (const ThroughputConfiguration& c : configurations)
      if (c.gate_mode()) plane.feature_gates = "PodSchedulingReadiness=true";  // 1.26: alpha
    test::RealControlPlane cluster(plane);
    for (const auto& [what, step] : std::vector<std::pair<const char*, std::function<Status()>>>{
             {"starting etcd and kube-apiserver", [&] { return cluster.Start(); }},
             {"installing deploy/'s CRD and RBAC", [&] { return cluster.InstallExtenderRbac(); }},
             {"creating the namespaces, quotas and nodes",
              [&] { return SetUpThroughputCluster(cluster, shape); }}}) {
      if (Status s = step(); !s.ok()) {
        std::fprintf(stderr, "throughput_bench: %s failed: %s\n", what, s.message().c_str());
        return 1;
      }
    }
    std::printf(
        "  repetition %d: control plane ready in %.0f s\n", rep,
        std::chrono::duration<double>(std::chrono::steady_clock::now() - setting_up).count());
    for (std::size_t i = 0; i < configurations.size(); ++i) {
      const ThroughputConfiguration& c =
          configurations[(i + static_cast<std::size_t>(rep - 1)) % configurations.size()];
      const bool last = i + 1 == configurations.size();  // the control plane goes next
      runs.push_back(
          RunThroughputOnce(cluster, shape, c, options, rep, static_cast<int>(i), !last));
      PrintRun(runs.back());
    }
  }

  PrintWhyTable(runs, configurations);
  PrintCreationTable(runs, configurations);
  std::printf("\nlatencies, all runs of each configuration together:\n");
  for (const ThroughputConfiguration& c : configurations)
    ReportConfiguration(report, runs, c);
  ReportKinds(report, "writes_per_pod",
              PrintKindTable("API writes", runs, configurations,
                             [](const ThroughputRun& r) { return ApiRequestsPerPod(r, true); }));
  ReportKinds(report, "reads_per_pod",
              PrintKindTable("API reads and watches", runs, configurations,
                             [](const ThroughputRun& r) { return ApiRequestsPerPod(r, false); }));
  ReportKinds(report, "etcd_requests_per_pod",
              PrintKindTable("kube-apiserver's requests to etcd", runs, configurations,
                             EtcdRequestsPerPod));
  ReportKinds(report, "etcd_server_per_pod",
              PrintKindTable("etcd's own counters", runs, configurations, EtcdServerPerPod));
  ReportKinds(report, "watch_per_pod",
              PrintKindTable("watch events sent by kube-apiserver", runs, configurations,
                             WatchEventsPerPod));

  // Paired comparisons and issue 24's targets.
  std::printf("\npaired, per repetition (median):\n");
  const RunValue pps = [](const ThroughputRun& r) { return r.pods_per_s; };
  auto has = [&](const std::string& name) { return !RunsOf(runs, name).empty(); };
  for (const ThroughputConfiguration& c : configurations) {
    for (const char* base : {"no-extender", "go-noop"}) {
      if (c.name == base || !has(base)) continue;
      const auto ratios = Paired(runs, c.name, base, pps);
      const int collapsed = CollapsedPairs(runs, c.name, base);
      if (ratios.empty() && collapsed == 0) continue;
      std::printf(
          "  pods/s %s / %s: %.3f (%s; %zu pairs%s)\n", c.name.c_str(), base,
          ratios.empty() ? 0.0 : Median(ratios), Range(ratios, 2).c_str(), ratios.size(),
          collapsed == 0 ? "" : fmt::format(", {} left out: a run collapsed", collapsed).c_str());
      if (ratios.empty()) continue;
      report.Series(fmt::format("ratio.{}/{}", c.name, base), ratios);
      report.Number(fmt::format("ratio.{}/{}.median", c.name, base), Median(ratios));
    }
    // The creation through the webhook against plain pods with no webhook (information).
    if (c.creation == PodCreation::kWebhook && has("no-extender")) {
      const auto ratios = Paired(
          runs, c.name, "no-extender", [](const ThroughputRun& r) { return r.creation_seconds; },
          false, /*collapsed_too=*/true);
      if (!ratios.empty()) {
        std::printf("  creation time %s / no-extender: %.3f (%s; %zu pairs)\n", c.name.c_str(),
                    Median(ratios), Range(ratios, 2).c_str(), ratios.size());
        report.Series(fmt::format("creation_seconds_ratio.{}/no-extender", c.name), ratios);
        report.Number(fmt::format("creation_seconds_ratio.{}/no-extender.median", c.name),
                      Median(ratios));
      }
    }
    if (c.name != "go-noop" && has("go-noop")) {
      const auto extra = Paired(runs, c.name, "go-noop", ApiServerEtcdCpuPerPod, true);
      if (extra.empty()) continue;
      std::printf("  kube-apiserver + etcd CPU ms per pod, %s - go-noop: %+.3f (%s)\n",
                  c.name.c_str(), Median(extra), Range(extra, 2).c_str());
      report.Number(fmt::format("apiserver_etcd_cpu_ms_per_pod.{}-go-noop.median", c.name),
                    Median(extra));
    }
  }
  std::printf("\n");
  int product_runs = 0, product_collapsed = 0;
  // Targets are about the product as it is: not the measurements of designs not built yet.
  for (const ThroughputConfiguration& c : configurations) {
    if (!c.is_product() || c.on_request) continue;
    for (const ThroughputRun* r : RunsOf(runs, c.name)) {
      ++product_runs;
      product_collapsed += r->collapsed ? 1 : 0;
    }
  }
  if (product_runs > 0) {
    report.Note("collapsed_runs_product",
                fmt::format("{} product runs ({} repetitions; issue 24 asks for 10 of each)",
                            product_runs, reps));
    report.Target("collapsed_runs_product", product_collapsed, "<=", 0, "runs");
  }
  auto paired_target = [&](const std::string& key, const std::string& a, const std::string& b,
                           const RunValue& value, bool difference, const std::string& op,
                           double threshold, const std::string& unit) {
    const auto values = Paired(runs, a, b, value, difference);
    if (const int collapsed = CollapsedPairs(runs, a, b); collapsed > 0) {
      report.Note("pairs_left_out." + key,
                  fmt::format("{} of {} repetitions: {} or {} collapsed", collapsed,
                              collapsed + static_cast<int>(values.size()), a, b));
    }
    if (values.empty()) {
      report.Note("not_measured." + key, a + " and " + b + " did not both run healthy");
      return;
    }
    report.Target(key, Median(values), op, threshold, unit);
  };
  paired_target("pods_per_s_product_filter_bind_over_go_noop", "product-filter-bind", "go-noop",
                pps, false, ">=", 1.15, "ratio");
  paired_target("pods_per_s_product_filter_hold_over_go_noop", "product-filter-hold", "go-noop",
                pps, false, ">=", 1.15, "ratio");
  paired_target("pods_per_s_product_full_over_go_noop", "product-full", "go-noop", pps, false,
                ">=", 1.05, "ratio");
  paired_target("apiserver_etcd_cpu_product_filter_bind_minus_go_noop", "product-filter-bind",
                "go-noop", ApiServerEtcdCpuPerPod, true, "<=", 0.1, "ms/pod");
  for (const ThroughputConfiguration& c : configurations) {
    if (!c.is_product() || c.on_request || !has(c.name)) continue;
    report.Target(
        "extender_cpu_" + c.name,
        Median(ValuesOf(RunsOf(runs, c.name),
                        [](const ThroughputRun& r) { return r.PerPod(r.cpu_ms_extender); })),
        "<=", 0.4, "ms/pod");
  }
  paired_target("pods_per_s_gate_over_no_extender", "product-gate", "no-extender", pps, false,
                ">=", 0.9, "ratio");
  // Gate mode's path of pods that waited (one gate removal each): information, no target.
  if (const auto lift = Paired(runs, "product-gate-lift", "no-extender", pps); !lift.empty()) {
    std::printf("  INFO   %-48s %12.2f ratio (%s; no target)\n",
                "pods_per_s_gate_lift_over_no_extender", Median(lift), Range(lift, 2).c_str());
    report.Number("pods_per_s_gate_lift_over_no_extender", Median(lift));
  }
  report.Note("shape",
              fmt::format("{} nodes, {} pods, {} namespaces, {} repetitions, kube-scheduler qps {}",
                          shape.nodes, shape.pods, shape.namespaces, reps,
                          options.scheduler_qps > 0 ? std::to_string(options.scheduler_qps)
                                                    : std::string("default")));
  report.Note("logs", options.work_dir);
  report.Write(args.Str("--json", ""));
  std::printf("%zu runs in %.0f s; logs in %s\n", runs.size(),
              std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count(),
              options.work_dir.c_str());
  for (const ThroughputRun& r : runs)
    if (!r.ok) return 1;
  return 0;
}

}  // namespace
}  // namespace capext::bench

int main(int argc, char** argv) {
  return capext::bench::Main(argc, argv);
}
