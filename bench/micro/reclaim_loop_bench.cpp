// What the reclaim loop costs with many pending quota pods (issue 14): 5,000 nodes with 20
// running pods each, 8 team quotas whose mins are exactly their usage (so the cluster-wide sum of
// mins is reached), and 20,000 pending 1-cpu pods that the sum of mins rejects (QuotaExceeded).
// In-process: a SchedulerCache, the ReclaimController with no-op evictor and nudger, and an
// EventRecorder writing to a no-op sink. Times are the calling thread's CPU time.
//   (a) the first passes (every pod planned once; with a per-pass budget, several passes);
//   (b) at rest: passes with nothing changing -> CPU per second at the default 1 s interval,
//       and a flush of the events thread;
//   (c) one change at a time: a pending pod's spec, a pending pod added, one quota's max, one
//       running quota pod replaced by a pending one (the sum of used moves twice), one node's
//       allocatable, a resync of every pending pod; each is followed by passes until nothing is
//       queued: pods planned, passes, CPU, requeue nudges.
// Each runs twice (--fair-sharing both, the default): as configured by default, then with
// fairSharing on (issue 22: every pending pod borrows, so the controller plans each by the
// cross-node search with reclaim between borrowers, which computes every quota's fairness;
// report keys "fair.*").
// Target: (b), its passes and events flushes together, at most 2% of one core, in both runs.
// Usage: kUsage.
#include <algorithm>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "bench/micro/bench_support.h"
#include "extender/log.h"
#include "extender/reclaim/event_recorder.h"
#include "extender/reclaim/reclaim_controller.h"
#include "extender/scheduler_cache.h"

namespace capext::bench {
namespace {

constexpr char kUsage[] =
    "bench_reclaim_loop_bench [--nodes N] [--pods-per-node N] [--pending N] [--rest-passes N]\n"
    "  [--max-pods-per-pass N] [--fair-sharing both|on|off] [--quick] [--json FILE]";

class NullEvictor final : public Evictor {
 public:
  EvictOutcome Evict(const Pod&, const std::string&) override {
    ++calls;
    return {true, false, ""};
  }
  int calls = 0;
};

class CountingNudger final : public RequeueNudger {
 public:
  bool Nudge(const Pod&) override {
    ++calls;
    return true;
  }
  int calls = 0;
};

class NullSink final : public EventSink {
 public:
  EventWriteResult Create(const EventObject&) override { return {}; }
  EventWriteResult PatchSeries(const std::string&, const std::string&, int32_t, int64_t) override {
    return {};
  }
};

// The per-pass budget and the pass statistics exist only in the event-driven controller; the
// benchmark also builds against the loop that plans everything (the "before" numbers).
template <typename Options>
void SetBudget(Options& options, std::size_t pods) {
  if constexpr (requires { options.max_pods_per_pass; }) options.max_pods_per_pass = pods;
}
template <typename Controller>
std::size_t Planned(const Controller& c, std::size_t everyone) {
  if constexpr (requires { c.last_pass(); }) {
    return c.last_pass().planned.size();
  } else {
    return everyone;
  }
}
template <typename Controller>
std::size_t Backlog(const Controller& c) {
  if constexpr (requires { c.last_pass(); }) {
    return c.last_pass().backlog;
  } else {
    return 0;
  }
}

Pod PendingPod(int i, int quotas, int64_t created_ms, int64_t cpu_milli = 1000) {
  Pod pod;
  pod.ns = TeamNamespace(i % quotas);
  pod.name = fmt::format("trainer-{:06}-7d9f8c6b5-x2k4p", i);
  pod.uid = Uid(0xa0a0a0a0, static_cast<uint64_t>(i));
  pod.scheduler_name = "capacity-scheduler";
  pod.creation_ms = created_ms;
  pod.requests.Set("cpu", cpu_milli);
  pod.requests.Set("memory", int64_t{4} << 30);
  pod.requests.Set("pods", 1);
  pod.unschedulable_condition = true;
  pod.tolerations = DefaultTolerations();
  return pod;
}

struct Drain {
  std::size_t passes = 0;
  std::size_t planned = 0;
  double cpu_us = 0;
};

}  // namespace

// One run of the scenario, with fair sharing on or off (reclaim between borrowers: every pending
// pod borrows, so each is planned by the cross-node search with fairness, which computes the
// shares); report keys and printed lines start with `prefix`.
void RunScenario(const Args& args, bool fair, Report& report) {
  const std::string prefix = fair ? "fair." : "";
  const char* label = fair ? "[fairSharing] " : "";
  ClusterShape shape;
  shape.nodes = static_cast<int>(args.Int("--nodes", args.quick ? 1000 : 5000));
  shape.pods_per_node = static_cast<int>(args.Int("--pods-per-node", 20));
  const int pending = static_cast<int>(args.Int("--pending", args.quick ? 4000 : 20'000));
  const int rest_passes = static_cast<int>(args.Int("--rest-passes", args.quick ? 5 : 10));
  const auto budget = static_cast<std::size_t>(args.Int("--max-pods-per-pass", 500));

  int64_t now_ms = 1'800'000'000'000;
  const int64_t created_ms = now_ms - 3'600'000;  // the pending pods', an hour ago
  SchedulerCache cache(QuotaSemantics::kCapacityExtender, {}, [&] { return now_ms; });
  cache.set_ready(true);
  cache.Write([&](ClusterState& state) {
    BuildCluster(state, shape);
    // Each team's min is exactly what it uses (team-3 and team-7 run nothing: min 0), its max
    // well above: the sum of mins is reached, so every pending pod is rejected by the
    // cluster-wide rule (and, priority 0 like the running pods, has no victim).
    for (int k = 0; k < shape.quotas; ++k) {
      ElasticQuota q = MakeTeamQuota(k, shape);
      const int64_t used = state.Used(q.ns).Get("cpu");
      q.min = ResourceList{{"cpu", used}};
      q.max = ResourceList{{"cpu", std::max<int64_t>(2 * used, shape.node_cpu_milli)}};
      state.UpsertQuota(q);
    }
    for (int i = 0; i < pending; ++i)
      state.UpsertPod(PendingPod(i, shape.quotas, created_ms + i));
    return 0;
  });
  std::printf("%scluster: %d nodes, %d running pods, %d quotas, %d pending quota pods\n", label,
              shape.nodes, shape.nodes * shape.pods_per_node, shape.quotas, pending);

  Metrics metrics;
  NullEvictor evictor;
  CountingNudger nudger;
  NullSink sink;
  EventRecorderOptions event_options;
  event_options.refresh_interval_ms = 30'000;
  EventRecorder recorder(event_options);
  ReclaimControllerOptions options;
  if constexpr (requires { options.fair_sharing; }) options.fair_sharing = fair;
  SetBudget(options, budget);
  ReclaimController controller(&cache, &metrics, PriorityThenStartTimeOrder(), &evictor, &nudger,
                               options);
  controller.RecordEvents(&recorder, &sink);

  auto pass = [&] {
    now_ms += options.interval_ms;
    Stopwatch watch;
    controller.RunOnce();
    return watch.CpuMicros();
  };
  // Passes until nothing is queued (one pass for the loop that plans everything).
  auto drain = [&] {
    Drain d;
    do {
      d.cpu_us += pass();
      ++d.passes;
      d.planned += Planned(controller, static_cast<std::size_t>(pending));
    } while (Backlog(controller) > 0 && d.passes < 10'000);
    return d;
  };

  // (a) First passes.
  const Drain first = drain();
  std::printf("%sfirst: %zu pods planned in %zu passes, %.1f ms CPU (%.1f us per pod)\n", label,
              first.planned, first.passes, first.cpu_us / 1000,
              first.cpu_us / static_cast<double>(std::max<std::size_t>(first.planned, 1)));
  report.Number(prefix + "first.passes", static_cast<double>(first.passes));
  report.Number(prefix + "first.planned", static_cast<double>(first.planned));
  report.Number(prefix + "first.cpu_ms", first.cpu_us / 1000);
  report.Number(prefix + "first.cpu_us_per_pod",
                first.cpu_us / static_cast<double>(std::max<std::size_t>(first.planned, 1)));
  {
    Stopwatch watch;
    controller.FlushEvents();
    report.Number(prefix + "first.flush_cpu_ms", watch.CpuMicros() / 1000);
  }

  // (b) At rest.
  std::vector<double> rest, flush;
  std::size_t rest_planned = 0;
  for (int i = 0; i < rest_passes; ++i) {
    rest.push_back(pass());
    rest_planned += Planned(controller, static_cast<std::size_t>(pending));
    Stopwatch watch;
    controller.FlushEvents();
    flush.push_back(watch.CpuMicros());
  }
  const Summary rest_summary = Summarize(rest);
  const Summary flush_summary = Summarize(flush);
  double rest_mean = 0;
  for (double v : rest)
    rest_mean += v / static_cast<double>(rest.size());
  double flush_mean = 0;
  for (double v : flush)
    flush_mean += v / static_cast<double>(flush.size());
  // CPU per second: one pass per interval, two flushes per second (event_flush_interval 500 ms).
  const double loop_share = rest_mean / (1000.0 * static_cast<double>(options.interval_ms));
  const double events_share = flush_mean * (1000.0 / options.event_flush_interval_ms) / 1e6;
  std::printf(
      "%srest: pass %.1f us CPU (p99 %.1f), %zu pods planned in %d passes; events flush %.1f "
      "us\n",
      label, rest_mean, rest_summary.p99, rest_planned, rest_passes, flush_mean);
  report.Number(prefix + "rest.pass_cpu_us_mean", rest_mean);
  report.Latency(prefix + "rest.pass_cpu", rest_summary);
  report.Number(prefix + "rest.planned_per_pass",
                static_cast<double>(rest_planned) / static_cast<double>(rest_passes));
  report.Number(prefix + "rest.flush_cpu_us_mean", flush_mean);
  report.Latency(prefix + "rest.flush_cpu", flush_summary);
  report.Number(prefix + "rest.loop_core_percent", 100 * loop_share);
  report.Number(prefix + "rest.events_core_percent", 100 * events_share);

  // (c) One change at a time, then passes until nothing is queued. `then`, when given, runs
  // after the first pass: what kube-scheduler does meanwhile.
  auto change = [&](const char* name, auto&& mutate, std::function<void(ClusterState&)> then = {}) {
    cache.Write([&](ClusterState& state) {
      mutate(state);
      return 0;
    });
    const int nudges_before = nudger.calls;
    Drain d;
    d.cpu_us = pass();
    d.passes = 1;
    d.planned = Planned(controller, static_cast<std::size_t>(pending));
    if (then) {
      cache.Write([&](ClusterState& state) {
        then(state);
        return 0;
      });
    }
    if (then || Backlog(controller) > 0) {
      const Drain rest = drain();
      d.cpu_us += rest.cpu_us;
      d.passes += rest.passes;
      d.planned += rest.planned;
    }
    std::printf("%schange %-22s %6zu pods planned in %3zu passes, %9.1f ms CPU, %d nudges\n", label,
                name, d.planned, d.passes, d.cpu_us / 1000, nudger.calls - nudges_before);
    const std::string key = prefix + "change." + name;
    report.Number(key + ".planned", static_cast<double>(d.planned));
    report.Number(key + ".passes", static_cast<double>(d.passes));
    report.Number(key + ".cpu_ms", d.cpu_us / 1000);
    report.Number(key + ".nudges", nudger.calls - nudges_before);
  };
  change("pending_pod_spec",
         [&](ClusterState& s) { s.UpsertPod(PendingPod(7, shape.quotas, created_ms + 7, 2000)); });
  change("pending_pod_added",
         [&](ClusterState& s) { s.UpsertPod(PendingPod(pending, shape.quotas, now_ms)); });
  // A max moves only its quota's verdicts: team-3's pending pods.
  change("quota_max", [&](ClusterState& s) {
    ElasticQuota q = *s.QuotaFor(TeamNamespace(3));
    q.max->Set("cpu", q.max->Get("cpu") + 1000);
    s.UpsertQuota(q);
  });
  // A running pod ends: each pending pod alone fits its room now (Fits, nudged); kube-scheduler
  // binds one there after the first pass, and the sum of mins keeps the others out again.
  change(
      "running_pod_replaced",
      [&](ClusterState& s) { s.DeletePod(Uid(0xb0b0b0b0, 0)); },  // team-0's, on node 0
      [&](ClusterState& s) {
        Pod pod = PendingPod(0, shape.quotas, created_ms);
        pod.node_name = NodeName(0);
        pod.phase = PodPhase::kRunning;
        pod.unschedulable_condition = false;
        s.UpsertPod(pod);
      });
  // Room on a node: every pod waiting for any node (all of them: no victim anywhere).
  change("node_allocatable", [&](ClusterState& s) {
    Node node = MakeBenchNode(42, shape);
    node.allocatable.Set("cpu", shape.node_cpu_milli + 1000);
    s.UpsertNode(node);
  });
  // A watch resync: the same pods again; nothing a decision reads changed.
  change("resync_no_change", [&](ClusterState& s) {
    for (int i = 1; i < pending; ++i)
      s.UpsertPod(PendingPod(i, shape.quotas, created_ms + i, i == 7 ? 2000 : 1000));
  });

  report.Number(prefix + "nodes", shape.nodes);
  report.Number(prefix + "pending", pending);
  report.Number(prefix + "max_pods_per_pass", static_cast<double>(budget));
  // The reclaim machinery at rest: the loop's passes and the events thread's flushes.
  report.Target(prefix + "rest.loop_and_events_core_percent", 100 * (loop_share + events_share),
                "<=", 2, "%");
}

}  // namespace capext::bench

int main(int argc, char** argv) {
  using namespace capext;
  using namespace capext::bench;
  Args args = Args::Parse(argc, argv, kUsage);
  ConfigureLog("logfmt", "error");
  Report report("reclaim_loop_bench");
  const std::string fair = args.Str("--fair-sharing", "both");
  if (fair != "on") RunScenario(args, false, report);
  if (fair != "off") RunScenario(args, true, report);
  report.Write(args.Str("--json", ""));
  return 0;
}
