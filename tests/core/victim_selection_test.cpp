// SelectVictimsOnNode (docs/capacity-semantics.md#4-victims-on-one-node): which pods are potential
// victims in each branch, the reprieve, PDBs, and the reasons a node is not a candidate.
#include "core/victim_selection.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "core/reasons.h"
#include "tests/support/builders.h"

namespace capext {
namespace victim_selection_test {
namespace {

using testing::CpuList;
using testing::KeysOf;
using testing::MakeNode;
using testing::MakePdb;
using testing::MakePod;
using testing::MakeQuota;

using Keys = std::vector<std::string>;

NodeVictims Select(const ClusterState& state, const Pod& preemptor, const std::string& node) {
  const NormalizedPod normalized = state.Normalize(preemptor);
  PreemptorContext ctx = MakePreemptorContext(state, normalized);
  return SelectVictimsOnNode(state, ctx, *state.FindNode(node), PriorityThenStartTimeOrder());
}

bool MoreThanMin(const ClusterState& state, const Pod& preemptor) {
  const NormalizedPod normalized = state.Normalize(preemptor);
  return MakePreemptorContext(state, normalized).more_than_min;
}

// A quota nobody uses, so the aggregated min stays out of the way.
void AddIdleQuota(ClusterState* state) {
  state->UpsertQuota(MakeQuota("idle", CpuList(100000), std::nullopt));
}

TEST_CASE("a borrowing preemptor takes only lower-priority pods of its own namespace",
          "[victim_selection]") {
  ClusterState state;
  state.UpsertNode(MakeNode("n1", 8000));
  state.UpsertQuota(MakeQuota("eq1", CpuList(4000), CpuList(100000)));
  state.UpsertQuota(MakeQuota("eq2", CpuList(2000), CpuList(100000)));
  AddIdleQuota(&state);
  state.UpsertPod(MakePod("eq1", "low").Cpu(2000).Priority(0).BoundTo("n1"));
  state.UpsertPod(MakePod("eq1", "high").Cpu(2000).Priority(20).BoundTo("n1"));
  state.UpsertPod(MakePod("eq2", "borrower").Cpu(2000).Priority(0).BoundTo("n1"));
  state.UpsertPod(MakePod("eq2", "borrower-2").Cpu(2000).Priority(0).BoundTo("n1"));

  Pod p = MakePod("eq1", "p").Cpu(2000).Priority(10);  // eq1: 4 + 2 > min 4
  REQUIRE(MoreThanMin(state, p));
  NodeVictims v = Select(state, p, "n1");
  CHECK(v.candidate);
  CHECK(KeysOf(v.victims) == Keys{"eq1/low"});

  SECTION("equal or higher priority pods of its namespace are never taken") {
    Pod bigger = MakePod("eq1", "bigger").Cpu(4000).Priority(10);
    NodeVictims none = Select(state, bigger, "n1");
    CHECK_FALSE(none.candidate);
    CHECK(none.victims.empty());
    CHECK(none.why_not.message() == reasons::kDoesNotFitAfterVictims);
  }
}

TEST_CASE(
    "a preemptor within its min takes pods of borrowing quotas only, until they are back "
    "at their min",
    "[victim_selection]") {
  ClusterState state;
  state.UpsertNode(MakeNode("n1", 9000));
  state.UpsertQuota(MakeQuota("eq1", CpuList(10000), std::nullopt));
  state.UpsertQuota(MakeQuota("eq2", CpuList(2000), std::nullopt));
  state.UpsertQuota(MakeQuota("eq3", CpuList(4000), std::nullopt));
  // eq2 borrows 4 (used 6 > min 2) with high-priority pods; eq3 is within its min; eq1 has a pod
  // of its own.
  state.UpsertPod(MakePod("eq2", "a").Cpu(2000).Priority(100).Started(1).BoundTo("n1"));
  state.UpsertPod(MakePod("eq2", "b").Cpu(2000).Priority(100).Started(2).BoundTo("n1"));
  state.UpsertPod(MakePod("eq2", "c").Cpu(2000).Priority(100).Started(3).BoundTo("n1"));
  state.UpsertPod(MakePod("eq3", "d").Cpu(2000).Priority(0).BoundTo("n1"));
  state.UpsertPod(MakePod("eq1", "own").Cpu(1000).Priority(0).BoundTo("n1"));

  Pod p = MakePod("eq1", "p").Cpu(4000).Priority(0);  // eq1: 1 + 4 <= min 10
  REQUIRE_FALSE(MoreThanMin(state, p));
  NodeVictims v = Select(state, p, "n1");
  CHECK(v.candidate);
  // Whatever their priority; latest-started first; never eq3 (within min), never eq1's own.
  CHECK(KeysOf(v.victims) == Keys{"eq2/b", "eq2/c"});

  SECTION("its own namespace's lower-priority pods are not victims either") {
    // eq1/own (priority 0) would make room for 5 cpu with eq2's two borrowed pods.
    Pod five = MakePod("eq1", "five").Cpu(5000).Priority(10);
    REQUIRE_FALSE(MoreThanMin(state, five));
    NodeVictims none = Select(state, five, "n1");
    CHECK_FALSE(none.candidate);
    CHECK(none.why_not.message() == reasons::kDoesNotFitAfterVictims);
  }
  SECTION("the borrowing quota stops giving victims at its min") {
    // 6 cpu would need eq2/a too, which would take eq2 below its min.
    Pod bigger = MakePod("eq1", "bigger").Cpu(6000).Priority(0);
    NodeVictims none = Select(state, bigger, "n1");
    CHECK_FALSE(none.candidate);
    CHECK(none.why_not.message() == reasons::kDoesNotFitAfterVictims);
  }
}

TEST_CASE("a preemptor without a quota takes only lower-priority pods of namespaces without one",
          "[victim_selection]") {
  ClusterState state;
  state.UpsertNode(MakeNode("n1", 6000));
  state.UpsertQuota(MakeQuota("eq1", CpuList(0), std::nullopt));  // borrowing, priority 0
  state.UpsertPod(MakePod("free", "low").Cpu(2000).Priority(0).BoundTo("n1"));
  state.UpsertPod(MakePod("other", "high").Cpu(2000).Priority(50).BoundTo("n1"));
  state.UpsertPod(MakePod("eq1", "quota-pod").Cpu(2000).Priority(0).BoundTo("n1"));

  NodeVictims v = Select(state, MakePod("free", "p").Cpu(2000).Priority(10), "n1");
  CHECK(v.candidate);
  CHECK(KeysOf(v.victims) == Keys{"free/low"});

  NodeVictims none = Select(state, MakePod("free", "p").Cpu(4000).Priority(10), "n1");
  CHECK_FALSE(none.candidate);
  CHECK(none.why_not.message() == reasons::kDoesNotFitAfterVictims);
}

TEST_CASE("pods of namespaces without a quota are never victims of quota pods",
          "[victim_selection]") {
  ClusterState state;
  state.UpsertNode(MakeNode("n1", 4000));
  state.UpsertQuota(MakeQuota("eq1", CpuList(1000), std::nullopt));
  state.UpsertPod(MakePod("free", "a").Cpu(4000).Priority(0).BoundTo("n1"));
  SECTION("within its min") {
    NodeVictims v = Select(state, MakePod("eq1", "p").Cpu(1000).Priority(1000), "n1");
    CHECK_FALSE(v.candidate);
    CHECK(v.why_not.message() == reasons::kNoVictimsOnNode);
  }
  SECTION("borrowing") {
    NodeVictims v = Select(state, MakePod("eq1", "p").Cpu(2000).Priority(1000), "n1");
    CHECK_FALSE(v.candidate);
    CHECK(v.why_not.message() == reasons::kNoVictimsOnNode);
  }
}

TEST_CASE("the reprieve keeps the most important pods", "[victim_selection]") {
  ClusterState state;
  state.UpsertNode(MakeNode("n1", 8000));
  state.UpsertQuota(MakeQuota("eq1", CpuList(0), CpuList(100000)));
  AddIdleQuota(&state);
  state.UpsertPod(MakePod("eq1", "v1").Cpu(2000).Priority(1).Started(10).BoundTo("n1"));
  state.UpsertPod(MakePod("eq1", "v2").Cpu(2000).Priority(2).Started(10).BoundTo("n1"));
  state.UpsertPod(MakePod("eq1", "v3-old").Cpu(2000).Priority(3).Started(10).BoundTo("n1"));
  state.UpsertPod(MakePod("eq1", "v3-new").Cpu(2000).Priority(3).Started(20).BoundTo("n1"));

  struct Case {
    int64_t cpu;
    Keys victims;
  };
  const std::vector<Case> cases = {
      {2000, {"eq1/v1"}},
      {4000, {"eq1/v2", "eq1/v1"}},
      {6000, {"eq1/v3-new", "eq1/v2", "eq1/v1"}},
  };
  for (const auto& c : cases) {
    INFO(c.cpu);
    NodeVictims v = Select(state, MakePod("eq1", "p").Cpu(c.cpu).Priority(10), "n1");
    CHECK(v.candidate);
    CHECK(KeysOf(v.victims) == c.victims);
    CHECK(v.pdb_violations == 0);
  }
}

TEST_CASE("PDB-protected pods are reprieved first and violations are counted",
          "[victim_selection]") {
  ClusterState state;
  state.UpsertNode(MakeNode("n1", 6000));
  state.UpsertQuota(MakeQuota("eq1", CpuList(0), CpuList(100000)));
  AddIdleQuota(&state);
  state.UpsertPod(MakePod("eq1", "a").Cpu(2000).Priority(1).Started(10).BoundTo("n1"));
  state.UpsertPod(
      MakePod("eq1", "b").Cpu(2000).Priority(1).Started(20).Label("app", "db").BoundTo("n1"));
  state.UpsertPod(MakePod("eq1", "keep").Cpu(2000).Priority(100).BoundTo("n1"));

  SECTION("without a PDB the later-started pod goes") {
    NodeVictims v = Select(state, MakePod("eq1", "p").Cpu(2000).Priority(10), "n1");
    CHECK(KeysOf(v.victims) == Keys{"eq1/b"});
  }
  SECTION("a PDB with no disruptions left moves the choice to the other pod") {
    state.UpsertPdb(MakePdb("eq1", "db", {{"app", "db"}}, 0));
    NodeVictims v = Select(state, MakePod("eq1", "p").Cpu(2000).Priority(10), "n1");
    CHECK(KeysOf(v.victims) == Keys{"eq1/a"});
    CHECK(v.pdb_violations == 0);
  }
  SECTION("a violating victim is counted") {
    state.UpsertPdb(MakePdb("eq1", "db", {{"app", "db"}}, 0));
    NodeVictims v = Select(state, MakePod("eq1", "p").Cpu(4000).Priority(10), "n1");
    CHECK(KeysOf(v.victims) == Keys{"eq1/a", "eq1/b"});
    CHECK(v.pdb_violations == 1);
  }
  SECTION("a PDB that still allows a disruption is not violated") {
    state.UpsertPdb(MakePdb("eq1", "db", {{"app", "db"}}, 1));
    NodeVictims v = Select(state, MakePod("eq1", "p").Cpu(4000).Priority(10), "n1");
    CHECK(v.victims.size() == 2);
    CHECK(v.pdb_violations == 0);
  }
  SECTION("a PDB of another namespace does not apply") {
    state.UpsertPdb(MakePdb("other", "db", {{"app", "db"}}, 0));
    NodeVictims v = Select(state, MakePod("eq1", "p").Cpu(4000).Priority(10), "n1");
    CHECK(v.pdb_violations == 0);
  }
}

TEST_CASE("a PDB-violating pod made a victim by the quota test is counted, once",
          "[victim_selection]") {
  // The node has room; only the aggregated min needs eq2's borrowed pod gone.
  ClusterState state;
  state.UpsertNode(MakeNode("n1", 20000));
  state.UpsertQuota(MakeQuota("eq1", CpuList(4000), std::nullopt));
  state.UpsertQuota(MakeQuota("eq2", CpuList(2000), std::nullopt));
  state.UpsertPod(MakePod("eq2", "x").Cpu(2000).Started(1).BoundTo("n1"));
  state.UpsertPod(MakePod("eq2", "y").Cpu(2000).Started(2).Label("app", "y").BoundTo("n1"));
  state.UpsertPdb(MakePdb("eq2", "y", {{"app", "y"}}, 0));

  NodeVictims v = Select(state, MakePod("eq1", "p").Cpu(4000), "n1");
  CHECK(v.candidate);
  CHECK(KeysOf(v.victims) == Keys{"eq2/y"});
  CHECK(v.pdb_violations == 1);
}

TEST_CASE("a victim failing both node fit and the quota test is removed once",
          "[victim_selection]") {
  ClusterState state;
  state.UpsertNode(MakeNode("n1", 2000));
  state.UpsertQuota(MakeQuota("eq1", CpuList(2000), std::nullopt));
  state.UpsertQuota(MakeQuota("eq2", CpuList(1000), std::nullopt));
  state.UpsertPod(MakePod("eq2", "v").Cpu(2000).BoundTo("n1"));
  NodeVictims v = Select(state, MakePod("eq1", "p").Cpu(2000), "n1");
  CHECK(v.candidate);
  CHECK(KeysOf(v.victims) == Keys{"eq2/v"});
}

TEST_CASE("not a candidate when the quota still fails after every removal", "[victim_selection]") {
  ClusterState state;
  state.UpsertNode(MakeNode("n1", 2000));
  state.UpsertQuota(MakeQuota("eq1", CpuList(1000), std::nullopt));  // the only min: 1 cpu
  state.UpsertPod(MakePod("eq1", "low").Cpu(2000).Priority(0).BoundTo("n1"));
  NodeVictims v = Select(state, MakePod("eq1", "p").Cpu(2000).Priority(10), "n1");
  CHECK_FALSE(v.candidate);
  CHECK(v.victims.empty());
  CHECK(v.why_not.message() == reasons::kQuotaFailsAfterVictims);
}

TEST_CASE("not a candidate when a static check fails", "[victim_selection]") {
  ClusterState state;
  Node node = MakeNode("n1", 2000);
  node.taints.push_back({"dedicated", "x", "NoSchedule"});
  state.UpsertNode(node);
  state.UpsertPod(MakePod("free", "low").Cpu(2000).Priority(0).BoundTo("n1"));
  NodeVictims v = Select(state, MakePod("free", "p").Cpu(2000).Priority(10), "n1");
  CHECK_FALSE(v.candidate);
  CHECK(v.why_not.message() == "node(s) had untolerated taint {dedicated: x}");
}

TEST_CASE("nominated pods of priority >= the preemptor's hold room during victim selection",
          "[victim_selection]") {
  ClusterState state;
  state.UpsertNode(MakeNode("n1", 4000));
  state.UpsertPod(MakePod("free", "low").Cpu(2000).Priority(0).BoundTo("n1"));
  Pod p = MakePod("free", "p").Cpu(4000).Priority(10);
  CHECK(Select(state, p, "n1").candidate);
  SECTION("higher priority") {
    state.UpsertPod(MakePod("free", "nominated").Cpu(2000).Priority(20).NominatedTo("n1"));
    NodeVictims v = Select(state, p, "n1");
    CHECK_FALSE(v.candidate);
    CHECK(v.why_not.message() == reasons::kDoesNotFitAfterVictims);
  }
  SECTION("lower priority") {
    state.UpsertPod(MakePod("free", "nominated").Cpu(2000).Priority(5).NominatedTo("n1"));
    CHECK(Select(state, p, "n1").candidate);
  }
}

TEST_CASE("victim selection never changes the state", "[victim_selection]") {
  ClusterState state;
  state.UpsertNode(MakeNode("n1", 4000));
  state.UpsertQuota(MakeQuota("eq1", CpuList(0), std::nullopt));
  AddIdleQuota(&state);
  state.UpsertPod(MakePod("eq1", "low").Cpu(4000).Priority(0).BoundTo("n1"));
  const uint64_t version = state.version();
  const ResourceList used = state.Used("eq1");
  NodeVictims v = Select(state, MakePod("eq1", "p").Cpu(4000).Priority(10), "n1");
  CHECK(v.candidate);
  CHECK(state.version() == version);
  CHECK(state.Used("eq1") == used);
  CHECK(state.UsageOf("n1").requested.Get("cpu") == 4000);
}

TEST_CASE("SplitByPdbViolation", "[victim_selection]") {
  const NormalizedPod a = testing::Normalized(MakePod("ns", "a").Label("app", "web"));
  const NormalizedPod b = testing::Normalized(MakePod("ns", "b").Label("app", "web"));
  const NormalizedPod c = testing::Normalized(MakePod("ns", "c").Label("app", "web"));
  const NormalizedPod unlabelled = testing::Normalized(MakePod("ns", "u"));
  PodDisruptionBudget pdb = MakePdb("ns", "web", {{"app", "web"}}, 1);
  pdb.disrupted_pods = {"c"};  // already counted by the disruption controller
  std::vector<const NormalizedPod*> violating, non_violating;
  SplitByPdbViolation({pdb}, {&a, &b, &c, &unlabelled}, &violating, &non_violating);
  CHECK(KeysOf(violating) == Keys{"ns/b"});
  CHECK(KeysOf(non_violating) == Keys{"ns/a", "ns/c", "ns/u"});

  SECTION("an empty selector matches nothing") {
    PodDisruptionBudget empty = MakePdb("ns", "all", {}, 0);
    violating.clear();
    non_violating.clear();
    SplitByPdbViolation({empty}, {&a}, &violating, &non_violating);
    CHECK(violating.empty());
  }
}

}  // namespace
}  // namespace victim_selection_test
}  // namespace capext
