// ChangeJournal (core/change_journal.h): the ring of changes with its sequence and overflow, what
// ClusterState's mutation paths record once the journal is enabled, and that an upsert of what
// the state already holds records nothing.
#include "core/change_journal.h"

#include <catch2/catch.hpp>
#include <functional>
#include <string>
#include <vector>

#include "core/cluster_state.h"
#include "tests/support/builders.h"

namespace capext {
namespace change_journal_test {
namespace {

using testing::CpuList;
using testing::MakeNode;
using testing::MakePdb;
using testing::MakePod;
using testing::MakePriorityClass;
using testing::MakeQuota;
using testing::Normalized;
using Kind = ChangeJournal::Kind;
using Strings = std::vector<std::string>;

// --- the ring ----------------------------------------------------------------------------------

TEST_CASE("journal: changes after a sequence, by kind, sorted and without duplicates",
          "[change_journal]") {
  ChangeJournal journal(16);
  CHECK(journal.last_sequence() == 0);
  CHECK(journal.Since(0).empty());
  CHECK_FALSE(journal.Since(0).overflowed);

  journal.Record(Kind::kPod, "u2");
  journal.Record(Kind::kNode, "n1");
  journal.Record(Kind::kPod, "u1");
  journal.Record(Kind::kPod, "u2");
  journal.Record(Kind::kUsage, "eq1");
  journal.Record(Kind::kQuota, "eq2");
  journal.Record(Kind::kNominations, "eq1");
  journal.Record(Kind::kPriorityClass, "high");
  journal.Record(Kind::kPdb, "eq1");
  CHECK(journal.last_sequence() == 9);

  const ChangeJournal::Changes all = journal.Since(0);
  CHECK_FALSE(all.overflowed);
  CHECK(all.through == 9);
  CHECK(all.pods == Strings{"u1", "u2"});
  CHECK(all.nodes == Strings{"n1"});
  CHECK(all.usage == Strings{"eq1"});
  CHECK(all.quotas == Strings{"eq2"});
  CHECK(all.nominations == Strings{"eq1"});
  CHECK(all.priority_classes == Strings{"high"});
  CHECK(all.pdbs == Strings{"eq1"});

  // Only what came after the reader's sequence.
  const ChangeJournal::Changes tail = journal.Since(7);
  CHECK(tail.pods.empty());
  CHECK(tail.priority_classes == Strings{"high"});
  CHECK(tail.pdbs == Strings{"eq1"});
  CHECK(journal.Since(9).empty());
}

TEST_CASE("journal: the same change again after a reader read it is a new entry",
          "[change_journal]") {
  ChangeJournal journal(16);
  journal.Record(Kind::kNode, "n1");
  const uint64_t read = journal.Since(0).through;
  journal.Record(Kind::kNode, "n1");
  CHECK(journal.last_sequence() == 2);
  CHECK(journal.Since(read).nodes == Strings{"n1"});
}

TEST_CASE("journal: a reader further behind than the capacity is told it overflowed",
          "[change_journal]") {
  ChangeJournal journal(4);
  for (int i = 1; i <= 6; ++i)
    journal.Record(Kind::kPod, "u" + std::to_string(i));
  // Entries 3..6 are kept.
  CHECK(journal.Since(2).pods == Strings{"u3", "u4", "u5", "u6"});
  CHECK_FALSE(journal.Since(2).overflowed);
  const ChangeJournal::Changes lost = journal.Since(1);
  CHECK(lost.overflowed);
  CHECK(lost.pods.empty());
  CHECK(lost.through == 6);
  CHECK(journal.Since(0).overflowed);
  // A sequence this journal never gave out (a reader of another journal) is no place in it.
  CHECK(journal.Since(7).overflowed);
  // Slots are reused with their keys replaced.
  journal.Record(Kind::kNode, "n7");
  CHECK(journal.Since(6).nodes == Strings{"n7"});
  CHECK(journal.Since(6).pods.empty());
}

// --- what ClusterState records ---------------------------------------------------------------

struct JournaledState {
  JournaledState() {
    state.UpsertNode(MakeNode("n1", 8000));
    state.UpsertNode(MakeNode("n2", 8000));
    state.UpsertQuota(MakeQuota("eq1", CpuList(4000), CpuList(8000)));
    state.UpsertPod(MakePod("eq1", "run").Cpu(1000).BoundTo("n1"));
    state.UpsertPod(MakePod("eq1", "wait").Cpu(1000));
    state.EnableChangeJournal(64);
  }
  // The changes since the last call.
  ChangeJournal::Changes Next() {
    ChangeJournal::Changes out = state.change_journal()->Since(cursor);
    cursor = out.through;
    return out;
  }
  ClusterState state;
  uint64_t cursor = 0;
};

TEST_CASE("cluster state: no journal until enabled; a copy starts without one",
          "[change_journal]") {
  ClusterState state;
  CHECK(state.change_journal() == nullptr);
  state.UpsertNode(MakeNode("n1", 8000));
  state.EnableChangeJournal(8);
  REQUIRE(state.change_journal() != nullptr);
  CHECK(state.change_journal()->last_sequence() == 0);  // what came before is not in it
  CHECK(state.change_journal()->capacity() == 8);
  const ClusterState copy(state);
  CHECK(copy.change_journal() == nullptr);
}

TEST_CASE("cluster state: what each change records", "[change_journal]") {
  JournaledState s;
  SECTION("a pending pod added: the pod only") {
    s.state.UpsertPod(MakePod("eq1", "new").Cpu(1000));
    const auto c = s.Next();
    CHECK(c.pods == Strings{"uid-eq1-new"});
    CHECK(c.nodes.empty());
    CHECK(c.usage.empty());
  }
  SECTION("a pending pod bound: the pod, its node, its namespace's usage") {
    s.state.UpsertPod(MakePod("eq1", "wait").Cpu(1000).BoundTo("n2"));
    const auto c = s.Next();
    CHECK(c.pods == Strings{"uid-eq1-wait"});
    CHECK(c.nodes == Strings{"n2"});
    CHECK(c.usage == Strings{"eq1"});
  }
  SECTION("a bound pod's labels: the pod and its node (victim choice), not the usage") {
    s.state.UpsertPod(MakePod("eq1", "run").Cpu(1000).BoundTo("n1").Label("app", "x"));
    const auto c = s.Next();
    CHECK(c.pods == Strings{"uid-eq1-run"});
    CHECK(c.nodes == Strings{"n1"});
    CHECK(c.usage.empty());
  }
  SECTION("a bound pod finished: the pod, its node, the usage") {
    s.state.UpsertPod(MakePod("eq1", "run").Cpu(1000).BoundTo("n1").Phase(PodPhase::kSucceeded));
    const auto c = s.Next();
    CHECK(c.nodes == Strings{"n1"});
    CHECK(c.usage == Strings{"eq1"});
  }
  SECTION("a bound pod deleted: the pod, its node, the usage") {
    s.state.DeletePod("uid-eq1-run");
    const auto c = s.Next();
    CHECK(c.pods == Strings{"uid-eq1-run"});
    CHECK(c.nodes == Strings{"n1"});
    CHECK(c.usage == Strings{"eq1"});
  }
  SECTION("a pending pod deleted: the pod only") {
    s.state.DeletePod("uid-eq1-wait");
    const auto c = s.Next();
    CHECK(c.pods == Strings{"uid-eq1-wait"});
    CHECK(c.nodes.empty());
    CHECK(c.usage.empty());
  }
  SECTION("a reservation made and released: the pod, the node, the usage, each time") {
    s.state.Reserve("uid-eq1-wait", "n2", 500, 1000);
    auto c = s.Next();
    CHECK(c.pods == Strings{"uid-eq1-wait"});
    CHECK(c.nodes == Strings{"n2"});
    CHECK(c.usage == Strings{"eq1"});
    s.state.Expire(1000);
    c = s.Next();
    CHECK(c.pods == Strings{"uid-eq1-wait"});
    CHECK(c.nodes == Strings{"n2"});
    CHECK(c.usage == Strings{"eq1"});
  }
  SECTION("our nomination made and expired: the pod, its namespace's nominations, the node") {
    s.state.Nominate("uid-eq1-wait", "n2", 1000);
    auto c = s.Next();
    CHECK(c.pods == Strings{"uid-eq1-wait"});
    CHECK(c.nominations == Strings{"eq1"});
    CHECK(c.nodes == Strings{"n2"});
    CHECK(c.usage.empty());
    s.state.Expire(999);
    CHECK(s.Next().empty());
    s.state.Expire(1000);
    c = s.Next();
    CHECK(c.pods == Strings{"uid-eq1-wait"});
    CHECK(c.nominations == Strings{"eq1"});
    CHECK(c.nodes == Strings{"n2"});
  }
  SECTION("status.nominatedNodeName set on a pending pod: a nomination on that node") {
    s.state.UpsertPod(MakePod("eq1", "wait").Cpu(1000).NominatedTo("n2"));
    const auto c = s.Next();
    CHECK(c.pods == Strings{"uid-eq1-wait"});
    CHECK(c.nominations == Strings{"eq1"});
    CHECK(c.nodes == Strings{"n2"});
    // The same pod again: nothing (a resync), though the state re-puts its nomination.
    s.state.UpsertPod(MakePod("eq1", "wait").Cpu(1000).NominatedTo("n2"));
    CHECK(s.Next().empty());
  }
  SECTION("a node's spec, a node added, a node deleted") {
    s.state.UpsertNode(MakeNode("n1", 16000));
    CHECK(s.Next().nodes == Strings{"n1"});
    s.state.UpsertNode(MakeNode("n3", 8000));
    CHECK(s.Next().nodes == Strings{"n3"});
    s.state.DeleteNode("n2");
    CHECK(s.Next().nodes == Strings{"n2"});
    s.state.DeleteNode("never-seen");
    CHECK(s.Next().empty());
  }
  SECTION("a quota's spec; its status.used alone changes nothing; a quota deleted") {
    ElasticQuota q = MakeQuota("eq1", CpuList(4000), CpuList(8000));
    q.status_used = CpuList(1000);
    q.resource_version = "42";
    s.state.UpsertQuota(q);
    CHECK(s.Next().empty());
    q.max = CpuList(9000);
    s.state.UpsertQuota(q);
    CHECK(s.Next().quotas == Strings{"eq1"});
    q.weight_milli = 3000;  // the fair-share weight orders gate mode's admission
    s.state.UpsertQuota(q);
    CHECK(s.Next().quotas == Strings{"eq1"});
    // A second quota in the namespace is not used: nothing changes.
    ElasticQuota other = MakeQuota("eq1", CpuList(1), CpuList(1));
    other.name = "other";
    s.state.UpsertQuota(other);
    CHECK(s.Next().empty());
    s.state.DeleteQuota("eq1", "other");
    CHECK(s.Next().empty());
    s.state.DeleteQuota("eq1", "eq1");
    CHECK(s.Next().quotas == Strings{"eq1"});
    s.state.UpsertQuota(MakeQuota("eq2", CpuList(1000), std::nullopt));
    CHECK(s.Next().quotas == Strings{"eq2"});
  }
  SECTION("PriorityClasses: added, the same again (nothing), changed, deleted") {
    s.state.UpsertPriorityClass(MakePriorityClass("high", 1000));
    CHECK(s.Next().priority_classes == Strings{"high"});
    s.state.UpsertPriorityClass(MakePriorityClass("high", 1000));
    CHECK(s.Next().empty());
    s.state.UpsertPriorityClass(MakePriorityClass("high", 2000));
    CHECK(s.Next().priority_classes == Strings{"high"});
    s.state.DeletePriorityClass("high");
    CHECK(s.Next().priority_classes == Strings{"high"});
    s.state.DeletePriorityClass("high");
    CHECK(s.Next().empty());
  }
  SECTION("PodDisruptionBudgets: upserted and deleted, by namespace") {
    s.state.UpsertPdb(MakePdb("eq1", "pdb", {{"app", "x"}}, 0));
    CHECK(s.Next().pdbs == Strings{"eq1"});
    s.state.DeletePdb("eq1", "pdb");
    CHECK(s.Next().pdbs == Strings{"eq1"});
  }
}

TEST_CASE("cluster state: a resync of everything the state holds records nothing",
          "[change_journal]") {
  JournaledState s;
  s.state.UpsertNode(MakeNode("n1", 8000));
  s.state.UpsertNode(MakeNode("n2", 8000));
  s.state.UpsertQuota(MakeQuota("eq1", CpuList(4000), CpuList(8000)));
  s.state.UpsertPod(MakePod("eq1", "run").Cpu(1000).BoundTo("n1"));
  s.state.UpsertPod(MakePod("eq1", "wait").Cpu(1000));
  CHECK(s.Next().empty());
  CHECK(s.state.change_journal()->last_sequence() == 0);
}

// --- SameForDecisions --------------------------------------------------------------------------

TEST_CASE("SameForDecisions: a change of any member of Pod is a change", "[change_journal]") {
  const Pod base =
      MakePod("eq1", "p")
          .Cpu(1000)
          .Priority(5)
          .Created(10)
          .Started(20)
          .Label("app", "x")
          .NodeSelector("zone", "a")
          .Tolerate({"k", "Equal", "v", "NoSchedule"})
          .AffinityTerm(testing::ExpressionsTerm({testing::Requirement("zone", "In", {"a", "b"})}));
  CHECK(SameForDecisions(Normalized(base), Normalized(base)));
  const std::vector<std::pair<const char*, std::function<void(Pod&)>>> changes = {
      {"ns", [](Pod& p) { p.ns = "eq2"; }},
      {"requests", [](Pod& p) { p.requests.Set("cpu", 2000); }},
      {"priority", [](Pod& p) { p.spec_priority = 6; }},
      {"preemption_policy", [](Pod& p) { p.spec_preemption_policy = PreemptionPolicy::kNever; }},
      {"creation_ms", [](Pod& p) { p.creation_ms = 11; }},
      {"start_ms", [](Pod& p) { p.start_ms = 21; }},
      {"reserved_ms", [](Pod& p) { p.reserved_ms = 30; }},
      {"accelerator_model", [](Pod& p) { p.accelerator_model = "V100"; }},
      {"uid", [](Pod& p) { p.uid = "other"; }},
      {"name", [](Pod& p) { p.name = "q"; }},
      {"node_name", [](Pod& p) { p.node_name = "n1"; }},
      {"nominated_node_name", [](Pod& p) { p.nominated_node_name = "n1"; }},
      {"phase", [](Pod& p) { p.phase = PodPhase::kFailed; }},
      {"reclaim_record", [](Pod& p) { p.reclaim_record = "n2@2026-01-01T00:00:00.000Z"; }},
      {"terminating", [](Pod& p) { p.terminating = true; }},
      {"unschedulable_condition", [](Pod& p) { p.unschedulable_condition = true; }},
      {"priority_class_name", [](Pod& p) { p.priority_class_name = "high"; }},
      {"scheduler_name", [](Pod& p) { p.scheduler_name = "other-scheduler"; }},
      {"labels", [](Pod& p) { p.labels["app"] = "y"; }},
      {"group",
       [](Pod& p) {
         GroupRef group = *p.group;
         group.name = "g";
         p.group = group;
       }},
      {"min_member_annotation", [](Pod& p) { p.min_member_annotation = 3; }},
      {"quota_gated", [](Pod& p) { p.quota_gated = true; }},
      {"other_gates", [](Pod& p) { p.other_gates = true; }},
      {"admitted_ms", [](Pod& p) { p.admitted_ms = 5; }},
      {"has_controller", [](Pod& p) { p.has_controller = true; }},
      {"node_selector", [](Pod& p) { p.node_selector["zone"] = "b"; }},
      {"tolerations", [](Pod& p) { p.tolerations[0].effect = "NoExecute"; }},
      {"required_affinity",
       [](Pod& p) { p.required_affinity[0].match_expressions[0].values.push_back("c"); }},
      // A claim that does not exist: a device problem
      // (docs/devices.md#7-bad-input-the-pod-waits-never-admitted-uncounted).
      {"resource_claims",
       [](Pod& p) {
         p.resource_claims.push_back({"g", "missing", "", false});
       }},
  };
  for (const auto& [member, change] : changes) {
    INFO(member);
    Pod changed = base;
    change(changed);
    CHECK_FALSE(SameForDecisions(Normalized(base), Normalized(changed)));
  }
  // What a write needs (docs/workloads-live.md#the-gate-removal) is no decision's: a pod written
  // again with nothing else changed (a new resourceVersion) journals nothing.
  Pod rewritten = base;
  rewritten.patch_basis = PodPatchBasis{"42", 0, true};
  CHECK(SameForDecisions(Normalized(base), Normalized(rewritten)));
}

TEST_CASE("SameForDecisions: a change of any member of Node is a change", "[change_journal]") {
  Node base = MakeNode("n1", 8000);
  base.taints.push_back({"k", "v", "NoSchedule"});
  CHECK(SameForDecisions(base, base));
  const std::vector<std::pair<const char*, std::function<void(Node&)>>> changes = {
      {"name", [](Node& n) { n.name = "n2"; }},
      {"allocatable", [](Node& n) { n.allocatable.Set("cpu", 9000); }},
      {"labels", [](Node& n) { n.labels["zone"] = "a"; }},
      {"taints", [](Node& n) { n.taints[0].effect = "NoExecute"; }},
      {"unschedulable", [](Node& n) { n.unschedulable = true; }},
  };
  for (const auto& [member, change] : changes) {
    INFO(member);
    Node changed = base;
    change(changed);
    CHECK_FALSE(SameForDecisions(base, changed));
  }
}

// A member added to Pod, Node or ElasticQuota must be taught to SameForDecisions (or
// QuotaSpecDiffers) and to the tests above: a change the journal does not see can leave a pending
// pod unplanned forever. These sizes (Debian 12, x86-64) move when a member is added (and when a
// member's type changes size: then check that nothing was added).
TEST_CASE("SameForDecisions: Pod, Node and ElasticQuota have the members compared",
          "[change_journal]") {
  CHECK(sizeof(Pod) == 464);
  CHECK(sizeof(Node) == 120);
  CHECK(sizeof(ElasticQuota) == 336);
}

}  // namespace
}  // namespace change_journal_test
}  // namespace capext
