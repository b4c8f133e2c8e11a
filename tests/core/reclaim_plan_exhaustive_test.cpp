// The plan search against an exhaustive search (docs/reclaim-plan.md#2-the-search), on random
// small clusters (2-4 nodes, flat quotas, single pods and gangs running, at most 8 victim units),
// for a pending single pod or a pending gang. The exhaustive search tries every subset S of the
// victim units: S is admissible when its units, removed in the victim order, pass the victim rule
// pod by pod (the side's re-check on the what-if); S is valid when, with S removed, the quota
// admits the placement and PlaceTogether places every waiting member. R is the set the search's
// removal pass takes (every unit the rule lets go, in order). Checked:
//  - a valid S inside R exists  =>  the search finds a plan (never "no plan" where one exists in
//    the plan space), within the default budget;
//  - no valid S at all          =>  no plan;
//  - a plan found is valid, takes gangs whole (surplus only, or the core with everything), and
//    no valid S removes a strict subset of its pods (minimal: no victim the put-back could drop);
//  - a smaller budget gives the same plan or "approximate", never another plan.
// Reported: how often a valid S exists only outside R (the victim order excludes it), and the
// plan's size against the exhaustive minimum.
//   CE_PLAN_DIFFTEST_STATES=N  how many states (default 1,500; 300 in a sanitizer build)
#include <fmt/format.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "core/group_placement.h"
#include "core/quota_admission.h"
#include "core/reclaim_plan.h"
#include "tests/support/builders.h"
#include "tests/support/sanitizer_build.h"
#include "tests/support/seeded_random.h"
#include "tests/support/workload_pods.h"

namespace capext::testing {
namespace reclaim_plan_exhaustive_test {
namespace {

struct Case {
  ClusterState state;
  std::string question;  // store key of the asking pod
  std::string text;
};

Case Generate(uint64_t seed) {
  SeededRandom r(seed * 7919 + 3);
  Case c;
  ClusterState& s = c.state;
  std::map<std::string, int64_t> free;
  const int nodes = r.Between(2, 4);
  for (int n = 0; n < nodes; ++n) {
    const int64_t cpu = 1000 * r.Between(3, 6);
    s.UpsertNode(MakeNode(fmt::format("n{}", n), cpu));
    free[fmt::format("n{}", n)] = cpu;
  }
  const int quotas = r.Between(2, 3);
  for (int q = 0; q < quotas; ++q) {
    const int64_t min = 1000 * r.Between(0, 8);
    s.UpsertQuota(
        MakeQuota(fmt::format("q{}", q), CpuList(min), CpuList(min + 1000 * r.Between(2, 10))));
  }
  auto place = [&](int64_t cpu) -> std::string {
    std::vector<std::string> fits;
    for (const auto& [name, room] : free) {
      if (room >= cpu) fits.push_back(name);
    }
    if (fits.empty()) return "";
    const std::string node = r.Pick(fits);
    free[node] -= cpu;
    return node;
  };
  int64_t t = 0;
  int units = 0;
  const int gangs = r.Between(0, 2);
  for (int g = 0; g < gangs; ++g) {
    const std::string ns = fmt::format("q{}", r.Below(quotas));
    const std::string name = fmt::format("g{}", g);
    const int min = 2;
    const int replicas = r.Between(2, 3);
    const int64_t cpu = 1000 * r.Between(1, 2);
    const int32_t priority = r.Pick<int32_t>({0, 0, 100});
    s.UpsertPodGroup(PodGroupOf(ns, name, min));
    for (int i = 0; i < replicas; ++i) {
      const std::string node = place(cpu);
      if (node.empty()) break;
      ++t;
      s.UpsertPod(Member(MakePod(ns, fmt::format("{}-{}", name, i))
                             .Cpu(cpu)
                             .Priority(priority)
                             .Created(t)
                             .BoundTo(node)
                             .Started(1000 + t),
                         name));
      units += i < min ? (i == 0 ? 1 : 0) : 1;
    }
  }
  while (units < 8) {
    const int64_t cpu = 1000 * r.Between(1, 3);
    const std::string node = place(cpu);
    if (node.empty()) break;
    ++t;
    s.UpsertPod(MakePod(fmt::format("q{}", r.Below(quotas)), fmt::format("s{}", t))
                    .Cpu(cpu)
                    .Priority(r.Pick<int32_t>({0, 100}))
                    .Created(t)
                    .BoundTo(node)
                    .Started(1000 + t));
    ++units;
  }
  const std::string ns = fmt::format("q{}", r.Below(quotas));
  const int32_t priority = r.Pick<int32_t>({0, 100, 1000});
  if (r.Chance(50)) {
    s.UpsertPod(MakePod(ns, "ask").Cpu(1000 * r.Between(1, 4)).Priority(priority).Created(t + 1));
    c.question = s.FindPodByName(ns, "ask")->store_key();
  } else {
    const int min = r.Between(2, 3);
    const int64_t cpu = 1000 * r.Between(1, 3);
    s.UpsertPodGroup(PodGroupOf(ns, "ask", min));
    for (int i = 0; i < min; ++i) {
      s.UpsertPod(Member(
          MakePod(ns, fmt::format("ask-{}", i)).Cpu(cpu).Priority(priority).Created(t + 1 + i),
          "ask"));
    }
    c.question = s.FindPodByName(ns, "ask-0")->store_key();
  }
  for (const auto& [key, p] : s.pods()) {
    c.text += fmt::format("  {} cpu {} prio {} node '{}' group '{}'\n", p.Key(),
                          p.requests.Get("cpu"), p.priority, p.node_name, p.group->name);
  }
  for (const auto& [name, node] : s.nodes())
    c.text += fmt::format("  node {} cpu {}\n", name, node.allocatable.Get("cpu"));
  for (const auto& [ns_name, q] : s.quota_set().quotas())
    c.text +=
        fmt::format("  quota {} min {} max {}\n", ns_name, q.min->Get("cpu"), q.max->Get("cpu"));
  return c;
}

// The victim units of the state for `pod`, in the victim order (its own gang aside).
std::vector<VictimUnit> Units(const ClusterState& state, const NormalizedPod& pod,
                              const VictimRule& rule) {
  std::vector<VictimUnit> units;
  std::set<GroupKey> cores;
  for (const auto& [key, x] : state.pods()) {
    if (!x.IsBound()) continue;
    VictimUnit unit = VictimUnitOf(state, x);
    if (!pod.group.empty() && unit.group == GroupKeyOf(pod)) continue;
    if (unit.kind == VictimUnitKind::kCore && !cores.insert(unit.group).second) continue;
    units.push_back(std::move(unit));
  }
  std::stable_sort(units.begin(), units.end(), [&](const VictimUnit& a, const VictimUnit& b) {
    const int da = rule.ScopeOf(a.representative->ns).distance;
    const int db = rule.ScopeOf(b.representative->ns).distance;
    if (da != db) return da < db;
    return VictimUnitBefore(a, b, PriorityThenStartTimeOrder());
  });
  return units;
}

struct Exhaustive {
  const ClusterState& state;
  const NormalizedPod& pod;
  const VictimRule& rule;
  const std::vector<VictimUnit>& units;
  std::vector<std::string> members;
  ResourceList request;

  // Removes the units of `mask` in order on `what_if`, each pod passing the rule at its turn;
  // the pods removed go to `pods`. False: not admissible.
  bool Remove(uint32_t mask, ClusterState* what_if, std::set<std::string>* pods) const {
    for (std::size_t i = 0; i < units.size(); ++i) {
      if ((mask & (1u << i)) == 0) continue;
      for (const NormalizedPod* y : units[i].pods) {
        if (pods->count(y->store_key()) != 0) continue;
        const VictimRule::Scope scope = rule.ScopeOf(y->ns);
        if (!scope.any || (scope.lower_priority_only && y->priority >= pod.priority)) return false;
        if (scope.recheck && !rule.SideBorrowing(scope, [&](int n) -> const ResourceList& {
              return what_if->ledger().NodeUsed(n);
            }))
          return false;
        what_if->DeletePod(y->store_key());
        pods->insert(y->store_key());
      }
    }
    return true;
  }

  // Whether the placement holds on `what_if`: the quota admits it, every member has a place.
  bool Holds(ClusterState* what_if) const {
    const AdmissionPath path = MakeAdmissionPath(*what_if, pod, &request);
    if (!QuotaPasses(
            what_if->semantics(), path,
            [&](int n) -> const ResourceList& { return what_if->ledger().NodeUsed(n); },
            what_if->totals()))
      return false;
    int placed = 0;
    return PlaceTogether(what_if, members, 0, &placed).has_value();
  }
};

// "" when every gang loses surplus members only or every active member.
std::string WholeUnits(const ClusterState& state, const std::set<std::string>& pods) {
  std::map<GroupKey, int> taken;
  for (const auto& key : pods) {
    const NormalizedPod* p = state.FindPod(key);
    const GroupView* g = state.GroupOf(*p);
    if (g != nullptr && g->IsGang()) ++taken[g->key];
  }
  for (const auto& [key, n] : taken) {
    const GroupView& g = *state.FindGroup(key);
    if (n < g.active() && g.active() - n < g.min_member)
      return fmt::format("{}: {} of {} active taken, minMember {}", key.Display(), n, g.active(),
                         g.min_member);
  }
  return "";
}

int64_t States() {
  const char* v = std::getenv("CE_PLAN_DIFFTEST_STATES");
  if (v != nullptr && *v != '\0') return std::strtoll(v, nullptr, 10);
  return kSanitizerBuild ? 300 : 1500;  // the exhaustive search runs 5-10 times slower there
}

TEST_CASE("plan search: never more victims than needed, a plan whenever one exists in order",
          "[difftest][reclaim-plan]") {
  const int64_t states = States();
  int64_t found = 0, gang_plans = 0, multi_node = 0, cores = 0, valid_outside_only = 0,
          above_minimum = 0, no_plan = 0, skipped = 0, budget_cut = 0;
  for (int64_t i = 0; i < states; ++i) {
    const auto seed = static_cast<uint64_t>(i + 1);
    const Case c = Generate(seed);
    const ClusterState& state = c.state;
    const NormalizedPod& pod = *state.FindPod(c.question);
    INFO("seed " << seed << "\n" << c.text << "  question " << pod.Key());
    const PreemptorContext context = MakePreemptorContext(state, pod);
    const std::vector<VictimUnit> units = Units(state, pod, *context.rule);
    const std::vector<const NormalizedPod*> members = PlanMembers(state, pod);
    if (units.size() > 8 || members.empty()) {
      ++skipped;
      continue;
    }
    Exhaustive ex{state, pod, *context.rule, units, {}, {}};
    for (const NormalizedPod* m : members) {
      ex.members.push_back(m->store_key());
      ex.request.Add(m->quota_request());
    }
    // R: every unit the rule lets go, in order.
    uint32_t r_mask = 0;
    {
      ClusterState what_if(state);
      std::set<std::string> pods;
      for (std::size_t u = 0; u < units.size(); ++u) {
        ClusterState trial(what_if);
        std::set<std::string> trial_pods = pods;
        if (ex.Remove(1u << u, &trial, &trial_pods) && trial_pods.size() > pods.size()) {
          what_if = trial;
          pods = trial_pods;
          r_mask |= 1u << u;
        }
      }
    }
    std::vector<std::set<std::string>> valid;
    bool valid_in_r = false, valid_outside = false;
    std::size_t minimum = 1000;
    for (uint32_t mask = 0; mask < (1u << units.size()); ++mask) {
      ClusterState what_if(state);
      std::set<std::string> pods;
      if (!ex.Remove(mask, &what_if, &pods) || !ex.Holds(&what_if)) continue;
      valid.push_back(pods);
      ((mask & ~r_mask) == 0 ? valid_in_r : valid_outside) = true;
      minimum = std::min(minimum, pods.size());
    }
    const ReclaimPlan plan = SearchReclaimPlan(state, pod, PriorityThenStartTimeOrder());
    REQUIRE_FALSE(plan.approximate());
    if (valid_in_r) REQUIRE(plan.found());
    if (valid.empty()) REQUIRE_FALSE(plan.found());
    if (!valid_in_r && valid_outside) ++valid_outside_only;
    if (!plan.found()) {
      ++no_plan;
      continue;
    }
    ++found;
    std::set<std::string> victims;
    for (const NormalizedPod* v : plan.Victims())
      victims.insert(v->store_key());
    INFO("plan: " << fmt::format("{}", fmt::join(victims, ", ")) << " on "
                  << fmt::format("{}", fmt::join(plan.nodes, ", ")));
    REQUIRE(std::find(valid.begin(), valid.end(), victims) != valid.end());
    REQUIRE(WholeUnits(state, victims) == "");
    for (const auto& v : valid) {
      const bool strict_subset = v.size() < victims.size() &&
                                 std::includes(victims.begin(), victims.end(), v.begin(), v.end());
      INFO("a valid strict subset: " << fmt::format("{}", fmt::join(v, ", ")));
      REQUIRE_FALSE(strict_subset);
    }
    above_minimum += victims.size() > minimum ? 1 : 0;
    gang_plans += members.size() > 1 ? 1 : 0;
    multi_node += std::set<std::string>(plan.nodes.begin(), plan.nodes.end()).size() > 1 ? 1 : 0;
    for (const PlannedUnit& u : plan.units)
      cores += u.kind == VictimUnitKind::kCore ? 1 : 0;
    // A smaller budget: the same plan, or approximate.
    ReclaimPlanBudget budget;
    budget.max_steps = seed % 2 == 0 ? plan.steps : std::max<int64_t>(1, plan.steps * 3 / 4);
    const ReclaimPlan cut = SearchReclaimPlan(state, pod, PriorityThenStartTimeOrder(), budget);
    if (cut.approximate()) {
      ++budget_cut;
    } else {
      REQUIRE(cut.found());
      REQUIRE(cut.Victims() == plan.Victims());
    }
  }
  const std::string summary = fmt::format(
      "{} states: {} plans ({} for gangs, {} across nodes, {} cores taken), {} without a plan, "
      "{} with a valid subset only outside the victim order, {} plans above the exhaustive "
      "minimum (minimal, not minimum), {} cut by a smaller budget, {} skipped",
      states, found, gang_plans, multi_node, cores, no_plan, valid_outside_only, above_minimum,
      budget_cut, skipped);
  std::puts(summary.c_str());
  INFO(summary);
  if (states >= 1000) {
    CHECK(found * 5 >= states);
    CHECK(gang_plans * 20 >= states);
    CHECK(multi_node * 50 >= states);
    CHECK(cores * 200 >= states);
    CHECK(no_plan * 10 >= states);
    CHECK(skipped * 4 <= states);
  }
}

}  // namespace
}  // namespace reclaim_plan_exhaustive_test
}  // namespace capext::testing
