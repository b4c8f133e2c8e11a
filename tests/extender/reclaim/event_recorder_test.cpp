// Tests of the EventRecorder (extender/reclaim/event_recorder.h): event series semantics, the
// refresh that keeps counting while a verdict stays, forgetting bound pods, the token buckets,
// failed and vanished Events. A recording sink and a clock moved by hand.
#include "extender/reclaim/event_recorder.h"

#include <string>

#include <catch2/catch.hpp>

#include "tests/extender/reclaim/reclaim_harness.h"

namespace capext {
namespace event_recorder_test {
namespace {

using reclaim_testing::RecordingEventSink;

constexpr int64_t kT0 = 1'800'000'000'000;
const EventSubject kBig{"eq1", "big", "u-big"};
const std::string kMaxNote =
    "pod eq1/big rejected: ElasticQuota eq1/eq1 would exceed max: cpu used 8 + request 5 > max 10";

EventRecorderOptions Options() {
  EventRecorderOptions o;
  o.reporting_controller = "capacity-extender";
  o.reporting_instance = "capacity-extender-host";
  o.refresh_interval_ms = 10'000;
  o.retry_delay_ms = 2'000;
  return o;
}

TEST_CASE("events: a verdict is created once, with every field of an events.k8s.io/v1 Event",
          "[events]") {
  EventRecorder recorder(Options());
  RecordingEventSink sink;
  recorder.Observe(kBig, "QuotaExceeded", "QuotaCheck", kMaxNote, kT0);
  const EventFlushStats stats = recorder.Flush(kT0 + 100, sink);
  CHECK(stats.created == 1);
  REQUIRE(sink.creates.size() == 1);
  const EventObject& e = sink.creates[0];
  CHECK(e.ns == "eq1");
  CHECK(e.name.rfind("big.", 0) == 0);
  CHECK(e.pod_name == "big");
  CHECK(e.pod_uid == "u-big");
  CHECK(e.type == "Warning");
  CHECK(e.reason == "QuotaExceeded");
  CHECK(e.action == "QuotaCheck");
  CHECK(e.note == kMaxNote);
  CHECK(e.reporting_controller == "capacity-extender");
  CHECK(e.reporting_instance == "capacity-extender-host");
  CHECK(e.event_time_us == kT0 * 1000);  // when the verdict was reached
  CHECK(e.series_count == 0);            // a new Event has no series

  // Observing the same verdict again, however often, writes nothing until the refresh.
  for (int i = 1; i <= 9; ++i) {
    recorder.Observe(kBig, "QuotaExceeded", "QuotaCheck", kMaxNote, kT0 + i * 1000);
    CHECK(recorder.Flush(kT0 + i * 1000 + 100, sink).created == 0);
  }
  CHECK(sink.creates.size() == 1);
  CHECK(sink.patches.empty());
}

TEST_CASE("events: while the verdict stays, its one Event's series grows every refresh interval",
          "[events]") {
  EventRecorder recorder(Options());
  RecordingEventSink sink;
  recorder.Observe(kBig, "QuotaExceeded", "QuotaCheck", kMaxNote, kT0);
  recorder.Flush(kT0, sink);
  REQUIRE(sink.creates.size() == 1);
  const std::string name = sink.creates[0].name;
  // No planning at all after the first verdict: the refresh alone keeps the count growing.
  for (int i = 1; i <= 6; ++i) {
    const int64_t now = kT0 + i * 10'000;
    recorder.Flush(now - 1, sink);  // not due yet
    CHECK(sink.patches.size() == static_cast<std::size_t>(i - 1));
    CHECK(recorder.Flush(now, sink).patched == 1);
    REQUIRE(sink.patches.size() == static_cast<std::size_t>(i));
    CHECK(sink.patches.back().ns == "eq1");
    CHECK(sink.patches.back().name == name);
    CHECK(sink.patches.back().count == i + 1);  // client-go starts a series at 2
    CHECK(sink.patches.back().last_observed_us == now * 1000);
  }
  CHECK(sink.creates.size() == 1);
  CHECK(sink.stored.size() == 1);
  CHECK(sink.stored.at(name).count == 7);
  auto current = recorder.Current("u-big");
  REQUIRE(current);
  CHECK(current->count == 7);
  CHECK(current->event_name == name);
}

TEST_CASE("events: a new message starts a new Event; a verdict that comes back continues its own",
          "[events]") {
  EventRecorder recorder(Options());
  RecordingEventSink sink;
  recorder.Observe(kBig, "QuotaExceeded", "QuotaCheck", kMaxNote, kT0);
  recorder.Flush(kT0, sink);
  const std::string other =
      "pod eq1/big rejected: ElasticQuota eq1/eq1 would exceed max: cpu used 6 + request 5 > max "
      "10";
  recorder.Observe(kBig, "QuotaExceeded", "QuotaCheck", other, kT0 + 1000);
  recorder.Flush(kT0 + 1000, sink);
  REQUIRE(sink.creates.size() == 2);
  CHECK(sink.creates[1].note == other);
  CHECK(sink.creates[0].name != sink.creates[1].name);

  // Back to the first verdict: no third object; its Event is refreshed when due.
  recorder.Observe(kBig, "QuotaExceeded", "QuotaCheck", kMaxNote, kT0 + 2000);
  recorder.Flush(kT0 + 2000, sink);
  CHECK(sink.creates.size() == 2);
  CHECK(sink.patches.empty());
  recorder.Flush(kT0 + 10'000, sink);
  REQUIRE(sink.patches.size() == 1);
  CHECK(sink.patches[0].name == sink.creates[0].name);
  CHECK(sink.patches[0].count == 2);
}

TEST_CASE("events: a quiet verdict stops its series; a bound or deleted pod gets nothing more",
          "[events]") {
  EventRecorder recorder(Options());
  RecordingEventSink sink;
  recorder.Observe(kBig, "QuotaExceeded", "QuotaCheck", kMaxNote, kT0);
  recorder.Flush(kT0, sink);
  SECTION("quiet (it fits now), then the same verdict again") {
    recorder.Quiet("u-big");
    CHECK_FALSE(recorder.Current("u-big"));
    recorder.Flush(kT0 + 60'000, sink);
    CHECK(sink.patches.empty());
    recorder.Observe(kBig, "QuotaExceeded", "QuotaCheck", kMaxNote, kT0 + 61'000);
    recorder.Flush(kT0 + 61'000, sink);
    CHECK(sink.creates.size() == 1);  // the same Event continues
    REQUIRE(sink.patches.size() == 1);
    CHECK(sink.patches[0].count == 2);
  }
  SECTION("forgotten (bound)") {
    recorder.Forget("u-big");
    recorder.Flush(kT0 + 60'000, sink);
    CHECK(sink.patches.empty());
    CHECK(recorder.tracked_pods() == 0);
  }
  SECTION("retained only while pending") {
    recorder.Retain([](const std::string& uid) { return uid != "u-big"; });
    recorder.Flush(kT0 + 60'000, sink);
    CHECK(sink.patches.empty());
  }
}

TEST_CASE("events: a write that is under way when the pod is forgotten changes nothing",
          "[events]") {
  // The sink forgets the pod in the middle of the write, as the reclaim thread would.
  struct ForgettingSink : RecordingEventSink {
    EventRecorder* recorder = nullptr;
    EventWriteResult Create(const EventObject& event) override {
      recorder->Forget(event.pod_uid);
      return RecordingEventSink::Create(event);
    }
  };
  EventRecorder recorder(Options());
  ForgettingSink sink;
  sink.recorder = &recorder;
  recorder.Observe(kBig, "QuotaExceeded", "QuotaCheck", kMaxNote, kT0);
  CHECK(recorder.Flush(kT0, sink).created == 1);
  CHECK(recorder.tracked_pods() == 0);
  recorder.Flush(kT0 + 60'000, sink);
  CHECK(sink.patches.empty());
}

TEST_CASE("events: writes are bounded by the cluster-wide and the per-namespace token buckets",
          "[events]") {
  EventRecorderOptions o = Options();
  o.events_per_second = 2;
  o.burst = 3;
  o.namespace_events_per_minute = 60;
  o.namespace_burst = 2;
  EventRecorder recorder(o);
  RecordingEventSink sink;
  // Three pods in eq1, three in eq2, all with a new verdict at once.
  for (int i = 0; i < 3; ++i) {
    for (const char* ns : {"eq1", "eq2"}) {
      const std::string name = "p" + std::to_string(i);
      recorder.Observe({ns, name, std::string(ns) + "-" + name}, "QuotaExceeded", "QuotaCheck",
                       "note " + name, kT0 + i);
    }
  }
  EventFlushStats first = recorder.Flush(kT0 + 10, sink);
  // The global burst (3) lets three through; eq1's and eq2's bursts (2 each) allow 4.
  CHECK(first.created == 3);
  CHECK(first.deferred == 3);
  int per_namespace[2] = {0, 0};
  for (const auto& e : sink.creates)
    ++per_namespace[e.ns == "eq1" ? 0 : 1];
  CHECK(per_namespace[0] <= 2);
  CHECK(per_namespace[1] <= 2);
  // Half a second later one global token is back, but eq2 (or eq1) is still out of tokens.
  EventFlushStats second = recorder.Flush(kT0 + 510, sink);
  CHECK(second.created == 1);
  // One per-namespace token a second, two global tokens a second: everything is out after 2 s.
  recorder.Flush(kT0 + 1510, sink);
  recorder.Flush(kT0 + 2510, sink);
  CHECK(sink.creates.size() == 6);
  // Each pod got exactly one Event.
  std::set<std::string> uids;
  for (const auto& e : sink.creates)
    uids.insert(e.pod_uid);
  CHECK(uids.size() == 6);
}

TEST_CASE("events: new verdicts are written before refreshes when tokens are short", "[events]") {
  EventRecorderOptions o = Options();
  o.events_per_second = 1;
  o.burst = 1;
  EventRecorder recorder(o);
  RecordingEventSink sink;
  recorder.Observe(kBig, "QuotaExceeded", "QuotaCheck", kMaxNote, kT0);
  recorder.Flush(kT0, sink);
  REQUIRE(sink.creates.size() == 1);
  // At the refresh a second pod has a new verdict: it goes first; the refresh waits a second.
  recorder.Observe({"eq2", "job-2", "u-job-2"}, "ReclaimRefused", "Reclaim", "refused", kT0 + 9000);
  recorder.Flush(kT0 + 10'000, sink);
  REQUIRE(sink.creates.size() == 2);
  CHECK(sink.creates[1].pod_uid == "u-job-2");
  CHECK(sink.patches.empty());
  recorder.Flush(kT0 + 11'000, sink);
  REQUIRE(sink.patches.size() == 1);
  CHECK(sink.patches[0].count == 2);
}

TEST_CASE("events: a failed write is tried again after the retry delay", "[events]") {
  EventRecorder recorder(Options());
  RecordingEventSink sink;
  sink.next = EventWriteCode::kFailed;
  recorder.Observe(kBig, "QuotaExceeded", "QuotaCheck", kMaxNote, kT0);
  EventFlushStats stats = recorder.Flush(kT0, sink);
  CHECK(stats.failed == 1);
  REQUIRE(stats.errors.size() == 1);
  CHECK(stats.errors[0] == "eq1/big QuotaExceeded: injected");
  recorder.Flush(kT0 + 1999, sink);
  CHECK(sink.creates.size() == 1);
  sink.next = EventWriteCode::kOk;
  CHECK(recorder.Flush(kT0 + 2000, sink).created == 1);
  CHECK(sink.creates.size() == 2);
  CHECK(sink.stored.size() == 1);
}

TEST_CASE("events: an Event that vanished (event TTL) is created again with its series",
          "[events]") {
  EventRecorder recorder(Options());
  RecordingEventSink sink;
  recorder.Observe(kBig, "QuotaExceeded", "QuotaCheck", kMaxNote, kT0);
  recorder.Flush(kT0, sink);
  recorder.Flush(kT0 + 10'000, sink);  // count 2
  sink.stored.clear();                 // the API server deleted it
  recorder.Flush(kT0 + 20'000, sink);  // the patch answers 404
  REQUIRE(sink.patches.size() == 2);
  CHECK(sink.creates.size() == 1);
  recorder.Flush(kT0 + 20'500, sink);  // created again, series included
  REQUIRE(sink.creates.size() == 2);
  CHECK(sink.creates[1].series_count == 3);
  CHECK(sink.creates[1].series_last_observed_us == (kT0 + 20'500) * 1000);
  CHECK(sink.creates[1].event_time_us == kT0 * 1000);
  CHECK(sink.creates[1].name != sink.creates[0].name);
  recorder.Flush(kT0 + 30'500, sink);
  CHECK(sink.patches.back().name == sink.creates[1].name);
  CHECK(sink.patches.back().count == 4);
}

TEST_CASE("events: names are DNS subdomains; notes fit the API server's 1 KiB", "[events]") {
  CHECK(EventRecorder::EventName("big", 0x1a2b) == "big.1a2b");
  const std::string name = EventRecorder::EventName(std::string(240, 'a') + "-b", 1);
  CHECK(name.size() <= 253);
  CHECK(name == std::string(236, 'a') + ".1");
  CHECK(EventRecorder::LimitNote("short") == "short");
  const std::string long_note = std::string(1021, 'x') + "\xc3\xa9\xc3\xa9";  // two 'é'
  const std::string cut = EventRecorder::LimitNote(long_note);
  CHECK(cut.size() <= 1024);
  CHECK(cut == std::string(1021, 'x') + "...");
  CHECK(EventRecorder::LimitNote(std::string(2000, 'y')).size() == 1024);
}

}  // namespace
}  // namespace event_recorder_test
}  // namespace capext
