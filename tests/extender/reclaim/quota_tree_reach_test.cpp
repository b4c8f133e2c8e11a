// How far a quota change reaches in the quota tree (extender/reclaim/quota_tree_reach.cpp), and
// the reclaim controller's wake rules on a 3-level tree (the table in reclaim_controller.h): a
// change of used or of a quota's spec wakes the pods of its root tree, not another tree's; a
// change of the tree's shape wakes every tree. Planning is counted with last_pass().planned.
#include <set>
#include <string>

#include <catch2/catch.hpp>

#include "extender/reclaim/quota_tree_reach.h"
#include "tests/extender/reclaim/reclaim_harness.h"

namespace capext {
namespace quota_tree_reach_test {
namespace {

using namespace reclaim_testing;  // NOLINT: the harness of this folder

ElasticQuota Quota(const std::string& ns, int64_t min_cpu, int64_t max_cpu,
                   const std::string& parent = "") {
  ElasticQuota q = MakeQuota(ns, CpuList(min_cpu), CpuList(max_cpu));
  q.parent = parent;
  return q;
}

// Two root trees on two 16-cpu nodes:
//   org {min 20, max 24}                       lab {min 2, max 2}
//     team-a {min 6, max 8}                      l1 {min 1, max 4}: l1/run 1 cpu on n2
//       a1 {min 3, max 6}: a1/run 6 cpu on n1
//       a2 {min 3, max 10}
// and five pending pods:
//   a2/blocked   4 cpu: team-a used 6 + 4 > max 8 (no victim: a2 would go above its min)
//   a2/small     1 cpu: fits n1
//   a2/huge      9 cpu: its request alone exceeds team-a's max 8 (unresolvable)
//   team-a/huge  9 cpu: the same, in team-a's own namespace (its implicit child)
//   l1/huge      3 cpu: its request alone exceeds lab's max 2 (unresolvable)
void LoadTrees(ClusterState& s) {
  s.UpsertNode(MakeNode("n1", 16'000, 64 * kGi));
  s.UpsertNode(MakeNode("n2", 16'000, 64 * kGi));
  s.UpsertQuota(Quota("org", 20'000, 24'000));
  s.UpsertQuota(Quota("team-a", 6000, 8000, "org/org"));
  s.UpsertQuota(Quota("a1", 3000, 6000, "team-a/team-a"));
  s.UpsertQuota(Quota("a2", 3000, 10'000, "team-a/team-a"));
  s.UpsertQuota(Quota("lab", 2000, 2000));
  s.UpsertQuota(Quota("l1", 1000, 4000, "lab/lab"));
  const int64_t t = kStartMs - 600'000;
  s.UpsertPod(MakePod("a1", "run").Uid("u-a1-run").Cpu(6000).BoundTo("n1").Started(t));
  s.UpsertPod(MakePod("l1", "run").Uid("u-l1-run").Cpu(1000).BoundTo("n2").Started(t));
  s.UpsertPod(MakePod("a2", "blocked").Uid("u-blocked").Cpu(4000).Created(t + 1));
  s.UpsertPod(MakePod("a2", "small").Uid("u-small").Cpu(1000).Created(t + 2));
  s.UpsertPod(MakePod("a2", "huge").Uid("u-a2-huge").Cpu(9000).Created(t + 3));
  s.UpsertPod(MakePod("l1", "huge").Uid("u-l1-huge").Cpu(3000).Created(t + 4));
  s.UpsertPod(MakePod("team-a", "huge").Uid("u-team-a-huge").Cpu(9000).Created(t + 5));
}

TEST_CASE("NamespacesOfTheirTrees: the namespaces of each root tree touched",
          "[quota_tree_reach]") {
  ClusterState s(QuotaSemantics::kCapacityExtender);
  SECTION("flat quotas: the namespaces themselves") {
    s.UpsertQuota(Quota("eq1", 1000, 2000));
    s.UpsertQuota(Quota("eq2", 1000, 2000));
    CHECK(NamespacesOfTheirTrees(s, {"eq1"}) == Keys{"eq1"});
    CHECK(NamespacesOfTheirTrees(s, {"eq1", "none"}) == Keys{"eq1", "none"});
  }
  SECTION("a tree: a leaf, a middle quota and the root each reach the whole tree") {
    LoadTrees(s);
    const Keys org = {"org", "team-a", "a1", "a2"};
    CHECK(NamespacesOfTheirTrees(s, {"a1"}) == org);
    CHECK(NamespacesOfTheirTrees(s, {"team-a"}) == org);
    CHECK(NamespacesOfTheirTrees(s, {"org"}) == org);
    CHECK(NamespacesOfTheirTrees(s, {"l1"}) == Keys{"lab", "l1"});
    CHECK(NamespacesOfTheirTrees(s, {"a2", "lab", "none"}) ==
          Keys{"org", "team-a", "a1", "a2", "lab", "l1", "none"});
    CHECK(NamespacesOfTheirTrees(s, {}).empty());
  }
  SECTION("a quota whose parent does not exist is a root of its own") {
    LoadTrees(s);
    s.UpsertQuota(Quota("stray", 1000, 2000, "gone/gone"));
    CHECK(NamespacesOfTheirTrees(s, {"stray"}) == Keys{"stray"});
  }
}

bool Mentions(Harness& h, const std::string& uid, const std::string& text) {
  return h.Verdict(uid)->verdict.message.find(text) != std::string::npos;
}

const Keys kTreeOrg = {"a2/blocked", "a2/small", "a2/huge", "team-a/huge"};
const Keys kAll = {"a2/blocked", "a2/small", "a2/huge", "team-a/huge", "l1/huge"};

TEST_CASE("wake-up on quota trees: a change wakes its root tree, not another",
          "[reclaim][wake][quota_tree_reach]") {
  Harness h;
  Change(h, LoadTrees);
  h.controller->RunOnce();
  REQUIRE(Planned(h) == kAll);
  REQUIRE(h.Verdict("u-blocked")->verdict.code == VerdictCode::kQuotaExceeded);
  REQUIRE(Mentions(h, "u-blocked", "team-a/team-a (parent of a2/a2)"));
  REQUIRE(h.Verdict("u-small")->verdict.code == VerdictCode::kFits);
  REQUIRE(Mentions(h, "u-a2-huge", "request alone exceeds the max of ElasticQuota team-a"));
  REQUIRE(Mentions(h, "u-l1-huge", "request alone exceeds the max of ElasticQuota lab"));
  // The unresolvable pods wait for their tree alone: only the tree rule can wake them.
  REQUIRE(h.controller->WakeRuleOf("u-a2-huge")->on == kWakeOnQuota);
  REQUIRE(h.controller->WakeRuleOf("u-l1-huge")->on == kWakeOnQuota);
  REQUIRE(h.controller->WakeRuleOf("u-team-a-huge")->on == kWakeOnQuota);
  REQUIRE(Pass(h).empty());

  SECTION("a1's used wakes a2's and team-a's pods under the shared parent, not lab's tree") {
    Change(h, [](ClusterState& s) { s.DeletePod("u-a1-run"); });
    CHECK(Pass(h) == kTreeOrg);
    CHECK(h.Verdict("u-blocked")->verdict.code == VerdictCode::kFits);  // team-a 0 + 4 <= 8
  }
  SECTION("l1's used wakes lab's tree (and the cluster-wide rule's pods), not a2's huge pod") {
    Change(h, [](ClusterState& s) { s.DeletePod("u-l1-run"); });
    CHECK(Pass(h) == Keys{"a2/blocked", "a2/small", "l1/huge"});
  }
  SECTION("a nomination in a1 (status.nominatedNodeName) wakes the org tree, not lab's") {
    Change(h, [](ClusterState& s) {
      s.UpsertPod(
          MakePod("a1", "next").Uid("u-a1-next").Cpu(100).Created(kStartMs).NominatedTo("n1"));
    });
    CHECK(Pass(h) == Keys{"a1/next", "a2/blocked", "a2/small", "a2/huge", "team-a/huge"});
  }
  SECTION("team-a's max (a parent's spec) wakes its subtree; lab's tree sleeps") {
    Change(h, [](ClusterState& s) { s.UpsertQuota(Quota("team-a", 6000, 16'000, "org/org")); });
    CHECK(Pass(h) == kTreeOrg);
    CHECK(h.Verdict("u-a2-huge")->verdict.code == VerdictCode::kFits);  // 6 + 9 <= 16
    CHECK(h.Verdict("u-team-a-huge")->verdict.code == VerdictCode::kFits);
    CHECK(h.Verdict("u-blocked")->verdict.code == VerdictCode::kFits);
  }
  SECTION("org's max (the root's spec) wakes the whole tree below it") {
    Change(h, [](ClusterState& s) { s.UpsertQuota(Quota("org", 20'000, 30'000)); });
    CHECK(Pass(h) == kTreeOrg);
  }
  SECTION("lab's max wakes l1's pod alone (a max does not move the cluster-wide rule)") {
    Change(h, [](ClusterState& s) { s.UpsertQuota(Quota("lab", 2000, 4000)); });
    CHECK(Pass(h) == Keys{"l1/huge"});
    CHECK(h.Verdict("u-l1-huge")->verdict.code == VerdictCode::kFits);
  }
  SECTION("a1's min: its tree, and the cluster-wide rule's pods; not lab's unresolvable pod") {
    Change(h, [](ClusterState& s) { s.UpsertQuota(Quota("a1", 2000, 6000, "team-a/team-a")); });
    CHECK(Pass(h) == kTreeOrg);
  }
  SECTION("a2 moved under lab (a parent changed): every tree, the one it left included") {
    Change(h, [](ClusterState& s) { s.UpsertQuota(Quota("a2", 3000, 10'000, "lab/lab")); });
    CHECK(Pass(h) == kAll);
    CHECK(Mentions(h, "u-a2-huge", "request alone exceeds the max of ElasticQuota lab"));
    CHECK(Mentions(h, "u-blocked", "request alone exceeds the max of ElasticQuota lab"));
  }
  SECTION("a quota added under team-a: every tree") {
    Change(h, [](ClusterState& s) { s.UpsertQuota(Quota("a3", 0, 4000, "team-a/team-a")); });
    CHECK(Pass(h) == kAll);
  }
  SECTION("nothing changing: nothing planned") {
    for (int i = 0; i < 5; ++i)
      CHECK(Pass(h).empty());
  }
}

}  // namespace
}  // namespace quota_tree_reach_test
}  // namespace capext
