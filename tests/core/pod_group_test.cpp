// Pod groups in the cluster state (docs/workloads.md#1-groups): membership, minMember's
// precedence, member states, need and complete; holds without a node ("Holds").
#include "core/pod_group.h"

#include <catch2/catch.hpp>
#include <string>

#include "core/cluster_state.h"
#include "core/quota_admission.h"
#include "tests/support/builders.h"
#include "tests/support/workload_pods.h"

namespace capext {
namespace pod_group_test {
namespace {

using testing::AdmittedAt;
using testing::CoschedulingKey;
using testing::CpuList;
using testing::Gated;
using testing::MakeNode;
using testing::MakePod;
using testing::MakeQuota;
using testing::Member;
using testing::PodGroupOf;

ClusterState StateWithQuota(int64_t max_cpu = 10000) {
  ClusterState state;
  state.UpsertNode(MakeNode("n1", 100000));
  state.UpsertQuota(MakeQuota("eq1", CpuList(max_cpu), CpuList(max_cpu)));
  return state;
}

TEST_CASE("group keys: coscheduling and Workload API groups of the same name differ",
          "[workloads]") {
  Pod a = Member(MakePod("eq1", "a"), "job");
  Pod b = MakePod("eq1", "b");
  b.group = GroupRef{kWorkloadApiGroup, "job", "workers", "2"};
  CHECK(GroupKeyOf(a) == GroupKey{"scheduling.x-k8s.io", "eq1", "job"});
  CHECK(GroupKeyOf(b) == GroupKey{"scheduling.k8s.io", "eq1", "job/workers/2"});
  CHECK(GroupKeyOf(a).Display() == "gang eq1/job");
  CHECK(GroupKeyOf(MakePod("eq1", "c")).empty());
}

TEST_CASE("minMember: the object's, else the oldest member's annotation, else single pods",
          "[workloads]") {
  ClusterState state = StateWithQuota();
  const GroupKey key = CoschedulingKey("eq1", "g");
  state.UpsertPod(Member(MakePod("eq1", "p1").Created(2), "g", 5));
  state.UpsertPod(Member(MakePod("eq1", "p0").Created(1), "g", 3));
  const GroupView* view = state.FindGroup(key);
  REQUIRE(view != nullptr);
  CHECK(view->min_member == 3);
  CHECK(view->source == MinMemberSource::kAnnotation);
  CHECK(view->annotations_disagree);
  state.UpsertPodGroup(PodGroupOf("eq1", "g", 4, 30000));
  view = state.FindGroup(key);
  CHECK(view->min_member == 4);
  CHECK(view->source == MinMemberSource::kObject);
  CHECK(view->schedule_timeout_ms == 30000);
  state.DeletePodGroup(key);
  CHECK(state.FindGroup(key)->min_member == 3);
  // Without annotations and object: single pods.
  state.UpsertPod(Member(MakePod("eq1", "s").Created(1), "other"));
  CHECK_FALSE(state.FindGroup(CoschedulingKey("eq1", "other"))->IsGang());
  CHECK(state.FindGroup(CoschedulingKey("eq1", "other"))->need() == 0);
  // The last member gone: the group is forgotten.
  state.DeletePod(StoreKeyOf(MakePod("eq1", "s")));
  CHECK(state.FindGroup(CoschedulingKey("eq1", "other")) == nullptr);
}

TEST_CASE("member states give active, need and complete; core and surplus by start",
          "[workloads]") {
  ClusterState state = StateWithQuota(100000);
  const GroupKey key = CoschedulingKey("eq1", "g");
  state.UpsertPodGroup(PodGroupOf("eq1", "g", 3));
  state.UpsertPod(Member(MakePod("eq1", "b").Cpu(1000).BoundTo("n1").Started(20), "g"));
  state.UpsertPod(Member(MakePod("eq1", "a").Cpu(1000).BoundTo("n1").Started(10), "g"));
  state.UpsertPod(AdmittedAt(Member(MakePod("eq1", "h").Cpu(1000).Created(1), "g"), 30));
  state.UpsertPod(Gated(Member(MakePod("eq1", "x").Cpu(1000).Created(2), "g")));
  const GroupView* view = state.FindGroup(key);
  CHECK(view->bound == 2);
  CHECK(view->admitted == 1);
  CHECK(view->gated == 1);
  CHECK(view->active() == 3);
  CHECK(view->need() == 0);
  CHECK(view->starting());
  CHECK(view->first_admitted_ms == 30);
  REQUIRE(view->members.size() == 4);
  CHECK(view->members[0].pod->name == "a");  // earliest start first
  CHECK(view->members[1].pod->name == "b");
  CHECK(view->members[2].pod->name == "h");
  CHECK(view->members[3].pod->name == "x");
  // The admitted one binds: complete, and it stays complete after a loss.
  state.UpsertPod(Member(MakePod("eq1", "h").Cpu(1000).Created(1).BoundTo("n1").Started(40), "g"));
  CHECK(state.FindGroup(key)->complete);
  state.DeletePod(StoreKeyOf(MakePod("eq1", "a")));
  view = state.FindGroup(key);
  CHECK(view->complete);
  CHECK(view->need() == 1);
  CHECK_FALSE(view->starting());
}

TEST_CASE("gated pods are not pending, not in used", "[workloads]") {
  ClusterState state = StateWithQuota();
  state.UpsertPod(Gated(MakePod("eq1", "g").Cpu(1000)));
  state.UpsertPod(MakePod("eq1", "p").Cpu(1000));
  Pod other = MakePod("eq1", "o");
  other.other_gates = true;
  state.UpsertPod(other);
  REQUIRE(state.PendingPods().size() == 1);
  CHECK(state.PendingPods()[0]->name == "p");
  CHECK(state.Used("eq1").Get("cpu") == 0);
}

TEST_CASE("holds count in the leaf, its ancestors and the totals, never on a node",
          "[workloads][holds]") {
  ClusterState state;
  state.UpsertNode(MakeNode("n1", 100000));
  state.UpsertQuota(MakeQuota("team", CpuList(4000), CpuList(20000)));
  ElasticQuota leaf = MakeQuota("eq1", CpuList(2000), CpuList(10000));
  leaf.parent = "team/team";
  state.UpsertQuota(leaf);
  state.UpsertPod(AdmittedAt(MakePod("eq1", "a").Cpu(3000), 5));  // derived hold
  state.UpsertPod(MakePod("eq1", "b").Cpu(1000));
  state.Hold(StoreKeyOf(MakePod("eq1", "b")), 6, 1000);  // explicit hold
  CHECK(state.Used("eq1").Get("cpu") == 4000);
  CHECK(state.ledger().Held("eq1").Get("cpu") == 4000);
  const QuotaTree& tree = state.ledger().tree();
  CHECK(state.ledger().NodeUsed(tree.LeafOf("eq1")).Get("cpu") == 4000);
  CHECK(state.ledger().NodeUsed(tree.parent(tree.QuotaNodeOf("eq1"))).Get("cpu") == 4000);
  CHECK(state.totals().used.Get("cpu") == 4000);
  CHECK(state.UsageOf("n1").pods.empty());
  // Held pods are still pending for scheduling.
  CHECK(state.PendingPods().size() == 2);
  // Never twice: a second Hold renews; the explicit hold expires.
  state.Hold(StoreKeyOf(MakePod("eq1", "b")), 7, 2000);
  CHECK(state.Used("eq1").Get("cpu") == 4000);
  CHECK(state.FindHold(StoreKeyOf(MakePod("eq1", "b")))->held_ms == 6);
  state.Expire(1500);
  CHECK(state.Used("eq1").Get("cpu") == 4000);
  state.Expire(2000);
  CHECK(state.Used("eq1").Get("cpu") == 3000);
  // A copy keeps the holds.
  ClusterState copy(state);
  CHECK(copy.Used("eq1").Get("cpu") == 3000);
  CHECK(copy.totals().used.Get("cpu") == 3000);
}

TEST_CASE("a hold turns into a reservation and then usage, never both; a failed bind restores it",
          "[workloads][holds]") {
  ClusterState state = StateWithQuota();
  const std::string a = StoreKeyOf(MakePod("eq1", "a"));
  const std::string b = StoreKeyOf(MakePod("eq1", "b"));
  state.UpsertPod(AdmittedAt(MakePod("eq1", "a").Cpu(2000), 5));
  state.UpsertPod(MakePod("eq1", "b").Cpu(1000));
  state.Hold(b, 6, 100000);
  CHECK(state.Used("eq1").Get("cpu") == 3000);
  state.Reserve(a, "n1", 10, 1000);
  state.Reserve(b, "n1", 10, 1000);
  CHECK(state.FindHold(a) == nullptr);
  CHECK(state.FindHold(b) == nullptr);
  CHECK(state.Used("eq1").Get("cpu") == 3000);
  CHECK(state.ledger().Reserved("eq1").Get("cpu") == 3000);
  // b's bind fails: its explicit hold comes back; a is seen bound: usage.
  state.ReleaseReservation(b);
  CHECK(state.FindHold(b) != nullptr);
  state.UpsertPod(AdmittedAt(MakePod("eq1", "a").Cpu(2000).BoundTo("n1"), 5));
  CHECK(state.FindHold(a) == nullptr);
  CHECK(state.Used("eq1").Get("cpu") == 3000);
  CHECK(state.ledger().Bound("eq1").Get("cpu") == 2000);
  // Deleted or terminal: the hold ends.
  state.UpsertPod(MakePod("eq1", "b").Cpu(1000).Phase(PodPhase::kFailed));
  CHECK(state.FindHold(b) == nullptr);
  CHECK(state.Used("eq1").Get("cpu") == 2000);
  // Hold refuses pods with another gate, bound and unknown pods.
  Pod other_gate = MakePod("eq1", "g").Cpu(1000);
  other_gate.other_gates = true;
  state.UpsertPod(other_gate);
  state.Hold(StoreKeyOf(MakePod("eq1", "g")), 1, 100);
  state.Hold(a, 1, 100);
  state.Hold("nobody", 1, 100);
  CHECK(state.holds().empty());
}

// docs/workloads.md#2-holds-quota-without-a-node, a gate removal in flight.
TEST_CASE("a pod still carrying our gate holds while its gate removal is in flight",
          "[workloads][holds]") {
  ClusterState state = StateWithQuota(4000);
  const Pod gated = Gated(MakePod("eq1", "g").Cpu(3000));
  const std::string key = StoreKeyOf(gated);
  state.UpsertPod(gated);
  CHECK(state.Used("eq1").Get("cpu") == 0);
  state.Hold(key, 10, 1000);
  REQUIRE(state.FindHold(key) != nullptr);
  CHECK_FALSE(state.FindHold(key)->derived);
  CHECK(state.Used("eq1").Get("cpu") == 3000);
  // A watch event that still shows the gate (the pod's status changed) keeps the hold.
  Pod again = gated;
  again.labels["touched"] = "yes";
  state.UpsertPod(again);
  REQUIRE(state.FindHold(key) != nullptr);
  CHECK(state.Used("eq1").Get("cpu") == 3000);
  // Another pod sees the room taken: 3 + 2 > 4.
  CHECK_FALSE(CheckQuota(state, state.Normalize(MakePod("eq1", "o").Cpu(2000))).ok());
  // Another gate appearing ends it: the pod may not go.
  Pod other = again;
  other.other_gates = true;
  state.UpsertPod(other);
  CHECK(state.FindHold(key) == nullptr);
  CHECK(state.Used("eq1").Get("cpu") == 0);
  // Held again with our gate alone, then the patch lands (ungated, admitted-at): derived.
  state.UpsertPod(gated);
  state.Hold(key, 10, 1000);
  state.UpsertPod(AdmittedAt(MakePod("eq1", "g").Cpu(3000), 12));
  REQUIRE(state.FindHold(key) != nullptr);
  CHECK(state.FindHold(key)->derived);
  CHECK(state.Used("eq1").Get("cpu") == 3000);
  // Our gate alone never derives a hold, even with admitted-at.
  Pod stamped_gated = Gated(AdmittedAt(MakePod("eq1", "h").Cpu(1000), 12));
  state.UpsertPod(stamped_gated);
  CHECK(state.FindHold(StoreKeyOf(stamped_gated)) == nullptr);
}

TEST_CASE("a pod's own hold is not counted against itself", "[workloads][holds]") {
  ClusterState state = StateWithQuota(4000);
  state.UpsertPod(MakePod("eq1", "x").Cpu(1000).BoundTo("n1"));
  state.UpsertPod(AdmittedAt(MakePod("eq1", "a").Cpu(3000), 5));  // used 1 + held 3 = max 4
  const NormalizedPod& a = *state.FindPod(StoreKeyOf(MakePod("eq1", "a")));
  CHECK(CheckQuota(state, a).ok());
  // Another pod sees the hold: 4 + 1 > 4.
  const Status other = CheckQuota(state, state.Normalize(MakePod("eq1", "o").Cpu(1000)));
  CHECK(other.message() ==
        "pod eq1/o rejected: ElasticQuota eq1/eq1 would exceed max: cpu used 4 + request 1 > "
        "max 4");
  // The released hold leaves nothing behind.
  state.ReleaseHold(StoreKeyOf(MakePod("eq1", "a")));
  CHECK(state.Used("eq1").Get("cpu") == 1000);
}

}  // namespace
}  // namespace pod_group_test
}  // namespace capext
