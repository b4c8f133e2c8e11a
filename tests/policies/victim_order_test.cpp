// VictimOrder policies: which of two pods is kept longer when victims are chosen.
#include "policies/victim_order.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "tests/support/builders.h"

namespace capext {
namespace {

using testing::MakePod;

TEST_CASE("victim orders are looked up by name", "[victim_order]") {
  for (const auto& name : VictimOrderNames()) {
    INFO(name);
    auto order = MakeVictimOrder(name);
    REQUIRE(order != nullptr);
    CHECK(order->name() == name);
  }
  CHECK(MakeVictimOrder("no-such-order") == nullptr);
  CHECK(VictimOrderNames().front() == kPriorityThenStartTime);
}

struct OrderCase {
  std::string description;
  Pod a;
  Pod b;
  bool a_more_important;
};

TEST_CASE("priority-then-start-time is kube-scheduler's MoreImportantPod", "[victim_order]") {
  auto order = MakeVictimOrder(kPriorityThenStartTime);
  REQUIRE(order != nullptr);
  const std::vector<OrderCase> cases = {
      {"higher priority wins", MakePod("ns", "a").Priority(10).Started(500),
       MakePod("ns", "b").Priority(5).Started(1), true},
      {"lower priority loses", MakePod("ns", "a").Priority(5).Started(1),
       MakePod("ns", "b").Priority(10).Started(500), false},
      {"equal priority: the earlier start wins", MakePod("ns", "a").Priority(5).Started(1),
       MakePod("ns", "b").Priority(5).Started(2), true},
      {"equal priority: the later start loses", MakePod("ns", "a").Priority(5).Started(2),
       MakePod("ns", "b").Priority(5).Started(1), false},
      {"no start time: the creation time stands in", MakePod("ns", "a").Priority(5).Created(100),
       MakePod("ns", "b").Priority(5).Started(200), true},
      {"a request size does not matter", MakePod("ns", "a").Priority(5).Started(1).Cpu(1),
       MakePod("ns", "b").Priority(5).Started(2).Cpu(64000), true},
  };
  for (const auto& c : cases) {
    INFO(c.description);
    CHECK(order->MoreImportant(c.a, c.b) == c.a_more_important);
    CHECK(order->AsFunction()(c.a, c.b) == c.a_more_important);
  }
}

TEST_CASE("priority-then-largest-first keeps smaller pods at equal priority", "[victim_order]") {
  auto order = MakeVictimOrder("priority-then-largest-first");
  REQUIRE(order != nullptr);
  const std::vector<OrderCase> cases = {
      {"priority first", MakePod("ns", "a").Priority(10).Cpu(64000),
       MakePod("ns", "b").Priority(5).Cpu(1), true},
      {"the smaller request is kept", MakePod("ns", "a").Priority(5).Cpu(1000).Started(9),
       MakePod("ns", "b").Priority(5).Cpu(2000).Started(1), true},
      {"equal requests: the earlier start", MakePod("ns", "a").Priority(5).Cpu(1000).Started(9),
       MakePod("ns", "b").Priority(5).Cpu(1000).Started(1), false},
  };
  for (const auto& c : cases) {
    INFO(c.description);
    CHECK(order->MoreImportant(c.a, c.b) == c.a_more_important);
  }
}

TEST_CASE("a victim order is a strict weak ordering usable for sorting", "[victim_order]") {
  for (const auto& name : VictimOrderNames()) {
    INFO(name);
    auto order = MakeVictimOrder(name);
    std::vector<Pod> pods = {MakePod("ns", "a").Priority(1).Started(3).Cpu(100),
                             MakePod("ns", "b").Priority(2).Started(2).Cpu(100),
                             MakePod("ns", "c").Priority(1).Started(1).Cpu(100),
                             MakePod("ns", "d").Priority(1).Started(1).Cpu(100)};
    for (const auto& p : pods)
      CHECK_FALSE(order->MoreImportant(p, p));
    std::stable_sort(pods.begin(), pods.end(),
                     [&](const Pod& x, const Pod& y) { return order->MoreImportant(x, y); });
    std::vector<std::string> names;
    for (const auto& p : pods)
      names.push_back(p.name);
    CHECK(names == std::vector<std::string>{"b", "c", "d", "a"});
  }
}

}  // namespace
}  // namespace capext
