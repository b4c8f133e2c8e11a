// PendingIndex (extender/reclaim/pending_index.h): which tracked pods each kind of change wakes,
// the queue (longest queued first, a wave in scheduling order, a queued pod keeps its place), the
// timers, and untracking.
#include "extender/reclaim/pending_index.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

namespace capext {
namespace pending_index_test {
namespace {

using Strings = std::vector<std::string>;

WakeRule Rule(uint32_t on, std::string node = "", int64_t at_ms = 0) {
  WakeRule rule;
  rule.on = on;
  rule.node = std::move(node);
  rule.at_ms = at_ms;
  return rule;
}

// Tracks `uids` in namespace `ns` (priority 0, created in the order given) with `rule`, and
// empties the queue.
void TrackAll(PendingIndex& index, const Strings& uids, const std::string& ns, WakeRule rule) {
  static int64_t created = 0;
  for (const auto& uid : uids) {
    index.Track(uid, ns, 0, ++created);
    index.SetRule(uid, rule);
  }
  index.TakeQueued(1000);
}

TEST_CASE("pending index: each change wakes the pods whose rule names it", "[reclaim][index]") {
  PendingIndex index;
  TrackAll(index, {"own-only"}, "eq1", Rule(0));
  TrackAll(index, {"quota-eq1"}, "eq1", Rule(kWakeOnQuota));
  TrackAll(index, {"quota-eq2"}, "eq2", Rule(kWakeOnQuota));
  TrackAll(index, {"cluster"}, "eq2", Rule(kWakeOnClusterQuota));
  TrackAll(index, {"any-node"}, "eq2", Rule(kWakeOnAnyNode));
  TrackAll(index, {"watch-n1"}, "eq2", Rule(kWakeOnWatchedNode, "n1"));
  TrackAll(index, {"pdbs"}, "eq2", Rule(kWakeOnPdbs));
  REQUIRE(index.size() == 7);
  REQUIRE(index.queued() == 0);

  SECTION("its own change") {
    index.Wake("own-only");
    CHECK(index.TakeQueued(100) == Strings{"own-only"});
  }
  SECTION("a quota-level change of its namespace") {
    index.WakeQuota("eq1");
    CHECK(index.TakeQueued(100) == Strings{"quota-eq1"});
    index.WakeQuota("eq3");
    CHECK(index.queued() == 0);
  }
  SECTION("a quota-level change of every namespace (a quota tree changed shape)") {
    index.WakeQuotaEverywhere();
    CHECK(index.TakeQueued(100) == Strings{"quota-eq1", "quota-eq2"});
  }
  SECTION("a cluster-wide quota change") {
    index.WakeClusterQuota();
    CHECK(index.TakeQueued(100) == Strings{"cluster"});
  }
  SECTION("node changes: any-node subscribers, and the watchers of those nodes") {
    index.WakeNodes({"n2"});
    CHECK(index.TakeQueued(100) == Strings{"any-node"});
    index.WakeNodes({"n2", "n1"});
    const Strings woken = index.TakeQueued(100);
    CHECK(woken.size() == 2);
    CHECK(std::find(woken.begin(), woken.end(), "watch-n1") != woken.end());
    index.WakeNodes({});
    CHECK(index.queued() == 0);
  }
  SECTION("a PodDisruptionBudget change") {
    index.WakePdbs();
    CHECK(index.TakeQueued(100) == Strings{"pdbs"});
  }
  SECTION("everything") {
    index.WakeAll();
    CHECK(index.queued() == 7);
  }
  SECTION("a new rule replaces the old subscriptions") {
    index.SetRule("cluster", Rule(kWakeOnPdbs));
    index.WakeClusterQuota();
    CHECK(index.queued() == 0);
    index.WakePdbs();
    CHECK(index.TakeQueued(100).size() == 2);
  }
}

TEST_CASE("pending index: the queue serves the longest queued first; a wave in scheduling order",
          "[reclaim][index]") {
  PendingIndex index;
  // Created out of order; b has the highest priority.
  index.Track("a", "eq1", 0, 30);
  index.Track("b", "eq1", 10, 40);
  index.Track("c", "eq1", 0, 10);
  index.Track("d", "eq1", 0, 20);
  for (const char* uid : {"a", "b", "c", "d"})
    index.SetRule(uid, Rule(kWakeOnClusterQuota));
  CHECK(index.queued() == 0);  // tracking alone queues nothing: the caller wakes

  index.WakeAll();
  CHECK(index.TakeQueued(2) == Strings{"b", "c"});
  CHECK(index.queued() == 2);
  // A pod woken later waits behind those queued before, whatever its priority; a pod already
  // queued keeps its place.
  index.Track("e", "eq1", 100, 50);
  index.Wake("e");
  index.Wake("a");
  index.WakeClusterQuota();
  CHECK(index.TakeQueued(10) == Strings{"d", "a", "e", "b", "c"});
  CHECK(index.queued() == 0);
  CHECK_FALSE(index.IsQueued("a"));
}

TEST_CASE("pending index: timers wake at their time; a replaced timer does not",
          "[reclaim][index]") {
  PendingIndex index;
  TrackAll(index, {"p"}, "eq1", Rule(0, "", 5000));
  TrackAll(index, {"q"}, "eq1", Rule(0, "", 7000));
  index.WakeDue(4999);
  CHECK(index.queued() == 0);
  index.WakeDue(5000);
  CHECK(index.TakeQueued(10) == Strings{"p"});
  // q's next plan moved its timer: the old one no longer fires.
  index.SetRule("q", Rule(0, "", 9000));
  index.WakeDue(8000);
  CHECK(index.queued() == 0);
  index.WakeDue(9500);
  CHECK(index.TakeQueued(10) == Strings{"q"});
  index.WakeDue(100'000);
  CHECK(index.queued() == 0);  // each timer fires once
}

TEST_CASE("pending index: untracking drops the pod from the queue and every subscription",
          "[reclaim][index]") {
  PendingIndex index;
  TrackAll(
      index, {"p", "q"}, "eq1",
      Rule(kWakeOnQuota | kWakeOnClusterQuota | kWakeOnAnyNode | kWakeOnWatchedNode | kWakeOnPdbs,
           "n1", 5000));
  index.Wake("p");
  index.Untrack("p");
  CHECK_FALSE(index.Tracks("p"));
  CHECK(index.queued() == 0);
  CHECK(index.RuleOf("p") == nullptr);
  index.WakeQuota("eq1");
  index.WakeClusterQuota();
  index.WakeNodes({"n1"});
  index.WakePdbs();
  index.WakeDue(5000);
  CHECK(index.TakeQueued(10) == Strings{"q"});
  CHECK(index.PodsOf("eq1") == Strings{"q"});
  CHECK(index.All() == Strings{"q"});
}

TEST_CASE("pending index: a pod tracked again under another namespace moves", "[reclaim][index]") {
  PendingIndex index;
  TrackAll(index, {"p"}, "eq1", Rule(kWakeOnQuota));
  CHECK_FALSE(index.Track("p", "eq2", 0, 1));
  CHECK(index.PodsOf("eq1").empty());
  CHECK(index.PodsOf("eq2") == Strings{"p"});
  index.WakeQuota("eq1");
  CHECK(index.queued() == 0);
  index.WakeQuota("eq2");
  CHECK(index.queued() == 1);
}

}  // namespace
}  // namespace pending_index_test
}  // namespace capext
