// InformerSync (docs/architecture.md#staying-in-sync-with-the-api-server): in sync after a list,
// while a watch is established, during short hand-offs; out of sync after breaks, long
// hand-offs, failures; "since" in both states. Times are made up: t(ms) from a fixed start.
#include "extender/kube/informer_sync.h"

#include <catch2/catch.hpp>
#include <chrono>

namespace capext::kube {
namespace informer_sync_test {
namespace {

using Clock = std::chrono::steady_clock;
const Clock::time_point kStart = Clock::time_point() + std::chrono::hours(1);

Clock::time_point t(long ms) {
  return kStart + std::chrono::milliseconds(ms);
}

long Ms(Clock::time_point at) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(at - kStart).count();
}

TEST_CASE("InformerSync: out of sync until listed, in sync after the list", "[kube][sync]") {
  InformerSync sync(t(0), {});
  SyncState s = sync.State(t(100));
  CHECK_FALSE(s.listed);
  CHECK_FALSE(s.in_sync);
  CHECK(Ms(s.since) == 0);
  CHECK(s.cause == "first list under way");

  sync.Failed("list /api/v1/pods: connection refused (retrying)");
  CHECK(sync.State(t(200)).cause == "list /api/v1/pods: connection refused (retrying)");

  sync.ListCompleted(t(300));
  s = sync.State(t(300));
  CHECK(s.listed);
  CHECK(s.in_sync);
  CHECK(Ms(s.since) == 300);
}

TEST_CASE("InformerSync: the list-to-watch hand-off lasts 1 s at most", "[kube][sync]") {
  InformerSync sync(t(0), {});
  sync.ListCompleted(t(1000));
  CHECK(sync.State(t(2000)).in_sync);  // 1 s after the list, no watch yet
  const SyncState late = sync.State(t(2001));
  CHECK_FALSE(late.in_sync);
  CHECK(Ms(late.since) == 1000);  // the list was the last moment it followed
  CHECK(late.cause == "opening the watch after a list");

  SECTION("a watch established in time keeps the in-sync period") {
    sync.WatchOpened(t(1100));
    CHECK(sync.State(t(1250)).in_sync);  // open, not settled, within the hand-off
    CHECK(sync.State(t(5000)).in_sync);  // settled at 1300
    CHECK(Ms(sync.State(t(5000)).since) == 1000);
  }
  SECTION("a watch established late starts a new in-sync period") {
    sync.WatchOpened(t(2500));
    CHECK_FALSE(sync.State(t(2600)).in_sync);  // not settled yet
    sync.WatchLine(t(2650));
    const SyncState s = sync.State(t(2700));
    CHECK(s.in_sync);
    CHECK(Ms(s.since) == 2650);
  }
}

TEST_CASE("InformerSync: a 200 followed by ERROR 410 is never a following watch", "[kube][sync]") {
  InformerSync sync(t(0), {});
  sync.ListCompleted(t(0));
  sync.WatchOpened(t(10));
  sync.WatchLine(t(20));
  // The watch follows until it breaks at 60 s (the API server killed).
  sync.WatchEnded(t(60000), false, "watch of pods: connection reset by peer");
  SyncState s = sync.State(t(60000));
  CHECK_FALSE(s.in_sync);  // a break gets no hand-off time
  CHECK(Ms(s.since) == 60000);
  // Back 8 s later: the resume is answered 200, then ERROR 410 (the server forgot the RV).
  sync.WatchOpened(t(68000));
  CHECK_FALSE(sync.State(t(68001)).in_sync);
  sync.WatchEnded(t(68002), false, "watch of pods expired (410 Gone): relisting");
  s = sync.State(t(68100));
  CHECK_FALSE(s.in_sync);
  CHECK(Ms(s.since) == 60000);  // still the break: the 200 proved nothing
  CHECK(s.cause == "watch of pods expired (410 Gone): relisting");
  sync.ListCompleted(t(68400));
  s = sync.State(t(68400));
  CHECK(s.in_sync);
  CHECK(Ms(s.since) == 68400);
}

TEST_CASE("InformerSync: a watch ended at its timeout and reopened at once stays in sync",
          "[kube][sync]") {
  InformerSync sync(t(0), {});
  sync.ListCompleted(t(0));
  sync.WatchOpened(t(5));
  sync.WatchEnded(t(300000), true, "");  // established (settled), ended normally at 300 s
  CHECK(sync.State(t(300003)).in_sync);
  sync.WatchOpened(t(300003));
  sync.WatchLine(t(300004));
  const SyncState s = sync.State(t(400000));
  CHECK(s.in_sync);
  CHECK(Ms(s.since) == 0);  // one in-sync period since the first list

  SECTION("a reopen that fails ends the hand-off at once") {
    InformerSync other(t(0), {});
    other.ListCompleted(t(0));
    other.WatchOpened(t(5));
    other.WatchEnded(t(300000), true, "");
    other.Failed("watch of pods: connect 127.0.0.1:6443: connection refused (retrying)");
    const SyncState f = other.State(t(300010));
    CHECK_FALSE(f.in_sync);
    CHECK(Ms(f.since) == 300000);
  }
}

TEST_CASE("InformerSync: a silent watch is out of sync from when it is given up", "[kube][sync]") {
  InformerSync sync(t(0), {});
  sync.ListCompleted(t(0));
  sync.WatchOpened(t(10));
  // Nothing for 90 s: the informer closes it and resumes.
  sync.WatchEnded(t(90010), false, "watch of pods delivered nothing for 90000 ms");
  const SyncState s = sync.State(t(90011));
  CHECK_FALSE(s.in_sync);
  CHECK(Ms(s.since) == 90010);
  sync.WatchOpened(t(90020));
  CHECK(sync.State(t(90300)).in_sync);  // settled: a new in-sync period
  CHECK(Ms(sync.State(t(90300)).since) == 90220);
}

}  // namespace
}  // namespace informer_sync_test
}  // namespace capext::kube
