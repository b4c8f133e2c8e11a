// One run of bench_throughput_bench: one configuration schedules the prequeued pods once.
//  1. Gate mode as users run it (PodCreation::kWebhook): the product starts first, with its
//     webhook listener; once it is ready (/readyz), its /mutate webhook is registered on
//     kube-apiserver and awaited until the API server calls it (throughput_webhook.h).
//  2. The creation: the pods are created (kube-scheduler is stopped, so none is scheduled yet),
//     plain, or carrying our gate for gate mode's lift path. Its wall time runs from the first
//     POST to the last answer; the CPU of kube-apiserver, etcd and the extender (when it runs
//     already) from the first POST until etcd has had no write for 1 s (at most 30 s), so the
//     work that trails the answers counts; kube-apiserver's /metrics difference over it too.
//     The create responses say how many pods carry our gate and how many the admitted-at
//     annotation; a count other than the configuration's (every pod admitted at creation
//     through the webhook, every pod gated when created gated, neither otherwise) makes the run
//     fail: a broken admission at creation must not look fast.
//  3. Otherwise (PodCreation::kPlain) the extender starts now and, for capacity-extender, lists
//     the pods (/readyz); a settle pause lets the API server finish that work.
//  4. Snapshot: CPU time of kube-apiserver, etcd and the extender (/proc/<pid>/stat), the busy
//     time of the whole machine, the load average, and /metrics of kube-apiserver and etcd.
//  5. The window: kube-scheduler starts (a new process, so all of its CPU is counted), with, for
//     gate mode's lift path (PodCreation::kGated), the product, and its log is followed until
//     every pod has a "Successfully bound pod to node" line. When the log stalls or reports
//     errors (a pod bound by the extender after kube-scheduler gave up on it has no such line),
//     the API server is asked how many pods are still unbound, once a second, until none is. A
//     run that has not bound every pod by --run-timeout ends there. pods/s is the pods bound
//     over the window's length.
//  6. The tail: work that trails the binds (kube-scheduler's Events, which its client posts at
//     its own pace, the extender's status.used patches) goes on until etcd has had no write for
//     1 s (at most 30 s). CPU per pod and the requests per pod count the window and the tail,
//     so a configuration that defers its writes is not credited for it; the window's CPU alone
//     is kept too.
//  7. Snapshot again (CPU first, so the scrapes are outside it), the extender's /metrics; then
//     kube-scheduler and the extender are stopped, the webhook's registration removed (and
//     waited out: with failurePolicy Fail a stale one would refuse the next run's pods) and,
//     unless it was the control plane's last run, the pods and Events deleted.
// A run "collapsed" when kube-scheduler timed out on any extender call (a bind backlog past its
// httpTimeout: retries take over and feed the overload, issue 18) or the run ran out of time.
// Thread-safety: one run at a time.
#pragma once

#include <unistd.h>

#include <chrono>
#include <cmath>
#include <fstream>
#include <string>
#include <thread>

#include "bench/micro/podcost_process_stats.h"
#include "bench/micro/prometheus_text.h"
#include "bench/micro/scheduler_log.h"
#include "bench/micro/throughput_cluster.h"
#include "bench/micro/throughput_extender.h"
#include "bench/micro/throughput_run_record.h"
#include "bench/micro/throughput_webhook.h"

namespace capext::bench {

struct ThroughputRunOptions {
  std::string product_binary;
  std::string go_noop_binary;
  std::string work_dir;  // logs and scratch files of the runs
  std::chrono::seconds run_timeout{120};
  std::chrono::milliseconds settle{1000};
  int scheduler_qps = 0;   // kube-scheduler's clientConnection qps and burst; 0: its defaults
  WebhookTls webhook_tls;  // the webhook listener's certificate (PodCreation::kWebhook)
};

inline double LoadAverage1() {
  double load = 0;
  std::ifstream("/proc/loadavg") >> load;
  return load;
}

// GET /metrics of etcd (plain HTTP on its client URL); empty on failure.
inline MetricSamples ScrapeEtcd(const std::string& etcd_url) {
  const std::size_t colon = etcd_url.rfind(':');
  if (colon == std::string::npos) return {};
  const auto port = static_cast<uint16_t>(std::atoi(etcd_url.c_str() + colon + 1));
  HttpConnection connection;
  if (!connection.Connect(port)) return {};
  // Without Accept-Encoding: etcd would gzip the answer.
  const std::string request =
      "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1:" + std::to_string(port) + "\r\n\r\n";
  if (connection.RoundTrip(request) != 200) return {};
  return MetricSamples::Parse(connection.body());
}

// etcd's writes so far (puts and deletes), or -1 when etcd cannot be read.
inline double EtcdWrites(const std::string& etcd_url) {
  const MetricSamples now = ScrapeEtcd(etcd_url);
  if (now.empty()) return -1;
  return now.Sum("etcd_mvcc_put_total") + now.Sum("etcd_mvcc_delete_total");
}

// Waits until etcd has had no write for `quiet` (polling every 250 ms), at most `limit`.
inline void WaitForEtcdQuiet(const std::string& etcd_url, std::chrono::milliseconds quiet,
                             std::chrono::milliseconds limit) {
  using Clock = std::chrono::steady_clock;
  const Clock::time_point deadline = Clock::now() + limit;
  double last = EtcdWrites(etcd_url);
  Clock::time_point since = Clock::now();
  while (Clock::now() < deadline && Clock::now() - since < quiet) {
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
    const double now = EtcdWrites(etcd_url);
    if (now != last) {
      last = now;
      since = Clock::now();
    }
  }
}

inline MetricSamples ScrapeApiServer(test::RealControlPlane& cluster) {
  const kube::RestResponse metrics = cluster.api().Get("/metrics");
  return metrics.ok() ? MetricSamples::Parse(metrics.body) : MetricSamples{};
}

// Why the create responses of `configuration`'s pods are not what it must get, or "" when they
// are: through the webhook every quota admits every pod, so every pod must come back admitted
// at creation and none gated; created gated, every pod keeps the gate (the API server keeps
// spec.schedulingGates); plain pods get neither.
inline std::string UnexpectedCreation(const ThroughputConfiguration& configuration, int pods,
                                      const PodCreationOutcome& outcome) {
  int gated = 0, admitted = 0;  // what the configuration must get
  std::string why;
  switch (configuration.creation) {
    case PodCreation::kWebhook:
      admitted = pods;
      why =
          "every pod should have been admitted at creation by /mutate, none gated "
          "(docs/workloads-live.md#admission-at-creation)";
      break;
    case PodCreation::kGated:
      gated = pods;
      why = "every pod was created carrying the gate";
      break;
    case PodCreation::kPlain:
      why = "the pods were created plain, without a webhook";
      break;
  }
  if (outcome.gated == gated && outcome.admitted == admitted && outcome.unreadable == 0) return "";
  return fmt::format(
      "{} of {} pods came back gated, {} admitted at creation{}: {}", outcome.gated, pods,
      outcome.admitted,
      outcome.unreadable == 0 ? "" : fmt::format(", {} answers unreadable", outcome.unreadable),
      why);
}

// Runs `configuration` once on `cluster` (etcd and kube-apiserver up, kube-scheduler stopped,
// the namespaces, quotas and nodes of `shape` in place, no pod left).
inline ThroughputRun RunThroughputOnce(test::RealControlPlane& cluster,
                                       const ThroughputShape& shape,
                                       const ThroughputConfiguration& configuration,
                                       const ThroughputRunOptions& options, int repetition,
                                       int position, bool clean_up = true) {
  using Clock = std::chrono::steady_clock;
  ThroughputRun run;
  run.configuration = configuration.name;
  run.repetition = repetition;
  run.position = position;
  run.pods = shape.pods;
  const std::string prefix =
      options.work_dir + "/rep" + std::to_string(repetition) + "-" + configuration.name;

  ThroughputExtender extender;
  MutatingWebhookRegistration webhook(cluster, ThroughputNamespace(0));
  // Every way out of the run stops what it started: the extender, the webhook's registration
  // (waited out), kube-scheduler, the pods.
  auto give_up = [&](const std::string& error) {
    run.error = error.substr(0, 4000);
    extender.Stop();
    (void)webhook.Remove();
    (void)cluster.StopScheduler();
    (void)DeleteThroughputPods(cluster, shape);
    return run;
  };
  auto launch_extender = [&] {
    return extender.Launch(configuration, cluster, options.product_binary, options.go_noop_binary,
                           options.work_dir, prefix + ".extender.log", &options.webhook_tls);
  };
  auto start_extender = [&] {
    Status s = launch_extender();
    if (s.ok()) s = extender.AwaitReady(configuration);
    return s;
  };

  // 1. Gate mode through the webhook: the product and its registration come first.
  if (configuration.creation == PodCreation::kWebhook) {
    Status s = start_extender();
    // The free port may be taken between its choice and the listener's bind: another try.
    for (int attempt = 1;
         attempt < 3 && !s.ok() &&
         s.message().find("cannot start the webhook listener") != std::string::npos;
         ++attempt) {
      extender.Stop();
      s = start_extender();
    }
    if (s.ok()) s = webhook.Register(extender.webhook_port(), options.webhook_tls);
    if (!s.ok()) return give_up(s.message());
  }

  // 2. The creation.
  const int apiserver_pid = cluster.Pid("kube-apiserver");
  const int etcd_pid = cluster.Pid("etcd");
  {
    const MetricSamples apiserver_before = ScrapeApiServer(cluster);
    const double apiserver_cpu = ProcessCpuMs(apiserver_pid);
    const double etcd_cpu = ProcessCpuMs(etcd_pid);
    const double extender_cpu = extender.pid() > 0 ? ProcessCpuMs(extender.pid()) : 0;
    const Clock::time_point creating = Clock::now();
    std::vector<std::string> created;
    const Status s = CreateThroughputPods(cluster, shape,
                                          configuration.creation == PodCreation::kGated, &created);
    run.creation_seconds = std::chrono::duration<double>(Clock::now() - creating).count();
    WaitForEtcdQuiet(cluster.EtcdUrl(), std::chrono::seconds(1), std::chrono::seconds(30));
    run.creation_cpu_ms_apiserver = ProcessCpuMs(apiserver_pid) - apiserver_cpu;
    run.creation_cpu_ms_etcd = ProcessCpuMs(etcd_pid) - etcd_cpu;
    run.creation_cpu_ms_extender =
        extender.pid() > 0 ? ProcessCpuMs(extender.pid()) - extender_cpu : 0;
    run.creation_apiserver = ScrapeApiServer(cluster).Minus(apiserver_before);
    if (!s.ok()) return give_up("creating the pods: " + s.message());
    const PodCreationOutcome outcome = OutcomeOfCreation(created);
    run.created_gated = outcome.gated;
    run.created_admitted = outcome.admitted;
    if (const std::string wrong = UnexpectedCreation(configuration, shape.pods, outcome);
        !wrong.empty()) {
      return give_up("creating the pods: " + wrong);
    }
  }

  // 3. The other configurations' extender starts on the pods; gate mode's lift path's starts in
  // the window (throughput_configurations.h).
  if (configuration.creation == PodCreation::kPlain) {
    if (Status s = start_extender(); !s.ok()) return give_up(s.message());
  }
  test::SchedulerOptions scheduler;
  if (Status s = DeploySchedulerOptions(configuration, extender.url(), &scheduler); !s.ok()) {
    return give_up(s.message());
  }
  scheduler.client_qps = options.scheduler_qps;
  scheduler.client_burst = options.scheduler_qps;
  std::this_thread::sleep_for(options.settle);

  // 4. The window's snapshot.
  const MetricSamples apiserver_before = ScrapeApiServer(cluster);
  const MetricSamples etcd_before = ScrapeEtcd(cluster.EtcdUrl());
  run.load_before = LoadAverage1();
  const double apiserver_cpu = ProcessCpuMs(apiserver_pid);
  const double etcd_cpu = ProcessCpuMs(etcd_pid);
  const double extender_cpu = extender.pid() > 0 ? ProcessCpuMs(extender.pid()) : 0;
  const double self_cpu = ProcessCpuMs(getpid());
  const double machine_busy = MachineBusyMs();
  const Clock::time_point start = Clock::now();

  // 5. The window. Gate mode's lift path: the extender and kube-scheduler start together (both
  // spawned from this thread, which outlives them; the extender's readiness awaited beside
  // kube-scheduler's start).
  Status gate_started;
  std::thread gate_starter;
  if (configuration.creation == PodCreation::kGated) {
    gate_started = launch_extender();
    if (gate_started.ok())
      gate_starter = std::thread([&] { gate_started = extender.AwaitReady(configuration); });
  }
  Status scheduler_started = cluster.StartScheduler(scheduler);
  if (gate_starter.joinable()) gate_starter.join();
  if (!gate_started.ok() && scheduler_started.ok()) scheduler_started = gate_started;
  if (Status s = scheduler_started; !s.ok()) return give_up(s.message());
  const int scheduler_pid = cluster.Pid("kube-scheduler");
  SchedulerLogReader log(cluster.SchedulerLogPath());
  const Clock::time_point deadline = start + options.run_timeout;
  std::size_t bound_seen = 0;
  Clock::time_point last_progress = Clock::now(), last_api_check = Clock::time_point::min();
  for (;;) {
    const SchedulerLogCounts& counts = log.ReadNew();
    const Clock::time_point now = Clock::now();
    if (counts.bound.size() >= static_cast<std::size_t>(shape.pods)) {
      run.finished = true;
      break;
    }
    if (counts.bound.size() != bound_seen) {
      bound_seen = counts.bound.size();
      last_progress = now;
    }
    const bool in_doubt = counts.errors > 0 || now - last_progress > std::chrono::seconds(2);
    if (in_doubt && now - last_api_check >= std::chrono::seconds(1)) {
      last_api_check = now;
      if (CountThroughputPods(cluster, true) == 0) {
        run.finished = true;
        break;
      }
    }
    if (now >= deadline) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  const Clock::time_point end = Clock::now();
  run.window_cpu_ms_scheduler = ProcessCpuMs(scheduler_pid);
  run.window_cpu_ms_apiserver = ProcessCpuMs(apiserver_pid) - apiserver_cpu;
  run.window_cpu_ms_etcd = ProcessCpuMs(etcd_pid) - etcd_cpu;
  run.window_cpu_ms_extender = extender.pid() > 0 ? ProcessCpuMs(extender.pid()) - extender_cpu : 0;
  const double self_ms = ProcessCpuMs(getpid()) - self_cpu;
  const double busy_ms = MachineBusyMs() - machine_busy;
  run.load_after = LoadAverage1();
  run.seconds = std::chrono::duration<double>(end - start).count();
  run.log = log.ReadNew();
  const int unbound = run.finished ? 0 : CountThroughputPods(cluster, true);
  const int bound = shape.pods - std::max(unbound, 0);
  run.pods_per_s = run.seconds > 0 ? bound / run.seconds : 0;
  run.collapsed = run.log.timeouts > 0 || !run.finished;
  const double ours = run.window_cpu_ms_scheduler + run.window_cpu_ms_apiserver +
                      run.window_cpu_ms_etcd + run.window_cpu_ms_extender + self_ms;
  run.other_cores = run.seconds > 0 ? std::max(0.0, busy_ms - ours) / (run.seconds * 1000) : 0;

  // 6. The tail; 7. the snapshot and the clean-up.
  WaitForEtcdQuiet(cluster.EtcdUrl(), std::chrono::seconds(1), std::chrono::seconds(30));
  run.tail_seconds = std::chrono::duration<double>(Clock::now() - end).count();
  run.cpu_ms_scheduler = ProcessCpuMs(scheduler_pid);
  run.cpu_ms_apiserver = ProcessCpuMs(apiserver_pid) - apiserver_cpu;
  run.cpu_ms_etcd = ProcessCpuMs(etcd_pid) - etcd_cpu;
  run.cpu_ms_extender = extender.pid() > 0 ? ProcessCpuMs(extender.pid()) - extender_cpu : 0;
  run.apiserver = ScrapeApiServer(cluster).Minus(apiserver_before);
  run.etcd = ScrapeEtcd(cluster.EtcdUrl()).Minus(etcd_before);
  if (std::string text; extender.Get("/metrics", &text) == 200) {
    run.extender = MetricSamples::Parse(text);
  }
  run.log = log.ReadNew();
  run.collapsed = run.log.timeouts > 0 || !run.finished;
  run.unbound_at_end = CountThroughputPods(cluster, true);

  // Keep kube-scheduler's log beside the extender's, then clean up for the next run.
  std::ofstream(prefix + ".scheduler.log", std::ios::binary)
      << cluster.Log(cluster.SchedulerLogPath());
  if (Status s = cluster.StopScheduler(); !s.ok()) run.error = s.message();
  extender.Stop();
  if (Status s = webhook.Remove(); !s.ok() && run.error.empty()) run.error = s.message();
  if (!clean_up) {
    run.ok = run.error.empty();
    return run;
  }
  if (Status s = DeleteThroughputPods(cluster, shape); !s.ok()) {
    run.error = "deleting the pods: " + s.message();
    return run;
  }
  run.ok = run.error.empty();
  return run;
}

}  // namespace capext::bench
