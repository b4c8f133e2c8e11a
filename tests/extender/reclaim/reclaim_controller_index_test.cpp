// The reclaim controller's wake-up rules (extender/reclaim/reclaim_controller_index.cpp, derived
// from the plugins' declared changes as reclaim_controller.h says): after a pass, a pending pod is
// planned again only when a change concerns it, and nothing is planned when nothing changed.
// Planning is counted with ReclaimController::last_pass() (the pods planned in the last pass),
// never with timings.
#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "tests/extender/reclaim/reclaim_harness.h"

namespace capext {
namespace reclaim_controller_index_test {
namespace {

using namespace reclaim_testing;  // NOLINT: the harness of this folder
using testing::MakePdb;

bool MetricsContain(Harness& h, const std::string& line) {
  return h.metrics.Render().find(line) != std::string::npos;
}

// seed-002's nodes and running pods, a third quota eq3 {min 2, max 4}, a pod of a namespace
// without quota on n2 (n1 has 1 cpu free, n2 3), and five pending pods, one per verdict class:
//   eq3/huge   5 cpu: its request alone exceeds eq3's max 4    QuotaExceeded (unresolvable)
//   eq1/big    5 cpu: eq1 used 8 + 5 > max 10                  QuotaExceeded
//   eq2/small  1 cpu: fits n1                                  Fits (watches n1)
//   eq2/wide  10 cpu: sum of used 11 + 10 > sum of mins 20     QuotaExceeded
//   eq2/mid    4 cpu, preemptionPolicy Never: fits no node     Unschedulable
void LoadMixed(Harness& h) {
  LoadSeed002(h);
  Change(h, [&](ClusterState& s) {
    s.DeletePod("u-job-2");
    s.UpsertQuota(MakeQuota("eq3", CpuList(2000), CpuList(4000)));
    s.UpsertPod(MakePod("other", "daemon").Uid("u-daemon").Cpu(1000).BoundTo("n2").Started(1));
    const int64_t t = kStartMs - 60'000;
    s.UpsertPod(MakePod("eq3", "huge").Uid("u-huge").Cpu(5000).Created(t));
    s.UpsertPod(MakePod("eq1", "big").Uid("u-big").Cpu(5000).Created(t + 1));
    s.UpsertPod(MakePod("eq2", "small").Uid("u-small").Cpu(1000).Created(t + 2));
    s.UpsertPod(MakePod("eq2", "wide").Uid("u-wide").Cpu(10'000).Created(t + 3));
    s.UpsertPod(MakePod("eq2", "mid").Uid("u-mid").Cpu(4000).PreemptionNever().Created(t + 4));
  });
}

const Keys kAllMixed = {"eq3/huge", "eq1/big", "eq2/small", "eq2/wide", "eq2/mid"};

TEST_CASE("wake-up: every pod once, then nothing while nothing changes", "[reclaim][wake]") {
  Harness h;
  LoadMixed(h);
  CHECK(h.controller->RunOnce() == 0);
  CHECK(Planned(h) == kAllMixed);
  CHECK(h.controller->last_pass().rederived);
  CHECK(h.controller->last_pass().tracked == 5);

  CHECK(h.Verdict("u-huge")->verdict.code == VerdictCode::kQuotaExceeded);
  CHECK(h.Verdict("u-big")->verdict.code == VerdictCode::kQuotaExceeded);
  CHECK(h.Verdict("u-small")->verdict.code == VerdictCode::kFits);
  CHECK(h.Verdict("u-wide")->verdict.code == VerdictCode::kQuotaExceeded);
  CHECK(h.Verdict("u-mid")->verdict.code == VerdictCode::kUnschedulable);
  // The rules derived from the built-in plugins' declarations (reclaim_controller.h).
  CHECK(h.controller->WakeRuleOf("u-huge")->on == kWakeOnQuota);
  const uint32_t blocked = kWakeOnQuota | kWakeOnClusterQuota | kWakeOnAnyNode;
  CHECK(h.controller->WakeRuleOf("u-big")->on == blocked);
  CHECK(h.controller->WakeRuleOf("u-wide")->on == blocked);
  CHECK(h.controller->WakeRuleOf("u-mid")->on == blocked);
  CHECK(h.controller->WakeRuleOf("u-small")->on ==
        (kWakeOnQuota | kWakeOnClusterQuota | kWakeOnWatchedNode));
  CHECK(h.controller->WakeRuleOf("u-small")->node == "n1");

  for (int i = 0; i < 30; ++i) {
    CHECK(Pass(h).empty());
    CHECK_FALSE(h.controller->last_pass().rederived);
  }
  // The verdicts stay on the board though nothing is planned.
  CHECK(h.controller->board().size() == 5);
  CHECK(MetricsContain(h, "capacity_extender_reclaim_pods_planned_total 5"));
  CHECK(MetricsContain(h, "capacity_extender_reclaim_passes_total 31"));
  CHECK(MetricsContain(h, "capacity_extender_reclaim_planned_last_pass 0"));
  CHECK(MetricsContain(h, "capacity_extender_reclaim_backlog 0"));
  CHECK(MetricsContain(h, "capacity_extender_reclaim_tracked_pods 5"));
}

TEST_CASE("wake-up: a change re-plans exactly the pods it concerns", "[reclaim][wake]") {
  Harness h;
  LoadMixed(h);
  h.controller->RunOnce();
  REQUIRE(Pass(h).empty());
  const Keys blocked_and_fits = {"eq1/big", "eq2/small", "eq2/wide", "eq2/mid"};
  const Keys any_node = {"eq1/big", "eq2/wide", "eq2/mid"};

  SECTION("its own spec: that pod alone") {
    Change(h, [](ClusterState& s) {
      s.UpsertPod(MakePod("eq1", "big").Uid("u-big").Cpu(6000).Created(kStartMs - 59'999));
    });
    CHECK(Pass(h) == Keys{"eq1/big"});
    CHECK(h.Verdict("u-big")->verdict.message.find("request 6") != std::string::npos);
  }
  SECTION("its quota's max: that quota's pods alone (the sum of mins did not move)") {
    Change(h,
           [](ClusterState& s) { s.UpsertQuota(MakeQuota("eq3", CpuList(2000), CpuList(3000))); });
    CHECK(Pass(h) == Keys{"eq3/huge"});
    CHECK(h.Verdict("u-huge")->verdict.message.find("max 3") != std::string::npos);
  }
  SECTION("a quota's min: every pod the cluster-wide rule concerns, not the unresolvable one") {
    Change(h, [](ClusterState& s) {
      s.UpsertQuota(MakeQuota("eq1", CpuList(5000), CpuList(10'000)));
    });
    CHECK(Pass(h) == blocked_and_fits);
    CHECK(h.Verdict("u-wide")->verdict.message.find("min 19") != std::string::npos);
  }
  SECTION("a quota's used (a running pod gone): its pods, the cluster-wide rule, that node") {
    Change(h, [](ClusterState& s) { s.DeletePod("u-job-a"); });  // eq1, on n1
    CHECK(Pass(h) == blocked_and_fits);
  }
  SECTION("another quota's used: its pods too (the subscription covers used and spec)") {
    Change(h, [](ClusterState& s) {
      s.UpsertPod(MakePod("eq3", "run").Uid("u-eq3-run").Cpu(1000).BoundTo("n2").Started(2));
    });
    CHECK(Pass(h) == kAllMixed);
    CHECK(h.Verdict("u-huge")->verdict.message.find("request alone exceeds") != std::string::npos);
  }
  SECTION("room on a node no quota pod left (n2): pods waiting for any node, not n1's watcher") {
    Change(h, [](ClusterState& s) { s.DeletePod("u-daemon"); });
    CHECK(Pass(h) == any_node);
    CHECK(h.Verdict("u-mid")->verdict.code == VerdictCode::kFits);  // 4 cpu free on n2 now
  }
  SECTION("the node a Fits pod watches") {
    Node n1 = MakeNode("n1", 9000, 32 * kGi);
    Change(h, [&](ClusterState& s) { s.UpsertNode(n1); });
    CHECK(Pass(h) == blocked_and_fits);
  }
  SECTION("a node added") {
    Change(h, [](ClusterState& s) { s.UpsertNode(MakeNode("n3", 2000, 32 * kGi)); });
    CHECK(Pass(h) == any_node);
  }
  SECTION("a nomination in a quota namespace (status.nominatedNodeName)") {
    Change(h, [](ClusterState& s) {
      s.UpsertPod(MakePod("eq2", "small")
                      .Uid("u-small")
                      .Cpu(1000)
                      .Created(kStartMs - 59'998)
                      .NominatedTo("n1"));
    });
    CHECK(Pass(h) == blocked_and_fits);
  }
  SECTION("a PodDisruptionBudget: nobody here holds an eviction plan") {
    Change(h, [](ClusterState& s) { s.UpsertPdb(MakePdb("eq1", "pdb", {{"app", "x"}}, 0)); });
    CHECK(Pass(h).empty());
  }
  SECTION("a PriorityClass: everyone") {
    Change(h, [](ClusterState& s) { s.UpsertPriorityClass(MakePriorityClass("urgent", 5)); });
    CHECK(Pass(h) == kAllMixed);
  }
  SECTION("a pending pod added: that pod; one of a namespace without quota: nothing") {
    h.Add(MakePod("eq1", "new").Uid("u-new").Cpu(1000).Created(kStartMs));
    h.Add(MakePod("other", "free").Uid("u-free").Cpu(1000).Created(kStartMs));
    CHECK(Pass(h) == Keys{"eq1/new"});
    CHECK(h.controller->last_pass().tracked == 6);
  }
  SECTION("a pending pod deleted: nothing planned, and it leaves /pending") {
    Change(h, [](ClusterState& s) { s.DeletePod("u-mid"); });
    CHECK(Pass(h).empty());
    CHECK_FALSE(h.Verdict("u-mid"));
    CHECK(h.controller->last_pass().tracked == 4);
  }
  SECTION("a quota removed: its pending pods leave; added back: they return") {
    Change(h, [](ClusterState& s) { s.DeleteQuota("eq3", "eq3"); });
    CHECK(Pass(h) == blocked_and_fits);  // the sum of mins moved
    CHECK_FALSE(h.Verdict("u-huge"));
    Change(h,
           [](ClusterState& s) { s.UpsertQuota(MakeQuota("eq3", CpuList(2000), CpuList(4000))); });
    CHECK(Pass(h) == kAllMixed);
    CHECK(h.Verdict("u-huge"));
  }
  SECTION("a resync of everything (status.used written, the same objects again): nothing") {
    Change(h, [](ClusterState& s) {
      ElasticQuota eq1 = MakeQuota("eq1", CpuList(6000), CpuList(10'000));
      eq1.status_used = CpuList(8000);
      eq1.resource_version = "7";
      s.UpsertQuota(eq1);
      const ClusterState copy(s);
      for (const auto& [name, node] : copy.nodes())
        s.UpsertNode(node);
      for (const auto& [key, pod] : copy.pods())
        s.UpsertPod(static_cast<const Pod&>(pod));
    });
    CHECK(Pass(h).empty());
  }
}

TEST_CASE("wake-up: a Fits pod kube-scheduler marked unschedulable is re-planned for its nudge",
          "[reclaim][wake]") {
  Harness h;
  LoadMixed(h);
  Pod small = MakePod("eq2", "small").Uid("u-small").Cpu(1000).Created(kStartMs - 59'998);
  small.unschedulable_condition = true;
  h.Add(small);
  h.controller->RunOnce();
  CHECK(h.nudger.calls == std::vector<std::string>{"eq2/small"});
  for (int i = 1; i <= 4; ++i)
    CHECK(Pass(h).empty());
  CHECK(Pass(h) == Keys{"eq2/small"});  // 5 s: the nudge interval
  CHECK(h.nudger.calls.size() == 2);
}

TEST_CASE("wake-up: a pod waiting out a refusal backoff is planned at its end, not before",
          "[reclaim][wake]") {
  ReclaimControllerOptions options;
  options.refusal_backoff_ms = 5'000;
  Harness h(options);
  LoadTwoReclaims(h, 1);
  h.evictor.refuse = {"eq1/a3", "eq1/a4"};
  h.controller->RunOnce();
  REQUIRE(h.Verdict("uid-eq2-p1")->verdict.code == VerdictCode::kReclaimRefused);
  CHECK(h.controller->WakeRuleOf("uid-eq2-p1")->at_ms == kStartMs + 5'000);
  // Changes that would wake a blocked pod do not wake one whose verdict is fixed until then.
  Change(h, [](ClusterState& s) { s.UpsertNode(MakeNode("n3", 1000, 32 * kGi)); });
  // Its own nomination, held during the refused evictions and released with them, is a change
  // of its own: one more look, which finds the backoff and evicts nothing.
  CHECK(Pass(h) == Keys{"eq2/p1"});
  for (int i = 2; i <= 4; ++i)
    CHECK(Pass(h).empty());
  CHECK(h.evictor.calls.size() == 2);
  CHECK(Pass(h) == Keys{"eq2/p1"});
  CHECK(h.evictor.calls.size() == 4);
}

TEST_CASE("wake-up: a pod in flight is planned when its nomination ends, not on other changes",
          "[reclaim][wake]") {
  ReclaimControllerOptions options;
  options.nomination_ttl_ms = 10'000;
  Harness h(options);
  LoadSeed002(h);
  h.evictor.delete_victims = false;
  REQUIRE(h.controller->RunOnce() == 1);
  CHECK(h.controller->WakeRuleOf("u-job-2")->on == 0);
  // Our nomination of it is a change of its own: one more look finds the reclaim in flight.
  CHECK(Pass(h) == Keys{"eq2/job-2"});
  CHECK(h.Verdict("u-job-2")->verdict.code == VerdictCode::kWaitingForReclaim);
  Change(h, [](ClusterState& s) { s.UpsertNode(MakeNode("n3", 1000, 32 * kGi)); });
  for (int i = 0; i < 8; ++i)
    CHECK(Pass(h).empty());
  CHECK(h.evictor.calls.size() == 1);
  // The TTL ends the nomination: planned again (and, job-b still there, reclaimed again).
  CHECK(Pass(h) == Keys{"eq2/job-2"});
  CHECK(h.evictor.calls.size() == 2);
}

TEST_CASE("wake-up: a pod kube-scheduler has not tried waits for its own condition",
          "[reclaim][wake]") {
  ReclaimControllerOptions options;
  options.require_unschedulable_condition = true;
  Harness h(options);
  LoadSeed002(h);
  h.controller->RunOnce();
  REQUIRE(h.Verdict("u-job-2")->verdict.code == VerdictCode::kAwaitingScheduler);
  Change(h, [](ClusterState& s) { s.UpsertNode(MakeNode("n3", 1000, 32 * kGi)); });
  CHECK(Pass(h).empty());
  Pod job2 = MakePod("eq2", "job-2").Uid("u-job-2").Cpu(5000).Created(kStartMs - 480'000);
  job2.unschedulable_condition = true;
  h.Add(job2);
  CHECK(Pass(h) == Keys{"eq2/job-2"});
  CHECK(h.evictor.calls == std::vector<std::string>{"eq1/job-b"});
}

TEST_CASE("wake-up: a dry-run plan is planned again when a PodDisruptionBudget changes",
          "[reclaim][wake]") {
  ReclaimControllerOptions options;
  options.mode = ReclaimMode::kDryRun;
  Harness h(options);
  LoadSeed002(h);
  h.controller->RunOnce();
  CHECK(h.controller->WakeRuleOf("u-job-2")->on & kWakeOnPdbs);
  CHECK(Pass(h).empty());
  Change(h, [](ClusterState& s) { s.UpsertPdb(MakePdb("eq1", "jobs", {{"app", "job"}}, 0)); });
  CHECK(Pass(h) == Keys{"eq2/job-2"});
}

TEST_CASE("wake-up: at most max_pods_per_pass pods a pass, longest queued first",
          "[reclaim][wake]") {
  ReclaimControllerOptions options;
  options.max_pods_per_pass = 2;
  Harness h(options);
  LoadMixed(h);
  h.controller->RunOnce();
  // The first wave in scheduling order (all priority 0: by creation).
  CHECK(h.controller->last_pass().planned == std::vector<std::string>{"eq3/huge", "eq1/big"});
  CHECK(h.controller->last_pass().backlog == 3);
  CHECK(MetricsContain(h, "capacity_extender_reclaim_backlog 3"));
  // A pod arriving now waits behind the three queued before it, whatever its priority.
  h.Add(MakePod("eq1", "urgent").Uid("u-urgent").Cpu(1000).Priority(100).Created(kStartMs));
  h.now += 1000;
  h.controller->RunOnce();
  CHECK(h.controller->last_pass().planned == std::vector<std::string>{"eq2/small", "eq2/wide"});
  CHECK(h.controller->last_pass().backlog == 2);
  h.now += 1000;
  h.controller->RunOnce();
  // Within a pass, planning is in scheduling order: the higher priority first.
  CHECK(h.controller->last_pass().planned == std::vector<std::string>{"eq1/urgent", "eq2/mid"});
  CHECK(h.controller->last_pass().backlog == 0);
  CHECK(MetricsContain(h, "capacity_extender_reclaim_backlog 0"));
  CHECK(MetricsContain(h, "capacity_extender_reclaim_pods_planned_total 6"));
  CHECK(Pass(h).empty());
}

TEST_CASE("wake-up: a journal that overflowed between two passes re-plans every pod",
          "[reclaim][wake]") {
  ReclaimControllerOptions options;
  options.journal_capacity = 8;
  Harness h(options);
  LoadMixed(h);
  h.controller->RunOnce();
  REQUIRE(Pass(h).empty());
  // Twenty pods of a namespace without quota: nothing that concerns the quota pods, but more
  // changes than the journal keeps.
  for (int i = 0; i < 20; ++i)
    h.Add(MakePod("other", "x" + std::to_string(i)).Cpu(100).Created(kStartMs));
  CHECK(Pass(h) == kAllMixed);
  CHECK(h.controller->last_pass().rederived);
  CHECK(Pass(h).empty());
}

TEST_CASE("wake-up: series keep counting and bound pods leave while nothing is planned",
          "[reclaim][wake][events]") {
  Harness h;
  EventRecorderOptions events;
  events.refresh_interval_ms = 10'000;
  h.RecordEvents(events);
  LoadMixed(h);
  h.controller->RunOnce();
  h.controller->FlushEvents();
  REQUIRE(h.sink.creates.size() == 3);  // huge, big, wide: QuotaExceeded
  for (int i = 0; i < 60; ++i) {
    CHECK(Pass(h).empty());
    h.controller->FlushEvents();
  }
  for (const auto& [name, stored] : h.sink.stored)
    CHECK(stored.count == 7);
  // wide deleted: its record goes at the next flush, before any pass.
  Change(h, [](ClusterState& s) { s.DeletePod("u-wide"); });
  h.controller->FlushEvents();
  CHECK_FALSE(h.Verdict("u-wide"));
  CHECK(h.recorder->tracked_pods() == 2);  // huge and big (small and mid never had an Event)
}

}  // namespace
}  // namespace reclaim_controller_index_test
}  // namespace capext
