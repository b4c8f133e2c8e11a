// ReclaimEvictions (extender/reclaim/reclaim_evictions.h): the one place every reclaim evicts,
// shared by the reclaim controller's thread and gate mode's admission loop
// (docs/reclaim-plan.md#gate-mode-the-admission-loop-plans-for-a-gated-gang, step 2): a plan's
// tokens all or none; victims not evicted give theirs back; the lease asked before each
// eviction; one Event per victim evicted. The concurrent case is for TSan (./test.sh): two loops
// taking tokens and evicting at once never exceed the limits together.
#include "extender/reclaim/reclaim_evictions.h"

#include <atomic>
#include <catch2/catch.hpp>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/builders.h"
#include "tests/support/switchable_leadership.h"

namespace capext {
namespace reclaim_evictions_test {
namespace {

using testing::MakePod;

// Answers every eviction; refuses the names in `refuse`. Thread-safe.
class CountingEvictor final : public Evictor {
 public:
  EvictOutcome Evict(const Pod& victim, const std::string& /*reason*/) override {
    std::lock_guard lock(mutex_);
    calls.push_back(victim.Key());
    if (refuse.count(victim.Key()) != 0) return {false, true, "Cannot evict pod: PDB", 0};
    return {true, false, ""};
  }
  std::mutex mutex_;
  std::vector<std::string> calls;
  std::set<std::string> refuse;
};

std::vector<Pod> Victims(const std::string& ns, int n) {
  std::vector<Pod> out;
  for (int i = 0; i < n; ++i)
    out.push_back(MakePod(ns, "v" + std::to_string(i)).Uid(ns + "-v" + std::to_string(i)));
  return out;
}

std::vector<const Pod*> Pointers(const std::vector<Pod>& pods) {
  std::vector<const Pod*> out;
  for (const Pod& p : pods)
    out.push_back(&p);
  return out;
}

TEST_CASE("reclaim evictions: a plan's tokens all or none; a refusal stops and gives back",
          "[reclaim_evictions]") {
  Metrics metrics;
  CountingEvictor evictor;
  ReclaimEvictions evictions(&evictor, &metrics, 4, 100);
  evictions.QueueVictimEvents("capacity-extender");
  const std::vector<Pod> plan = Victims("team-b", 3);
  REQUIRE(evictions.TakeTokens({"team-b", "team-b", "team-b"}, 1000));
  CHECK_FALSE(evictions.TakeTokens({"x", "x"}, 1000));  // 3 + 2 > 4 per second: none taken
  evictor.refuse = {"team-b/v1"};
  const EvictionRun run = evictions.EvictInOrder(Pointers(plan), "gang team-a/train", "plan", 1000);
  CHECK(run.evicted == 1);
  REQUIRE(run.stop);
  CHECK(run.stop->refused_by_pdb);
  CHECK_FALSE(run.stopped_acting);
  CHECK(evictor.calls == std::vector<std::string>{"team-b/v0", "team-b/v1"});
  // v1 and v2 gave their tokens back: 1 used of 4.
  CHECK(evictions.TakeTokens({"x", "x", "x"}, 1000));
  const std::vector<EventObject> events = evictions.TakeVictimEvents();
  REQUIRE(events.size() == 1);
  CHECK(events[0].pod_name == "v0");
  CHECK(events[0].reason == "Reclaimed");
  CHECK(events[0].note.find("evicted by quota reclaim for gang team-a/train") == 0);
  CHECK(evictions.TakeVictimEvents().empty());
  const std::string text = metrics.Render();
  CHECK(text.find("capacity_extender_evictions_total{namespace=\"team-b\"} 1") !=
        std::string::npos);
  CHECK(text.find("capacity_extender_evictions_refused_total{namespace=\"team-b\"} 1") !=
        std::string::npos);
}

TEST_CASE("reclaim evictions: nothing is sent once the replica stops acting",
          "[reclaim_evictions]") {
  Metrics metrics;
  CountingEvictor evictor;
  ReclaimEvictions evictions(&evictor, &metrics, 100, 100);
  testing::SwitchableLeadership leadership(false);
  evictions.FollowLeadership(&leadership);
  const std::vector<Pod> plan = Victims("team-b", 2);
  REQUIRE(evictions.TakeTokens({"team-b", "team-b"}, 0));
  const EvictionRun run = evictions.EvictInOrder(Pointers(plan), "pod a/p", "plan", 0);
  CHECK(run.evicted == 0);
  CHECK(run.stopped_acting);
  CHECK(evictor.calls.empty());
}

TEST_CASE("reclaim evictions: two loops at once never exceed the limits together",
          "[reclaim_evictions]") {
  Metrics metrics;
  CountingEvictor evictor;
  // 10 per second, at one instant: at most 10 evictions in all, whoever asks.
  ReclaimEvictions evictions(&evictor, &metrics, 10, 1000);
  evictions.QueueVictimEvents("capacity-extender");
  std::atomic<int> evicted{0};
  auto loop = [&](const std::string& ns) {
    const std::vector<Pod> plan = Victims(ns, 3);
    for (int round = 0; round < 20; ++round) {
      if (!evictions.TakeTokens({ns, ns, ns}, 5000)) continue;
      evicted += static_cast<int>(
          evictions.EvictInOrder(Pointers(plan), "gang " + ns + "/g", "plan", 5000).evicted);
    }
  };
  std::vector<EventObject> events;
  std::thread a(loop, "ns-a"), b(loop, "ns-b");
  std::thread flush([&] {
    for (int i = 0; i < 50; ++i) {
      for (auto& e : evictions.TakeVictimEvents())
        events.push_back(std::move(e));
    }
  });
  a.join();
  b.join();
  flush.join();
  for (auto& e : evictions.TakeVictimEvents())
    events.push_back(std::move(e));
  CHECK(evicted.load() == 9);  // three whole plans of 3; a fourth would exceed 10
  CHECK(events.size() == 9);
}

}  // namespace
}  // namespace reclaim_evictions_test
}  // namespace capext
