// Hierarchical ElasticQuotas in core (docs/quota-hierarchy.md): the tree, subtree usage,
// admission at every ancestor, and the victim rules, on the page's example tree:
//   R org/org {min 16, max 16} -> A team-a/team-a, B team-b/team-b {min 8, max 16}
//   -> a1, a2 under A {min 4, max 12}, b1 under B {min 8, max 16}; two nodes of 8 cpu; 2-cpu pods.
#include "core/quota_tree.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "core/placement.h"
#include "core/preemption.h"
#include "core/quota_admission.h"
#include "tests/support/builders.h"

namespace capext {
namespace quota_tree_test {
namespace {

using testing::CpuList;
using testing::KeysOf;
using testing::MakeNode;
using testing::MakePod;
using testing::MakeQuota;

ElasticQuota Child(const std::string& ns, int64_t min_cpu, int64_t max_cpu,
                   const std::string& parent) {
  ElasticQuota q = MakeQuota(ns, CpuList(min_cpu * 1000), CpuList(max_cpu * 1000));
  q.parent = parent;
  return q;
}

// The example tree, two 8-cpu nodes, nothing running.
ClusterState ExampleTree() {
  ClusterState state;
  state.UpsertNode(MakeNode("n1", 8000));
  state.UpsertNode(MakeNode("n2", 8000));
  state.UpsertQuota(MakeQuota("org", CpuList(16000), CpuList(16000)));
  state.UpsertQuota(Child("team-a", 8, 16, "org/org"));
  state.UpsertQuota(Child("team-b", 8, 16, "org/org"));
  state.UpsertQuota(Child("a1", 4, 12, "team-a/team-a"));
  state.UpsertQuota(Child("a2", 4, 12, "team-a/team-a"));
  state.UpsertQuota(Child("b1", 8, 16, "team-b/team-b"));
  return state;
}

int64_t UsedCpu(const ClusterState& state, const std::string& ns) {
  const QuotaTree& tree = state.ledger().tree();
  return state.ledger().NodeUsed(tree.QuotaNodeOf(ns)).Get("cpu");
}

// Binds `count` 2-cpu pods of `ns`, started at increasing times, on n1 then n2.
void Run(ClusterState* state, const std::string& ns, int count, int64_t* clock) {
  for (int i = 0; i < count; ++i) {
    const std::string node = state->UsageOf("n1").requested.Get("cpu") + 2000 <= 8000 ? "n1" : "n2";
    const std::string name = ns + "-" + std::to_string(state->pods().size());
    state->UpsertPod(MakePod(ns, name).Cpu(2000).Started(++*clock).BoundTo(node));
  }
}

Status Admit(const ClusterState& state, const std::string& ns, const std::string& name) {
  return CheckQuota(state, state.Normalize(MakePod(ns, name).Cpu(2000)));
}

TEST_CASE("the tree: roots, leaves, own nodes and invalid parents", "[quota_tree]") {
  ClusterState state = ExampleTree();
  const QuotaTree& tree = state.ledger().tree();
  CHECK_FALSE(tree.flat());
  REQUIRE(tree.roots().size() == 1);
  CHECK(tree.quota(tree.roots()[0]).Key() == "org/org");
  const int a1 = tree.LeafOf("a1");
  CHECK(tree.depth(a1) == 2);
  CHECK(tree.quota(tree.parent(a1)).Key() == "team-a/team-a");
  // A grouping quota's pods sit in its implicit child, whose min is what the children leave.
  const int own = tree.LeafOf("team-a");
  CHECK(tree.is_own(own));
  CHECK(tree.quota(own).min->Get("cpu") == 0);
  CHECK(tree.Lca(tree.LeafOf("a1"), tree.LeafOf("a2")) == tree.QuotaNodeOf("team-a"));
  CHECK(tree.Lca(tree.LeafOf("a1"), tree.LeafOf("b1")) == tree.QuotaNodeOf("org"));

  SECTION("a missing parent, a cycle and the other API group make roots, each said once") {
    ClusterState bad;
    bad.UpsertQuota(Child("lost", 1, 2, "nowhere/nowhere"));
    bad.UpsertQuota(Child("x", 1, 2, "y/y"));
    bad.UpsertQuota(Child("y", 1, 2, "x/x"));
    ElasticQuota legacy = Child("legacy", 1, 2, "org/org");
    legacy.api_group = "scheduling.sigs.k8s.io";
    bad.UpsertQuota(MakeQuota("org", CpuList(4000), CpuList(4000)));
    bad.UpsertQuota(legacy);
    const QuotaTree& t = bad.ledger().tree();
    CHECK(t.roots().size() == 5);
    CHECK(t.flat());
    REQUIRE(t.problems().size() == 4);
    std::vector<std::string> quotas;
    for (const auto& p : t.problems())
      quotas.push_back(p.quota);
    std::sort(quotas.begin(), quotas.end());
    CHECK(quotas == std::vector<std::string>{"legacy/legacy", "lost/lost", "x/x", "y/y"});
  }
}

TEST_CASE("subtree usage follows every change, as a rebuild computes it", "[quota_tree]") {
  ClusterState state = ExampleTree();
  int64_t clock = 0;
  Run(&state, "a1", 3, &clock);
  Run(&state, "b1", 1, &clock);
  CHECK(UsedCpu(state, "a1") == 6000);
  CHECK(UsedCpu(state, "team-a") == 6000);
  CHECK(UsedCpu(state, "org") == 8000);
  CHECK(state.totals().used.Get("cpu") == 8000);  // over the roots: org only
  CHECK(state.totals().min.Get("cpu") == 16000);
  const std::string victim = state.UsageOf("n1").pods.front()->store_key();
  state.DeletePod(victim);
  CHECK(UsedCpu(state, "team-a") == 4000);
  CHECK(UsedCpu(state, "org") == 6000);
  // A quota change rebuilds the tree and the usage from the namespaces' usage.
  state.UpsertQuota(Child("a2", 4, 10, "team-a/team-a"));
  CHECK(UsedCpu(state, "team-a") == 4000);
  CHECK(UsedCpu(state, "org") == 6000);
}

TEST_CASE("admission: max at every ancestor, naming the quota that blocks", "[quota_tree]") {
  ClusterState state = ExampleTree();
  int64_t clock = 0;
  // Example 1: a1 borrows a2's idle min, then B's, up to its own max 12.
  Run(&state, "a1", 6, &clock);
  CHECK(UsedCpu(state, "team-a") == 12000);
  CHECK(Admit(state, "a1", "a1-7").message() ==
        "pod a1/a1-7 rejected: ElasticQuota a1/a1 would exceed max: cpu used 12 + request 2 > "
        "max 12");
  // Example 2: A never exceeds 16.
  Run(&state, "a2", 2, &clock);
  const Status a2 = Admit(state, "a2", "a2-3");
  CHECK(a2.code() == StatusCode::kUnschedulable);
  CHECK(a2.message() ==
        "pod a2/a2-3 rejected: ElasticQuota team-a/team-a (parent of a2/a2) would exceed max: "
        "cpu used 16 + request 2 > max 16");
  // A request above an ancestor's max can never fit: unresolvable, naming the nearest.
  const Status huge = CheckQuota(state, state.Normalize(MakePod("b1", "huge").Cpu(17000)));
  CHECK(huge.code() == StatusCode::kUnschedulableAndUnresolvable);
  CHECK_THAT(huge.message(), Catch::Contains("ElasticQuota b1/b1"));
}

TEST_CASE("reclaim: siblings first, never below a level's min", "[quota_tree]") {
  ClusterState state = ExampleTree();
  int64_t clock = 0;
  Run(&state, "a1", 6, &clock);
  Run(&state, "b1", 2, &clock);  // nodes full: a1 12, b1 4, org 16
  const Status blocked = Admit(state, "a2", "a2-1");
  CHECK(blocked.message() ==
        "pod a2/a2-1 rejected: ElasticQuota org/org (ancestor of a2/a2) would exceed max: cpu "
        "used 16 + request 2 > max 16");

  // Example 3: a2 comes back: a1's pods (siblings) are the only eligible victims.
  const NormalizedPod a2 = state.Normalize(MakePod("a2", "a2-1").Cpu(2000).Created(++clock));
  PreemptionPlan plan = FindPreemption(state, a2, PriorityThenStartTimeOrder());
  REQUIRE(plan.found());
  REQUIRE(plan.chosen.victims.size() == 1);
  CHECK(plan.chosen.victims[0]->ns == "a1");
  CHECK(plan.chosen.distance == 1);
  for (const auto& c : plan.candidates) {
    for (const auto* v : c.victims)
      CHECK(v->ns == "a1");
  }

  // b1 comes back: A's borrowers (a1's pods) go, never a2's, and only while A and a1 borrow.
  state.DeletePod(plan.chosen.victims[0]->store_key());
  state.UpsertPod(MakePod("a2", "a2-1").Cpu(2000).Started(++clock).BoundTo(plan.chosen.node));
  // a1 10, a2 2, A 12, b1 4, R 16.
  const NormalizedPod b1 = state.Normalize(MakePod("b1", "b1-3").Cpu(2000).Created(++clock));
  PreemptionPlan for_b1 = FindPreemption(state, b1, PriorityThenStartTimeOrder());
  REQUIRE(for_b1.found());
  REQUIRE(for_b1.chosen.victims.size() == 1);
  CHECK(for_b1.chosen.victims[0]->ns == "a1");
  CHECK(for_b1.chosen.distance == 2);

  SECTION("nothing once A is back at its min 8") {
    // a1 4, a2 4: A = 8 (its min), b1 at 8 wants more: B would go above its min.
    ClusterState at_min = ExampleTree();
    int64_t t = 0;
    Run(&at_min, "a1", 2, &t);
    Run(&at_min, "a2", 2, &t);
    Run(&at_min, "b1", 3, &t);  // b1 6: B 6 within 8
    const NormalizedPod more = at_min.Normalize(MakePod("b1", "b1-x").Cpu(2000).Created(++t));
    // Room exists (16 - 14 = 2): this one binds without a victim.
    CHECK(FindFeasibleNodes(at_min, more).feasible.size() >= 1);
    Run(&at_min, "b1", 1, &t);  // b1 8 = B's min; nodes full
    const NormalizedPod last = at_min.Normalize(MakePod("b1", "b1-y").Cpu(2000).Created(++t));
    CHECK_FALSE(FindPreemption(at_min, last, PriorityThenStartTimeOrder()).found());
  }
}

TEST_CASE("a parent's own namespace is its implicit child", "[quota_tree]") {
  // Example 5: team-a {min 8, max 12} with pods of its own, and one child a1 {min 4, max 8}.
  ClusterState state;
  state.UpsertNode(MakeNode("n1", 16000));
  state.UpsertQuota(MakeQuota("team-a", CpuList(8000), CpuList(12000)));
  state.UpsertQuota(Child("a1", 4, 8, "team-a/team-a"));
  int64_t clock = 0;
  for (int i = 0; i < 3; ++i) {
    state.UpsertPod(
        MakePod("team-a", "own-" + std::to_string(i)).Cpu(2000).Started(++clock).BoundTo("n1"));
  }
  state.UpsertPod(MakePod("a1", "a1-1").Cpu(2000).Started(++clock).BoundTo("n1"));
  const Status blocked = Admit(state, "a1", "a1-2");
  CHECK_THAT(blocked.message(), Catch::Contains("sum of all mins: cpu used 8 + request 2 > min 8"));
  const NormalizedPod p = state.Normalize(MakePod("a1", "a1-2").Cpu(2000).Created(++clock));
  PreemptionPlan plan = FindPreemption(state, p, PriorityThenStartTimeOrder());
  REQUIRE(plan.found());
  REQUIRE(plan.chosen.victims.size() == 1);
  CHECK(plan.chosen.victims[0]->ns == "team-a");
  CHECK(plan.chosen.victims[0]->name == "own-2");  // the most recently started
}

}  // namespace
}  // namespace quota_tree_test
}  // namespace capext
