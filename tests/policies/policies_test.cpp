// The policy tables: one name, help and factory per choice; the first entry is the default.
#include "policies/policies.h"
#include "policies/node_scorers.h"
#include "policies/victim_orders.h"

#include <fmt/format.h>
#include <algorithm>
#include <catch2/catch.hpp>
#include <set>
#include <string>
#include <vector>

#include "tests/support/builders.h"

namespace capext {
namespace policies_test {
namespace {

using testing::MakePod;

template <typename T>
void CheckTable(const PolicyTable<T>& table) {
  INFO(table.what());
  REQUIRE_FALSE(table.entries().empty());
  std::set<std::string> names;
  for (const auto& e : table.entries()) {
    INFO(e.name);
    CHECK(names.insert(std::string(e.name)).second);  // unique
    CHECK_FALSE(e.help.empty());
    CHECK(table.Find(e.name) == &e);
    CHECK_THAT(table.HelpText(), Catch::Contains(std::string(e.name)));
    CHECK_THAT(table.NamesText(), Catch::Contains(std::string(e.name)));
  }
  CHECK(table.Find("no-such-policy") == nullptr);
  CHECK(table.Find("") == nullptr);
  CHECK(table.Names().front() == table.default_entry().name);
  CHECK_THAT(table.NamesText(),
             Catch::StartsWith(std::string(table.default_entry().name) + " (default)"));
}

TEST_CASE("every policy table is well formed", "[policies]") {
  CheckTable(VictimOrderPolicies());
  CheckTable(NodeScoringPolicies());
  CheckTable(QuotaSemanticsPolicies());
}

TEST_CASE("the defaults and the names round-trip", "[policies]") {
  CHECK(QuotaSemanticsPolicies().default_entry().make() == QuotaSemantics::kCapacityExtender);
  CHECK(NodeScoring(NodeScoringPolicies().default_entry().make()) == NodeScoring::kLeastAllocated);
  for (const auto& e : QuotaSemanticsPolicies().entries())
    CHECK(QuotaSemanticsName(e.make()) == e.name);
  for (const auto& e : NodeScoringPolicies().entries())
    CHECK(e.make()->name() == e.name);
  CHECK(QuotaSemanticsPolicies().Find("Scheduler-Plugins") == nullptr);  // names are exact
}

TEST_CASE("a victim order's registry name is the plugin's own name", "[policies][plugins]") {
  std::set<const VictimOrder*> plugins;
  for (const auto& e : VictimOrderPolicies().entries()) {
    INFO(e.name);
    const VictimOrder* order = e.make();
    REQUIRE(order != nullptr);
    CHECK(order->name() == e.name);
    CHECK(plugins.insert(order).second);  // one plugin per entry
    // The candidates on the nodes are what every order reads (core/victim_order.h).
    CHECK((order->Declared() & kChangesOnAnyNode) != 0);
  }
  CHECK(VictimOrderPolicies().default_entry().make() == &PriorityThenStartTimeOrder());
}

TEST_CASE("a node scorer's registry name is its own name, its scores stay in 0..10",
          "[policies][plugins]") {
  std::set<const NodeScorer*> plugins;
  for (const auto& e : NodeScoringPolicies().entries()) {
    INFO(e.name);
    const NodeScorer* scorer = e.make();
    REQUIRE(scorer != nullptr);
    CHECK(scorer->name() == e.name);
    CHECK(plugins.insert(scorer).second);  // one plugin per entry
    // A scorer that reads the utilisation reads the nodes (core/node_scorer.h).
    if (scorer->ReadsUtilisation()) CHECK((scorer->Declared() & kChangesOnAnyNode) != 0);
    for (int64_t permille = 0; permille <= 1000; ++permille) {
      const int score = scorer->FromUtilisation(permille);
      if (score < 0 || score > kMaxNodeScore) FAIL("permille " << permille << " scores " << score);
    }
  }
}

struct OrderCase {
  std::string description;
  Pod a;
  Pod b;
  bool a_more_important;
};

TEST_CASE("the default victim order is kube-scheduler's MoreImportantPod", "[policies]") {
  const VictimOrder& order = *VictimOrderPolicies().default_entry().make();
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
    CHECK(order.KeptOver(c.a, c.b) == c.a_more_important);
  }
}

TEST_CASE("priority-then-largest-first keeps smaller pods at equal priority", "[policies]") {
  const auto* entry = VictimOrderPolicies().Find("priority-then-largest-first");
  REQUIRE(entry != nullptr);
  const VictimOrder& order = *entry->make();
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
    CHECK(order.KeptOver(c.a, c.b) == c.a_more_important);
  }
}

TEST_CASE("every victim order is a strict weak ordering usable for sorting", "[policies]") {
  // Every registered order, the test plugins' too (tests/plugins/): the contract of
  // core/victim_order.h, on every pair and triple of pods mixing priority, start and cpu.
  std::vector<Pod> mixed;
  for (int32_t priority : {1, 2})
    for (int64_t start : {1, 2})
      for (int64_t cpu : {100, 200})
        mixed.push_back(MakePod("ns", fmt::format("p{}-s{}-c{}", priority, start, cpu))
                            .Priority(priority)
                            .Started(start)
                            .Cpu(cpu));
  for (const auto& e : VictimOrderPolicies().entries()) {
    INFO(e.name);
    const VictimOrder& order = *e.make();
    const auto kept = [&](const Pod& x, const Pod& y) { return order.KeptOver(x, y); };
    const auto equal = [&](const Pod& x, const Pod& y) { return !kept(x, y) && !kept(y, x); };
    for (const Pod& a : mixed) {
      CHECK_FALSE(kept(a, a));
      for (const Pod& b : mixed) {
        if (kept(a, b)) CHECK_FALSE(kept(b, a));
        for (const Pod& c : mixed) {
          if (kept(a, b) && kept(b, c)) CHECK(kept(a, c));
          if (equal(a, b) && equal(b, c)) CHECK(equal(a, c));
        }
      }
    }
  }
  // The built-in orders on one list: priority, then (largest-first) the cpu, then the start.
  for (const auto& [name, want] : std::vector<std::pair<std::string, std::vector<std::string>>>{
           {"priority-then-start-time", {"b", "c", "d", "a"}},
           {"priority-then-largest-first", {"b", "d", "a", "c"}}}) {
    INFO(name);
    const VictimOrder& order = *VictimOrderPolicies().Find(name)->make();
    std::vector<Pod> pods = {MakePod("ns", "a").Priority(1).Started(3).Cpu(100),
                             MakePod("ns", "b").Priority(2).Started(2).Cpu(100),
                             MakePod("ns", "c").Priority(1).Started(1).Cpu(200),
                             MakePod("ns", "d").Priority(1).Started(1).Cpu(100)};
    std::stable_sort(pods.begin(), pods.end(),
                     [&](const Pod& x, const Pod& y) { return order.KeptOver(x, y); });
    std::vector<std::string> names;
    for (const auto& p : pods)
      names.push_back(p.name);
    CHECK(names == want);
  }
}

}  // namespace
}  // namespace policies_test
}  // namespace capext
