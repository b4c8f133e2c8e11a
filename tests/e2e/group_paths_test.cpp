// Group cases of the differential test (issue 20; docs/workloads.md): on random states with gangs
// (PodGroup objects, minMember 2-4, elastic replicas), some members bound, some admitted (quota
// holds without a node: explicit, as filter mode makes them, or derived from admitted-at, as the
// gate's admission makes them), some pending, and single pods, for a pending question pod (a
// single pod or a gang member):
//  - "holds = bound": the quota verdict, every node's /filter verdict, FindPreemption over every
//    node and PlanReclaim equal those on the same state with each admitted member bound instead,
//    started at its admission time, on a node no pod may use (spec.unschedulable). Victims are
//    compared without that node's pods: a core's admitted members go with the core (their holds
//    end with it), never as victims (docs/workloads.md#2-holds-quota-without-a-node);
//  - victim units are whole: every victim set takes, of each gang, either surplus members only,
//    leaving at least minMember active, or its whole core (every member on a node, any node).
//   CE_GROUP_DIFFTEST_STATES=N  how many states (default 3,000)
#include <fmt/format.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "core/placement.h"
#include "core/preemption.h"
#include "core/reclaim_planner.h"
#include "core/victim_unit.h"
#include "tests/support/builders.h"
#include "tests/support/seeded_random.h"
#include "tests/support/workload_pods.h"

namespace capext::testing {
namespace group_paths_test {
namespace {

constexpr const char* kHeldNode = "zz-held";

struct GroupCase {
  std::vector<Node> nodes;
  std::vector<ElasticQuota> quotas;
  std::vector<PodGroupSpec> groups;
  std::vector<Pod> pods;  // bound, pending and admitted pods
  struct Held {
    std::string key;
    int64_t held_ms;
    bool derived;  // admitted-at (gate mode) rather than an explicit hold (filter mode)
  };
  std::vector<Held> held;
  Pod question;
  std::string text;  // for a failure's message
};

GroupCase Generate(uint64_t seed) {
  SeededRandom r(seed * 104729 + 17);
  GroupCase c;
  std::map<std::string, int64_t> free;
  const int nodes = r.Between(1, 3);
  for (int n = 0; n < nodes; ++n) {
    const int64_t cpu = 1000 * r.Between(4, 12);
    c.nodes.push_back(MakeNode(fmt::format("n{}", n), cpu));
    free[c.nodes.back().name] = cpu;
  }
  const int quotas = r.Between(1, 3);
  for (int q = 0; q < quotas; ++q) {
    const int64_t min = 1000 * r.Between(0, 6);
    c.quotas.push_back(
        MakeQuota(fmt::format("q{}", q), CpuList(min), CpuList(min + 1000 * r.Between(0, 6))));
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
  std::vector<Pod> pending;
  const int gangs = r.Between(1, 3);
  for (int g = 0; g < gangs; ++g) {
    const std::string ns = fmt::format("q{}", r.Below(quotas));
    const std::string name = fmt::format("g{}", g);
    const int min = r.Between(2, 4);
    const int replicas = min + (r.Chance(40) ? r.Between(1, 2) : 0);
    const int64_t cpu = 1000 * r.Between(1, 2);
    const int32_t priority = r.Pick({0, 0, 100});
    c.groups.push_back(PodGroupOf(ns, name, min));
    for (int i = 0; i < replicas; ++i) {
      ++t;
      PodBuilder b =
          MakePod(ns, fmt::format("{}-{}", name, i)).Cpu(cpu).Priority(priority).Created(t);
      const int what = r.Below(100);
      if (what < 40) {
        const std::string node = place(cpu);
        if (!node.empty()) {
          c.pods.push_back(Member(b.BoundTo(node).Started(1000 + t), name));
          continue;
        }
      }
      Pod pod = Member(b, name);
      if (what >= 40 && what < 70) {
        const int64_t held_ms = 100'000 + t;
        const bool derived = r.Chance(50);
        if (derived) pod = AdmittedAt(pod, held_ms);
        c.held.push_back({StoreKeyOf(pod), held_ms, derived});
        c.pods.push_back(pod);
        continue;
      }
      c.pods.push_back(pod);
      pending.push_back(pod);
    }
  }
  const int singles = r.Between(0, 4);
  for (int s = 0; s < singles; ++s) {
    ++t;
    const int64_t cpu = 1000 * r.Between(1, 3);
    const std::string node = place(cpu);
    if (node.empty()) continue;
    c.pods.push_back(MakePod(fmt::format("q{}", r.Below(quotas)), fmt::format("s{}", s))
                         .Cpu(cpu)
                         .Priority(r.Pick({0, 100}))
                         .Created(t)
                         .BoundTo(node)
                         .Started(1000 + t));
  }
  if (!pending.empty() && r.Chance(50)) {
    c.question = r.Pick(pending);
  } else {
    c.question = MakePod(fmt::format("q{}", r.Below(quotas)), "question")
                     .Cpu(1000 * r.Between(1, 4))
                     .Priority(r.Pick({0, 100, 1000}))
                     .Created(t + 1);
  }
  for (const Pod& p : c.pods) {
    c.text += fmt::format("  {} cpu {} prio {} node '{}' group '{}'\n", p.Key(),
                          p.requests.Get("cpu"), p.priority, p.node_name, p.group->name);
  }
  for (const auto& h : c.held)
    c.text +=
        fmt::format("  held {} at {} ({})\n", h.key, h.held_ms, h.derived ? "derived" : "explicit");
  c.text += "  question " + c.question.Key() + "\n";
  return c;
}

// The state; `held_bound`: the admitted members bound on kHeldNode instead of held.
ClusterState Build(const GroupCase& c, bool held_bound) {
  ClusterState state;
  for (const Node& n : c.nodes)
    state.UpsertNode(n);
  if (held_bound) {
    Node held = MakeNode(kHeldNode, 1'000'000'000);
    held.unschedulable = true;
    state.UpsertNode(held);
  }
  for (const ElasticQuota& q : c.quotas)
    state.UpsertQuota(q);
  for (const PodGroupSpec& g : c.groups)
    state.UpsertPodGroup(g);
  std::map<std::string, const GroupCase::Held*> held;
  for (const auto& h : c.held)
    held[h.key] = &h;
  for (Pod pod : c.pods) {
    auto it = held.find(StoreKeyOf(pod));
    if (held_bound && it != held.end()) {
      pod.node_name = kHeldNode;
      pod.phase = PodPhase::kRunning;
      pod.start_ms = it->second->held_ms;
    }
    state.UpsertPod(pod);
  }
  if (!held_bound) {
    for (const auto& h : c.held) {
      if (!h.derived) state.Hold(h.key, h.held_ms, 4'000'000'000'000);
    }
  }
  return state;
}

std::string Describe(const Status& s) {
  return fmt::format("{} {}", static_cast<int>(s.code()), s.message());
}

// A summary over every node ("0/2 nodes are available: ...") counts the extra node: code only.
std::string CodeOf(const Status& s) {
  return std::to_string(static_cast<int>(s.code()));
}

std::string Victims(const std::vector<const NormalizedPod*>& victims) {
  std::vector<std::string> keys;
  for (const NormalizedPod* v : victims) {
    if (v->node_name != kHeldNode) keys.push_back(v->store_key());
  }
  return fmt::format("[{}]", fmt::join(keys, ","));
}

// Whether some candidate of the bound twin takes admitted members (bound on kHeldNode) with a
// core: the cases where the choice between candidates
// (docs/capacity-semantics.md#5-choosing-among-candidate-nodes: fewest victims, ...) must count a
// core's released holds as the twin counts its bound members. Counted, to show the generator
// keeps producing them.
bool ChoiceCountsHeld(const ClusterState& bound, const GroupCase& c) {
  const NormalizedPod pod = bound.Normalize(c.question);
  for (const NodeVictims& n : FindPreemption(bound, pod, PriorityThenStartTimeOrder()).candidates) {
    for (const NormalizedPod* v : n.victims) {
      if (v->node_name == kHeldNode) return true;
    }
  }
  return false;
}

std::vector<std::pair<std::string, std::string>> Decisions(const ClusterState& state,
                                                           const GroupCase& c,
                                                           bool compare_choice) {
  std::vector<std::pair<std::string, std::string>> out;
  const NormalizedPod pod = state.Normalize(c.question);
  const PodFilter filter(state, pod);
  out.emplace_back("quota", Describe(filter.quota()));
  for (const Node& n : c.nodes)
    out.emplace_back("filter " + n.name, Describe(filter.CheckNode(n.name)));
  const PreemptionPlan plan = FindPreemption(state, pod, PriorityThenStartTimeOrder());
  std::string p = fmt::format("outcome {} ({})", static_cast<int>(plan.outcome), CodeOf(plan.why));
  if (plan.found() && compare_choice)
    p += " chosen " + plan.chosen.node + Victims(plan.chosen.victims);
  for (const NodeVictims& n : plan.candidates) {
    if (n.node != kHeldNode) p += fmt::format("; {}{}", n.node, Victims(n.victims));
  }
  out.emplace_back("preemption", p);
  const ReclaimPlanForPod reclaim = PlanReclaim(state, pod, PriorityThenStartTimeOrder(), {});
  if (compare_choice) {
    out.emplace_back(
        "reclaim", fmt::format("{} {}{} ({})", ReclaimDecisionName(reclaim.decision), reclaim.node,
                               Victims(reclaim.victims), CodeOf(reclaim.why)));
  } else {
    out.emplace_back("reclaim", ReclaimDecisionName(reclaim.decision));
  }
  return out;
}

// "" when every gang loses surplus members only (keeping minMember active) or its whole core.
std::string UnitsWhole(const ClusterState& state, const std::vector<const NormalizedPod*>& victims,
                       int* cores_taken) {
  std::map<GroupKey, std::vector<const NormalizedPod*>> by_group;
  for (const NormalizedPod* v : victims) {
    const GroupView* g = state.GroupOf(*v);
    if (g != nullptr && g->IsGang()) by_group[g->key].push_back(v);
  }
  for (const auto& [key, taken] : by_group) {
    const GroupView& g = *state.FindGroup(key);
    bool core = false;
    for (const NormalizedPod* v : taken)
      core = core || VictimUnitOf(state, *v).kind == VictimUnitKind::kCore;
    if (core) {
      ++*cores_taken;
      for (const auto& m : g.members) {
        const bool on_node = m.state == MemberState::kBound || m.state == MemberState::kReserved;
        if (on_node && std::find(taken.begin(), taken.end(), m.pod) == taken.end())
          return fmt::format("{}: core taken without {}", key.Display(), m.pod->store_key());
      }
    } else if (g.active() - static_cast<int32_t>(taken.size()) < g.min_member) {
      return fmt::format("{}: surplus taken below minMember ({} active, {} taken, minMember {})",
                         key.Display(), g.active(), taken.size(), g.min_member);
    }
  }
  return "";
}

int64_t States() {
  const char* v = std::getenv("CE_GROUP_DIFFTEST_STATES");
  return v != nullptr && *v != '\0' ? std::strtoll(v, nullptr, 10) : 3000;
}

TEST_CASE(
    "groups: decisions with admitted members held equal those with them bound; victim "
    "units are whole",
    "[difftest][groups]") {
  const int64_t states = States();
  int64_t with_holds = 0, gang_questions = 0, victim_sets = 0, cores_taken = 0,
          holds_in_taken_cores = 0, choice_skipped = 0;
  for (int64_t i = 0; i < states; ++i) {
    const auto seed = static_cast<uint64_t>(i + 1);
    const GroupCase c = Generate(seed);
    const ClusterState held = Build(c, false);
    const ClusterState bound = Build(c, true);
    with_holds += c.held.empty() ? 0 : 1;
    gang_questions += c.question.group.empty() ? 0 : 1;
    const bool compare_choice = true;
    choice_skipped += ChoiceCountsHeld(bound, c) ? 1 : 0;
    const auto a = Decisions(held, c, compare_choice);
    const auto b = Decisions(bound, c, compare_choice);
    for (std::size_t k = 0; k < a.size(); ++k) {
      INFO("seed " << seed << "\n" << c.text);
      INFO(a[k].first << ": held: " << a[k].second << "\n  bound instead: " << b[k].second);
      REQUIRE(a[k].second == b[k].second);
    }
    const NormalizedPod pod = held.Normalize(c.question);
    const PreemptionPlan plan = FindPreemption(held, pod, PriorityThenStartTimeOrder());
    std::vector<std::vector<const NormalizedPod*>> sets;
    for (const NodeVictims& n : plan.candidates)
      sets.push_back(n.victims);
    sets.push_back(PlanReclaim(held, pod, PriorityThenStartTimeOrder(), {}).victims);
    for (const auto& victims : sets) {
      if (victims.empty()) continue;
      ++victim_sets;
      int cores = 0;
      const std::string whole = UnitsWhole(held, victims, &cores);
      INFO("seed " << seed << "\n" << c.text);
      REQUIRE(whole == "");
      cores_taken += cores;
      if (cores > 0) {
        for (const NormalizedPod* v : victims) {
          const GroupView* g = held.GroupOf(*v);
          if (g != nullptr && g->admitted > 0) {
            ++holds_in_taken_cores;
            break;
          }
        }
      }
    }
  }
  const std::string summary = fmt::format(
      "{} states: {} with holds, {} gang questions, {} victim sets, {} cores taken, {} taken "
      "cores with admitted members, {} choices counting released holds",
      states, with_holds, gang_questions, victim_sets, cores_taken, holds_in_taken_cores,
      choice_skipped);
  std::puts(summary.c_str());
  INFO(summary);
  // The generator must keep producing the cases that matter.
  if (states >= 1000) {
    CHECK(with_holds * 2 >= states);
    CHECK(gang_questions * 5 >= states);
    CHECK(victim_sets * 20 >= states);
    CHECK(cores_taken * 100 >= states);
    CHECK(holds_in_taken_cores * 1000 >= states);
  }
}

}  // namespace
}  // namespace group_paths_test
}  // namespace capext::testing
