// Tests of the reclaim controller's verdicts (extender/reclaim/reclaim_controller_events.cpp and
// the verdicts ReclaimFor reaches): what the PendingBoard says about each pending quota pod, the
// Warning Events written for the verdicts kube-scheduler cannot show, the reclaim history and the
// time-to-bind histogram. The harness of reclaim_harness.h, with a recording event sink.
#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "tests/extender/reclaim/reclaim_harness.h"

namespace capext {
namespace reclaim_controller_events_test {
namespace {

using namespace reclaim_testing;  // NOLINT: the harness of this folder

EventRecorderOptions FastRefresh() {
  EventRecorderOptions o;
  o.refresh_interval_ms = 10'000;
  return o;
}

// eq1/big: 5 cpu, over eq1's max (8 used + 5 > 10), and no node has 5 cpu free.
void AddBig(Harness& h) {
  h.Add(MakePod("eq1", "big").Uid("u-big").Cpu(5000).Created(kStartMs - 60'000));
}

TEST_CASE("verdicts: over max and behind the sum of mins are QuotaExceeded, with the numbers",
          "[reclaim][events]") {
  Harness h;
  h.RecordEvents(FastRefresh());
  LoadSeed002(h);
  h.cache.Write([](ClusterState& s) {
    s.DeletePod("u-job-2");  // nothing reclaimed: the usage stays as loaded
    return 0;
  });
  AddBig(h);
  // eq2/wide: 8 cpu, within eq2's max (3 + 8 <= 14) but Σused 11 + 8 > Σmin 18; no node has
  // 8 cpu even after every eviction reclaim may make.
  h.Add(MakePod("eq2", "wide").Uid("u-wide").Cpu(8000).Created(kStartMs - 30'000));
  REQUIRE(h.controller->RunOnce() == 0);

  auto big = h.Verdict("u-big");
  REQUIRE(big);
  CHECK(big->verdict.code == VerdictCode::kQuotaExceeded);
  CHECK(big->verdict.message ==
        "pod eq1/big rejected: ElasticQuota eq1/eq1 would exceed max: cpu used 8 + request 5 > max "
        "10");
  CHECK(big->quota == "eq1/eq1");
  CHECK(big->creation_ms == kStartMs - 60'000);
  CHECK(big->verdict.reclaim == ReclaimState::kNone);

  auto wide = h.Verdict("u-wide");
  REQUIRE(wide);
  CHECK(wide->verdict.code == VerdictCode::kQuotaExceeded);
  CHECK(wide->verdict.message ==
        "pod eq2/wide rejected: total ElasticQuota usage would exceed the sum of all mins: cpu "
        "used 11 + request 8 > min 18");

  // One Event per pod, reason and message as on the board.
  h.controller->FlushEvents();
  REQUIRE(h.sink.creates.size() == 2);
  std::map<std::string, EventObject> by_pod;
  for (const auto& e : h.sink.creates)
    by_pod[e.pod_name] = e;
  CHECK(by_pod["big"].reason == "QuotaExceeded");
  CHECK(by_pod["big"].action == "QuotaCheck");
  CHECK(by_pod["big"].type == "Warning");
  CHECK(by_pod["big"].note == big->verdict.message);
  CHECK(by_pod["wide"].reason == "QuotaExceeded");
  CHECK(by_pod["wide"].note == wide->verdict.message);
}

TEST_CASE("verdicts: a reclaim in flight is WaitingForReclaim, judged the same on every pass",
          "[reclaim][events]") {
  Harness h;
  h.RecordEvents(FastRefresh());
  LoadSeed002(h);
  h.evictor.delete_victims = false;  // the victim lingers in its grace period
  REQUIRE(h.controller->RunOnce() == 1);
  auto job2 = h.Verdict("u-job-2");
  REQUIRE(job2);
  CHECK(job2->verdict.code == VerdictCode::kWaitingForReclaim);
  CHECK(job2->verdict.reclaim == ReclaimState::kInFlight);
  CHECK(job2->verdict.node == "n2");
  CHECK(job2->verdict.victims == std::vector<std::string>{"eq1/job-b"});
  CHECK(job2->verdict.reclaim_started_ms == kStartMs);
  CHECK(job2->verdict.message ==
        "reclaim for pod eq2/job-2 in progress: evicted eq1/job-b on node n2; the room there is "
        "held for this pod until it binds");
  h.controller->FlushEvents();
  // The pod's verdict, then the Event on the victim naming the pod it made room for.
  REQUIRE(h.sink.creates.size() == 2);
  CHECK(h.sink.creates[0].reason == "WaitingForReclaim");
  CHECK(h.sink.creates[0].action == "Reclaim");
  CHECK(h.sink.creates[1].reason == "Reclaimed");
  CHECK(h.sink.creates[1].pod_name == "job-b");
  CHECK(h.sink.creates[1].note.find("for pod eq2/job-2") != std::string::npos);

  // The next passes find the nomination in force: the same verdict, nothing new written.
  for (int i = 0; i < 5; ++i) {
    h.now += 1000;
    h.controller->RunOnce();
    h.controller->FlushEvents();
  }
  CHECK(h.sink.creates.size() == 2);
  auto again = h.Verdict("u-job-2");
  REQUIRE(again);
  CHECK(again->verdict.message == job2->verdict.message);
  CHECK(again->verdict.victims == job2->verdict.victims);
}

TEST_CASE("verdicts: series keep counting without planning; bound pods get nothing more",
          "[reclaim][events]") {
  Harness h;
  h.RecordEvents(FastRefresh());
  LoadSeed002(h);
  AddBig(h);
  h.controller->RunOnce();
  h.controller->FlushEvents();
  REQUIRE(h.sink.creates.size() == 3);  // two verdicts and the victim's Reclaimed, once
  // No RunOnce for a minute (an event-driven loop with nothing changing): refreshes only.
  for (int i = 1; i <= 6; ++i) {
    h.now += 10'000;
    h.controller->FlushEvents();
  }
  CHECK(h.sink.creates.size() == 3);
  for (const auto& [name, stored] : h.sink.stored)
    CHECK(stored.count == (stored.event.reason == "Reclaimed" ? 1 : 7));

  // big is bound (someone raised the max): forgotten at the next flush, even before a RunOnce.
  const int64_t patches = static_cast<int64_t>(h.sink.patches.size());
  h.cache.Write([&](ClusterState& s) {
    s.UpsertPod(MakePod("eq1", "big").Uid("u-big").Cpu(5000).BoundTo("n1"));
    return 0;
  });
  h.now += 10'000;
  h.controller->FlushEvents();
  for (std::size_t i = static_cast<std::size_t>(patches); i < h.sink.patches.size(); ++i)
    CHECK(h.sink.patches[i].name.rfind("big.", 0) != 0);
  h.controller->RunOnce();
  CHECK_FALSE(h.Verdict("u-big"));
  CHECK(h.Verdict("u-job-2"));
}

TEST_CASE(
    "verdicts: every candidate refused by a PDB is one ReclaimRefused Event that keeps counting",
    "[reclaim][events]") {
  ReclaimControllerOptions options;
  options.refusal_backoff_ms = 5'000;
  options.max_refusal_backoff_ms = 20'000;
  Harness h(options);
  h.RecordEvents(FastRefresh());
  LoadSeed002(h);
  h.evictor.refuse = {"eq1/job-b"};
  h.controller->RunOnce();
  h.controller->FlushEvents();
  auto job2 = h.Verdict("u-job-2");
  REQUIRE(job2);
  CHECK(job2->verdict.code == VerdictCode::kReclaimRefused);
  CHECK(job2->verdict.reclaim == ReclaimState::kBackoff);
  CHECK(job2->verdict.retry_at_ms == kStartMs + 5'000);
  CHECK(job2->verdict.victims == std::vector<std::string>{"eq1/job-b"});
  const std::string message = job2->verdict.message;
  CHECK(message ==
        "reclaim for pod eq2/job-2 refused: every candidate's eviction was refused by a "
        "PodDisruptionBudget (eq1/job-b on node n2: Cannot evict pod: PDB); retrying with "
        "backoff");
  REQUIRE(h.sink.creates.size() == 1);
  CHECK(h.sink.creates[0].reason == "ReclaimRefused");

  // Two minutes of refuse, wait, retry (5, 10, 20, 20, ... s), planned every second and
  // flushed every second: one Event, the same reason and message throughout, a growing count.
  std::size_t retries = 0;
  for (int second = 1; second <= 120; ++second) {
    h.now += 1000;
    h.controller->RunOnce();
    h.controller->FlushEvents();
    auto v = h.Verdict("u-job-2");
    REQUIRE(v);
    CHECK(v->verdict.code == VerdictCode::kReclaimRefused);
    CHECK(v->verdict.message == message);
    retries = h.evictor.calls.size();
  }
  CHECK(retries >= 6);
  CHECK(h.sink.creates.size() == 1);
  const auto& stored = h.sink.stored.at(h.sink.creates[0].name);
  CHECK(stored.count == 13);  // created, then refreshed every 10 s
}

TEST_CASE("verdicts: evictions failing for another reason back off as ReclaimBackoff",
          "[reclaim][events]") {
  Harness h;
  LoadSeed002(h);
  h.evictor.fail = {"eq1/job-b"};
  h.controller->RunOnce();
  auto job2 = h.Verdict("u-job-2");
  REQUIRE(job2);
  CHECK(job2->verdict.code == VerdictCode::kReclaimBackoff);
  CHECK(job2->verdict.reclaim == ReclaimState::kBackoff);
  CHECK(job2->verdict.message ==
        "reclaim for pod eq2/job-2 waits: every candidate's eviction failed (eq1/job-b on node "
        "n2: HTTP 500 InternalError: boom); retrying with backoff");
}

TEST_CASE("verdicts: a reclaim held back by the eviction rate limit is ReclaimRefused",
          "[reclaim][events]") {
  ReclaimControllerOptions options;
  options.max_evictions_per_second = 1;
  Harness h(options);
  LoadTwoReclaims(h, 2);
  CHECK(h.controller->RunOnce() == 1);
  auto p2 = h.Verdict("uid-eq2-p2");
  REQUIRE(p2);
  CHECK(p2->verdict.code == VerdictCode::kReclaimRefused);
  CHECK(p2->verdict.reclaim == ReclaimState::kRefused);
  CHECK(p2->verdict.message ==
        "reclaim for pod eq2/p2 postponed by the eviction rate limit (1 per second cluster-wide, "
        "30 per minute per namespace): it would evict eq1/a3 on node n1");
}

TEST_CASE("verdicts: live mode waits for kube-scheduler's first try; no Event before it",
          "[reclaim][events]") {
  ReclaimControllerOptions options;
  options.require_unschedulable_condition = true;
  Harness h(options);
  h.RecordEvents(FastRefresh());
  LoadSeed002(h);
  h.controller->RunOnce();
  h.controller->FlushEvents();
  auto job2 = h.Verdict("u-job-2");
  REQUIRE(job2);
  CHECK(job2->verdict.code == VerdictCode::kAwaitingScheduler);
  CHECK(h.sink.creates.empty());
  CHECK(h.evictor.calls.empty());
}

TEST_CASE("verdicts: a pod that fits is Fits and writes no Event; reclaim off still judges",
          "[reclaim][events]") {
  ReclaimControllerOptions options;
  options.mode = ReclaimMode::kOff;
  Harness h(options);
  h.RecordEvents(FastRefresh());
  LoadSeed002(h);
  AddBig(h);
  h.Add(MakePod("eq2", "small").Uid("u-small").Cpu(1000).Created(kStartMs));
  h.controller->RunOnce();
  h.controller->FlushEvents();
  CHECK(h.Verdict("u-small")->verdict.code == VerdictCode::kFits);
  CHECK(h.Verdict("u-small")->verdict.message ==
        "a node and the quota take it now: kube-scheduler will place it");
  CHECK(h.Verdict("u-big")->verdict.code == VerdictCode::kQuotaExceeded);
  auto job2 = h.Verdict("u-job-2");
  CHECK(job2->verdict.code == VerdictCode::kUnschedulable);
  CHECK(job2->verdict.message == "no node fits and reclaim cannot make room: reclaim is off");
  REQUIRE(h.sink.creates.size() == 1);
  CHECK(h.sink.creates[0].pod_name == "big");
}

TEST_CASE("reclaim history: outcome and time to bind; the histogram of /metrics",
          "[reclaim][events]") {
  Harness h;
  LoadSeed002(h);
  REQUIRE(h.controller->RunOnce() == 1);
  h.now += 2'500;
  h.cache.Write([&](ClusterState& s) {
    s.UpsertPod(MakePod("eq2", "job-2").Uid("u-job-2").Cpu(5000).BoundTo("n2"));
    return 0;
  });
  h.controller->RunOnce();
  const auto snapshot = h.controller->board().Take();
  REQUIRE(snapshot.reclaims.size() == 1);
  const auto& r = snapshot.reclaims[0];
  CHECK(r.pod == "eq2/job-2");
  CHECK(r.node == "n2");
  CHECK(r.victims == std::vector<std::string>{"eq1/job-b"});
  CHECK(r.outcome == "bound");
  CHECK(r.ended_ms - r.started_ms == 2'500);
  CHECK(snapshot.pending.empty());
  const std::string metrics = h.metrics.Render();
  CHECK(metrics.find("# TYPE capacity_extender_reclaim_pending_to_bound_seconds histogram") !=
        std::string::npos);
  CHECK(metrics.find("capacity_extender_reclaim_pending_to_bound_seconds_bucket{le=\"1\"} 0") !=
        std::string::npos);
  CHECK(metrics.find("capacity_extender_reclaim_pending_to_bound_seconds_bucket{le=\"2.5\"} 1") !=
        std::string::npos);
  CHECK(metrics.find("capacity_extender_reclaim_pending_to_bound_seconds_bucket{le=\"+Inf\"} 1") !=
        std::string::npos);
  CHECK(metrics.find("capacity_extender_reclaim_pending_to_bound_seconds_sum 2.5") !=
        std::string::npos);
  CHECK(metrics.find("capacity_extender_reclaim_pending_to_bound_seconds_count 1") !=
        std::string::npos);
}

}  // namespace
}  // namespace reclaim_controller_events_test
}  // namespace capext

namespace capext {
namespace reclaim_controller_events_test {
namespace {

TEST_CASE("threads: the reclaim loop, the events thread and /pending readers run together",
          "[reclaim][events][threads]") {
  ReclaimControllerOptions options;
  options.interval_ms = 2;
  options.event_flush_interval_ms = 1;
  Harness h(options);
  EventRecorderOptions events = FastRefresh();
  events.refresh_interval_ms = 5;
  h.RecordEvents(events);
  LoadSeed002(h);
  h.evictor.delete_victims = false;
  AddBig(h);
  h.controller->Start();
  std::atomic<bool> stop{false};
  std::atomic<int> reads{0};
  std::atomic<bool> empty_message{false};
  std::thread reader([&] {
    while (!stop) {
      const auto snapshot = h.controller->board().Take();
      for (const auto& r : snapshot.pending)
        if (r.verdict.message.empty()) empty_message = true;
      h.controller->InFlight();
      ++reads;
    }
  });
  // Pods come and go, and time moves, while both threads work.
  for (int i = 0; i < 200; ++i) {
    h.Add(MakePod("eq1", "w" + std::to_string(i)).Cpu(9000).Created(kStartMs));
    if (i >= 10) {
      h.cache.Write([&](ClusterState& s) {
        s.DeletePod("uid-eq1-w" + std::to_string(i - 10));
        return 0;
      });
    }
    h.now += 3;
    std::this_thread::sleep_for(std::chrono::microseconds(500));
  }
  // Let both loops see the last state, then stop them.
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  stop = true;
  reader.join();
  h.controller->Stop();
  CHECK(reads > 0);
  CHECK_FALSE(empty_message);
  CHECK_FALSE(h.sink.creates.empty());
  CHECK_FALSE(h.sink.patches.empty());
  // Exactly the pending quota pods are on the board: big, job-2 and the last ten.
  const auto snapshot = h.controller->board().Take();
  CHECK(snapshot.pending.size() == 12);
  CHECK(h.recorder->tracked_pods() <= 12);
}

}  // namespace
}  // namespace reclaim_controller_events_test
}  // namespace capext
