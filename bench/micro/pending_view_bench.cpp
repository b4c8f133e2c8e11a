// What GET /pending, GET /quotas, GET /ui and the event recorder cost at issue 12's scale: 300
// quotas and 5,000 pending quota pods (each with a verdict message of real length; a tenth with a
// reclaim in flight or refused, victims named), 100 reclaims in the history.
//   (a) PendingView (the /pending JSON, ~2 MB) and Quotas (/quotas) server time, p50/p99;
//   (b) the whole router answering GET /ui (the embedded page);
//   (c) EventRecorder::Flush with 5,000 series of which none is due (what the events thread
//       does every 500 ms between refreshes), and one refresh round of all 5,000 into a no-op
//       sink (the token buckets set wide open, to time the recorder alone).
// Target: /pending within 50 ms at p99. Usage: see kUsage (--help).
#include <cstdio>
#include <string>
#include <vector>

#include "bench/micro/bench_support.h"
#include "extender/embedded/embedded_binder.h"
#include "extender/log.h"
#include "extender/reclaim/event_recorder.h"
#include "extender/reclaim/pending_board.h"
#include "extender/routes.h"
#include "extender/verbs/pending_view.h"

namespace capext::bench {
namespace {

constexpr char kUsage[] =
    "bench_pending_view_bench [--quotas N] [--pending N] [--iterations N] [--quick] [--json FILE]";

class NullSink final : public EventSink {
 public:
  EventWriteResult Create(const EventObject&) override { return {}; }
  EventWriteResult PatchSeries(const std::string&, const std::string&, int32_t, int64_t) override {
    return {};
  }
};

PendingPodRecord Record(int i, int quotas, int64_t now_ms) {
  PendingPodRecord r;
  r.ns = TeamNamespace(i % quotas);
  r.name = fmt::format("trainer-{:05}-7d9f8c6b5-x2k4p", i);
  r.uid = Uid(7, static_cast<uint64_t>(i));
  r.quota = r.ns + "/" + r.ns;
  r.priority = i % 4 == 0 ? 100 : 0;
  r.creation_ms = now_ms - 1000 * (i % 21'600);
  r.verdict_ms = now_ms - 200;
  PodVerdict& v = r.verdict;
  if (i % 10 == 0) {
    v.code = VerdictCode::kWaitingForReclaim;
    v.reclaim = ReclaimState::kInFlight;
    v.node = NodeName(i % 500);
    v.victims = {"team-7/batch-00001-abc", "team-7/batch-00002-def"};
    v.reclaim_started_ms = now_ms - 3000;
    v.message = verdicts::WaitingForReclaim(r.ns + "/" + r.name, v.victims, v.node);
  } else if (i % 10 == 1) {
    v.code = VerdictCode::kReclaimRefused;
    v.reclaim = ReclaimState::kBackoff;
    v.node = NodeName(i % 500);
    v.victims = {"team-9/batch-00003-ghi"};
    v.retry_at_ms = now_ms + 20'000;
    v.message = verdicts::RefusedByDisruptionBudget(
        r.ns + "/" + r.name,
        {{"team-9/batch-00003-ghi", v.node,
          "HTTP 429 TooManyRequests: Cannot evict pod as it would violate the pod's disruption "
          "budget. (The disruption budget batch needs 4 healthy pods and has 4 currently)"}});
  } else {
    v.code = VerdictCode::kQuotaExceeded;
    v.message = fmt::format(
        "pod {}/{} rejected: ElasticQuota {} would exceed max: cpu used {} + request 4 > max {}",
        r.ns, r.name, r.quota, 60 + i % 7, 64);
  }
  return r;
}

}  // namespace
}  // namespace capext::bench

int main(int argc, char** argv) {
  using namespace capext;
  using namespace capext::bench;
  const Args args = Args::Parse(argc, argv, kUsage);
  ConfigureLog("logfmt", args.Str("--log-level", "warn"));
  const int quotas = args.Int("--quotas", 300);
  const int pending = args.Int("--pending", 5000);
  const int iterations = args.quick ? 20 : args.Int("--iterations", 200);
  const int64_t now_ms = 1'767'225'600'000;
  Report report("pending_view_bench");

  ClusterShape shape;
  shape.quotas = quotas;
  Metrics metrics;
  SchedulerCache cache(QuotaSemantics::kCapacityExtender, {}, [&] { return now_ms; });
  cache.Write([&](ClusterState& state) {
    for (int k = 0; k < quotas; ++k)
      state.UpsertQuota(MakeTeamQuota(k, shape));
    return 0;
  });
  cache.set_ready(true);
  EmbeddedBinder binder(&cache);
  ExtenderService service(&cache, &metrics, NodeScoring::kLeastAllocated,
                          PriorityThenStartTimeOrder(), &binder, ServiceOptions{});
  PendingBoard board(100);
  for (int i = 0; i < pending; ++i)
    board.Set(Record(i, quotas, now_ms));
  for (int i = 0; i < 100; ++i) {
    board.ReclaimStarted({Uid(8, static_cast<uint64_t>(i)),
                          fmt::format("team-1/p{}", i),
                          NodeName(i),
                          {"team-2/v1", "team-2/v2"},
                          "bound",
                          now_ms - 60'000,
                          now_ms - 55'000});
  }
  http::Handler router = MakeRouter(&service, &metrics, {"", Listener::kExtender, &board});

  std::vector<double> pending_us, quotas_us, ui_us;
  std::size_t pending_bytes = 0, quotas_bytes = 0, ui_bytes = 0;
  for (int i = 0; i < iterations + 5; ++i) {
    {
      const Stopwatch w;
      http::Response r = PendingView(board, true, now_ms);
      if (i >= 5) pending_us.push_back(w.WallMicros());
      pending_bytes = r.body.size();
    }
    {
      const Stopwatch w;
      http::Response r = service.Quotas();
      if (i >= 5) quotas_us.push_back(w.WallMicros());
      quotas_bytes = r.body.size();
    }
    {
      http::Request request;
      request.method = "GET";
      request.target = "/ui";
      const Stopwatch w;
      router(std::move(request), [&](http::Response r) { ui_bytes = r.body.size(); });
      if (i >= 5) ui_us.push_back(w.WallMicros());
    }
  }
  std::printf("%d quotas, %d pending pods: /pending %zu bytes, /quotas %zu bytes, /ui %zu bytes\n",
              quotas, pending, pending_bytes, quotas_bytes, ui_bytes);
  const Summary pending_s = Summarize(pending_us);
  const Summary quotas_s = Summarize(quotas_us);
  const Summary ui_s = Summarize(ui_us);
  PrintSummary("PendingView (GET /pending body)", pending_s);
  PrintSummary("ExtenderService::Quotas (GET /quotas body)", quotas_s);
  PrintSummary("router GET /ui", ui_s);

  // The event recorder with 5,000 current series.
  EventRecorderOptions options;
  options.refresh_interval_ms = 30'000;
  options.events_per_second = 1e9;
  options.burst = 1e9;
  options.namespace_events_per_minute = 1e9;
  options.namespace_burst = 1e9;
  EventRecorder recorder(options);
  NullSink sink;
  for (const auto& r : board.Take().pending) {
    recorder.Observe({r.ns, r.name, r.uid}, VerdictName(r.verdict.code),
                     VerdictAction(r.verdict.code), r.verdict.message, now_ms);
  }
  Stopwatch create_round;
  const EventFlushStats created = recorder.Flush(now_ms, sink);
  const double create_us = create_round.WallMicros();
  std::vector<double> idle_us;
  for (int i = 0; i < iterations; ++i) {
    const Stopwatch w;
    recorder.Flush(now_ms + 1000 + i, sink);
    idle_us.push_back(w.WallMicros());
  }
  Stopwatch refresh_round;
  const EventFlushStats refreshed = recorder.Flush(now_ms + 30'000, sink);
  const double refresh_us = refresh_round.WallMicros();
  const Summary idle_s = Summarize(idle_us);
  PrintSummary("EventRecorder::Flush, nothing due", idle_s);
  std::printf("  EventRecorder::Flush creating %d Events: %.1f ms; refreshing %d: %.1f ms\n",
              created.created, create_us / 1000, refreshed.patched, refresh_us / 1000);

  report.Number("quotas", quotas);
  report.Number("pending", pending);
  report.Number("pending_bytes", static_cast<double>(pending_bytes));
  report.Latency("pending_view", pending_s);
  report.Latency("quotas_view", quotas_s);
  report.Latency("ui_route", ui_s);
  report.Latency("event_flush_idle", idle_s);
  report.Number("event_flush_create_all_ms", create_us / 1000);
  report.Number("event_flush_refresh_all_ms", refresh_us / 1000);
  report.Target("pending_p99_ms", pending_s.p99 / 1000.0, "<=", 50.0, "ms");
  report.Target("ui_p99_ms", ui_s.p99 / 1000.0, "<=", 50.0, "ms");
  report.Write(args.Str("--json", ""));
  return 0;
}
