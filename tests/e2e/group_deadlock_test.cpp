// The deadlock-freedom property of pod groups (issue 20; docs/workloads.md): over random mixes of
// gangs (some elastic, some with a PodGroup object, some with the annotation only), single pods,
// quotas and nodes, played through capacity-sim's scenario runner (core's decisions: the
// admission queue in gate mode, /filter's group rule and holds in filter mode, reclaim with
// victim units, controllers re-creating evicted pods), after every event has settled:
//  - all or nothing: a starting gang (minMember not yet bound at once) is either not admitted at
//    all or admitted for its whole minMember (admitted, held, reserved and bound members
//    together): never a part of it holding quota while the rest waits;
//  - no two gangs hold each other's room: at most one starting gang has admitted members that
//    have not all bound (in gate mode the admission queue admits a gang only with a place for
//    each member on the current nodes; in filter mode /filter holds the need's quota for the
//    first member to pass).
// Both admission modes. A failing case prints as a scenario file (capacity-sim scenario runs it).
#include <fmt/format.h>

#include <catch2/catch.hpp>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "bench/sim/scenario.h"
#include "core/pod_group.h"
#include "tests/support/seeded_random.h"

namespace capext::testing {
namespace group_deadlock_test {
namespace {

struct GroupMix {
  std::string yaml;
  // Pods the scenario deletes itself (a user's action may leave a gang partial: not checked).
  std::set<std::string> deleted_groups;  // "ns/name" of gangs with a deleted member
};

std::string PodTemplate(int cpu, int priority, bool controller, int min_member_annotation,
                        const std::string& t) {
  std::string meta = fmt::format("creationTimestamp: \"{}\"", t);
  if (controller) {
    meta +=
        ", ownerReferences: [{apiVersion: batch/v1, kind: Job, name: j, uid: u-j, "
        "controller: true}]";
  }
  if (min_member_annotation > 0) {
    meta += fmt::format(", annotations: {{scheduling.capacity-extender.io/min-member: \"{}\"}}",
                        min_member_annotation);
  }
  return fmt::format(
      "{{apiVersion: v1, kind: Pod, metadata: {{{}}}, spec: {{priority: {}, containers: [{{name: "
      "c, resources: {{requests: {{cpu: \"{}\"}}}}}}]}}}}",
      meta, priority, cpu);
}

std::string Timestamp(int seconds) {
  return fmt::format("2026-01-01T{:02}:{:02}:{:02}Z", seconds / 3600, seconds / 60 % 60,
                     seconds % 60);
}

GroupMix Generate(uint64_t seed, bool gate) {
  SeededRandom r(seed * 7919 + (gate ? 1 : 0));
  GroupMix mix;
  std::string y = fmt::format("name: group-mix-{}-{}\nadmission: {}\nrecreateEvicted: true\n", seed,
                              gate ? "gate" : "filter", gate ? "gate" : "filter");
  y += "cluster:\n";
  const int nodes = r.Between(1, 3);
  for (int n = 0; n < nodes; ++n) {
    y += fmt::format(
        "  - {{apiVersion: v1, kind: Node, metadata: {{name: n{0}, labels: "
        "{{kubernetes.io/hostname: n{0}}}}}, status: {{allocatable: {{cpu: \"{1}\", memory: "
        "64Gi, pods: \"110\"}}}}}}\n",
        n, r.Between(3, 8));
  }
  const int quotas = r.Between(1, 3);
  for (int q = 0; q < quotas; ++q) {
    const int min = r.Between(1, 6);
    y += fmt::format(
        "  - {{apiVersion: scheduling.x-k8s.io/v1alpha1, kind: ElasticQuota, metadata: {{name: "
        "q{0}, namespace: q{0}}}, spec: {{min: {{cpu: \"{1}\"}}, max: {{cpu: \"{2}\"}}}}}}\n",
        q, min, min + r.Between(0, 6));
  }
  struct Gang {
    std::string ns, name;
    int min = 0, replicas = 0, cpu = 1, priority = 0;
    bool object = false;
  };
  std::vector<Gang> gangs(static_cast<std::size_t>(r.Between(2, 5)));
  for (std::size_t g = 0; g < gangs.size(); ++g) {
    Gang& x = gangs[g];
    x.ns = fmt::format("q{}", r.Below(quotas));
    x.name = fmt::format("g{}", g);
    x.min = r.Between(2, 4);
    x.replicas = x.min + (r.Chance(40) ? r.Between(1, 2) : 0);
    x.cpu = r.Between(1, 2);
    x.priority = r.Pick({0, 0, 100});
    x.object = r.Chance(60);
    if (x.object) {
      y += fmt::format(
          "  - {{apiVersion: scheduling.x-k8s.io/v1alpha1, kind: PodGroup, metadata: {{name: {}, "
          "namespace: {}}}, spec: {{minMember: {}, scheduleTimeoutSeconds: 60}}}}\n",
          x.name, x.ns, x.min);
    }
  }
  // Events: each gang's creation and a few single pods, shuffled; now and then a single pod or a
  // whole gang ends (one delete per pod), the clock moves, and at the end past every timeout.
  std::vector<std::string> events;
  int t = 0;
  std::vector<std::string> singles;
  for (const Gang& x : gangs) {
    events.push_back(fmt::format(
        "  - createGroup: {{podGroup: {}/{}, replicas: {}, template: {}}}\n", x.ns, x.name,
        x.replicas, PodTemplate(x.cpu, x.priority, true, x.object ? 0 : x.min, "T")));
  }
  const int single_count = r.Between(0, 3);
  for (int s = 0; s < single_count; ++s) {
    const std::string ns = fmt::format("q{}", r.Below(quotas));
    singles.push_back(ns + "/s" + std::to_string(s));
    events.push_back(fmt::format(
        "  - create: {{apiVersion: v1, kind: Pod, metadata: {{name: s{}, namespace: {}, "
        "creationTimestamp: \"T\"}}, spec: {{priority: {}, containers: [{{name: c, resources: "
        "{{requests: {{cpu: \"{}\"}}}}}}]}}}}\n",
        s, ns, r.Pick({0, 100}), r.Between(1, 3)));
  }
  for (std::size_t i = events.size(); i > 1; --i)
    std::swap(events[i - 1], events[static_cast<std::size_t>(r.Below(static_cast<int>(i)))]);
  std::vector<std::string> tail;
  for (int k = 0; k < 3; ++k) {
    const int what = r.Below(3);
    if (what == 0 && !singles.empty()) {
      tail.push_back("  - delete: " + r.Pick(singles) + "\n");
    } else if (what == 1) {
      const Gang& x = r.Pick(gangs);
      mix.deleted_groups.insert(x.ns + "/" + x.name);
      for (int i = 0; i < x.replicas; ++i)
        tail.push_back(fmt::format("  - delete: {}/{}-{}\n", x.ns, x.name, i));
    } else {
      tail.push_back("  - advance: 30s\n");
    }
  }
  tail.push_back("  - advance: 5m\n");
  y += "events:\n";
  for (std::string e : events) {
    // Creation times in event order, one second apart.
    const std::size_t at = e.find("\"T\"");
    if (at != std::string::npos) e.replace(at, 3, "\"" + Timestamp(t++) + "\"");
    y += e;
  }
  for (const auto& e : tail)
    y += e;
  mix.yaml = y;
  return mix;
}

// The property's violations on a settled state ("" when none).
std::string Violations(const ClusterState& state, const std::set<std::string>& deleted_groups) {
  std::string out;
  int stuck = 0;
  std::string stuck_names;
  state.ForEachGroup([&](const GroupView& g) {
    if (!g.starting()) return;
    if (deleted_groups.count(g.key.ns + "/" + g.key.name) != 0) return;
    const int32_t active = g.active();
    if (active > 0 && active < g.min_member) {
      out += fmt::format(
          "{} partially admitted: {} of minMember {} active ({} bound, {} reserved, "
          "{} admitted); ",
          g.key.Display(), active, g.min_member, g.bound, g.reserved, g.admitted);
    }
    if (active > 0 && g.bound < g.min_member) {
      ++stuck;
      stuck_names += " " + g.key.Display();
    }
  });
  if (stuck > 1)
    out += fmt::format("{} starting gangs hold room and wait:{}; ", stuck, stuck_names);
  return out;
}

void CheckMixes(bool gate, uint64_t seeds) {
  int64_t checked = 0, groups_seen = 0;
  for (uint64_t seed = 1; seed <= seeds; ++seed) {
    const GroupMix mix = Generate(seed, gate);
    Scenario scenario;
    const Status s = ParseScenarioText(mix.yaml, "group-mix", &scenario);
    INFO(mix.yaml);
    REQUIRE(s.ok());
    std::string failure;
    std::ostringstream out;
    RunScenario(scenario, out, [&](std::size_t event, const ClusterState& state) {
      ++checked;
      state.ForEachGroup([&](const GroupView& g) { groups_seen += g.IsGang() ? 1 : 0; });
      const std::string v = Violations(state, mix.deleted_groups);
      if (!v.empty() && failure.empty()) failure = fmt::format("after event {}: {}", event, v);
    });
    INFO("seed " << seed << (gate ? " (gate)" : " (filter)") << "\n" << out.str());
    CHECK(failure == "");
  }
  CHECK(checked > 0);
  CHECK(groups_seen > 0);
}

TEST_CASE("random group mixes never reach a partially admitted or mutually blocked state (gate)",
          "[difftest][groups]") {
  CheckMixes(true, 150);
}

TEST_CASE("random group mixes never reach a partially admitted or mutually blocked state (filter)",
          "[difftest][groups]") {
  CheckMixes(false, 150);
}

}  // namespace
}  // namespace group_deadlock_test
}  // namespace capext::testing
