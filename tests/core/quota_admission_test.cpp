// Admission of a pod against its namespace's ElasticQuota
// (docs/capacity-semantics.md#3-admission-may-this-pod-run-in-its-quota), with the nominated sums,
// terminal pods, reservations and nominations that feed "used".
#include "core/quota_admission.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "tests/support/builders.h"

namespace capext {
namespace quota_admission_test {
namespace {

using testing::CpuList;
using testing::kGi;
using testing::MakeNode;
using testing::MakePod;
using testing::MakeQuota;
using testing::UidOf;

// A state with one big node, so only the quota decides.
ClusterState StateWithNode(QuotaSemantics semantics = QuotaSemantics::kCapacityExtender) {
  ClusterState state(semantics);
  state.UpsertNode(MakeNode("n1", 1000000, 1000 * kGi, 1000));
  return state;
}

TEST_CASE("a namespace without a quota passes, even when the quotas are over their mins",
          "[quota_admission]") {
  ClusterState state = StateWithNode();
  state.UpsertQuota(MakeQuota("eq1", CpuList(1000), CpuList(100000)));
  state.UpsertPod(MakePod("eq1", "big").Cpu(50000).BoundTo("n1"));
  Status r = CheckQuota(state, state.Normalize(MakePod("free", "p").Cpu(100000)));
  CHECK(r.ok());
  CHECK(r.code() == StatusCode::kOk);
  CHECK(r.message().empty());
}

TEST_CASE("a pod within max and the aggregated min passes", "[quota_admission]") {
  ClusterState state = StateWithNode();
  state.UpsertQuota(MakeQuota("eq1", CpuList(6000), CpuList(10000)));
  state.UpsertQuota(MakeQuota("eq2", CpuList(12000), CpuList(14000)));
  state.UpsertPod(MakePod("eq1", "a").Cpu(8000).BoundTo("n1"));
  CHECK(CheckQuota(state, state.Normalize(MakePod("eq1", "p").Cpu(2000))).ok());  // 8 + 2 = max 10
}

TEST_CASE("max exceeded is Unschedulable with the numbers in the reason", "[quota_admission]") {
  ClusterState state = StateWithNode();
  state.UpsertQuota(MakeQuota("eq1", CpuList(10000), CpuList(10000)));
  state.UpsertPod(MakePod("eq1", "a").Cpu(9000).BoundTo("n1"));
  Status r = CheckQuota(state, state.Normalize(MakePod("eq1", "p").Cpu(2000)));
  CHECK(r.code() == StatusCode::kUnschedulable);
  CHECK(
      r.message() ==
      "pod eq1/p rejected: ElasticQuota eq1/eq1 would exceed max: cpu used 9 + request 2 > max 10");
}

TEST_CASE("max exceeded names every offending dimension", "[quota_admission]") {
  ClusterState state = StateWithNode();
  state.UpsertQuota(MakeQuota("eq1", std::nullopt,
                              ResourceList{{"cpu", 10000}, {"memory", 4 * kGi}, {"pods", 5}}));
  state.UpsertPod(MakePod("eq1", "a").Cpu(9000).Memory(3 * kGi).BoundTo("n1"));
  Status r = CheckQuota(state, state.Normalize(MakePod("eq1", "p").Cpu(2000).Memory(2 * kGi)));
  CHECK(r.code() == StatusCode::kUnschedulable);
  CHECK_THAT(r.message(), Catch::Contains("cpu used 9 + request 2 > max 10; memory used 3Gi + "
                                          "request 2Gi > max 4Gi"));
  CHECK_THAT(r.message(), !Catch::Contains("pods"));
}

TEST_CASE("a request alone above max is UnschedulableAndUnresolvable", "[quota_admission]") {
  ClusterState state = StateWithNode();
  state.UpsertQuota(MakeQuota("eq1", CpuList(1000), CpuList(10000)));
  Status r = CheckQuota(state, state.Normalize(MakePod("eq1", "p").Cpu(11000)));
  CHECK(r.code() == StatusCode::kUnschedulableAndUnresolvable);
  CHECK(r.message() ==
        "pod eq1/p rejected: its request alone exceeds the max of ElasticQuota eq1/eq1: cpu "
        "request 11 > max 10");

  SECTION("a request equal to max with usage is only Unschedulable") {
    state.UpsertPod(MakePod("eq1", "a").Cpu(1000).BoundTo("n1"));
    CHECK(CheckQuota(state, state.Normalize(MakePod("eq1", "p").Cpu(10000))).code() ==
          StatusCode::kUnschedulable);
  }
}

TEST_CASE("aggregated min exceeded is Unschedulable with the cluster-wide totals",
          "[quota_admission]") {
  ClusterState state = StateWithNode();
  state.UpsertQuota(MakeQuota("eq1", CpuList(6000), CpuList(20000)));
  state.UpsertQuota(MakeQuota("eq2", CpuList(4000), CpuList(20000)));
  state.UpsertPod(MakePod("eq1", "a").Cpu(7000).BoundTo("n1"));
  state.UpsertPod(MakePod("eq2", "b").Cpu(2000).BoundTo("n1"));
  // Pods of namespaces without a quota are in neither sum.
  state.UpsertPod(MakePod("free", "c").Cpu(50000).BoundTo("n1"));
  CHECK(CheckQuota(state, state.Normalize(MakePod("eq1", "fits").Cpu(1000))).ok());  // 9 + 1 = 10
  Status r = CheckQuota(state, state.Normalize(MakePod("eq1", "p").Cpu(2000)));
  CHECK(r.code() == StatusCode::kUnschedulable);
  CHECK(r.message() ==
        "pod eq1/p rejected: total ElasticQuota usage would exceed the sum of all mins: cpu used 9 "
        "+ request 2 > min 10");
}

// --- nominated pods ---------------------------------------------------------------------------

struct NominationCase {
  std::string description;
  std::string ns;
  int32_t priority;
  bool eq2_borrowing;
  bool counted_in_eq;
  bool counted_in_all;
};

TEST_CASE("nominated pods: which ones the sums of 1.1 count", "[quota_admission]") {
  const std::vector<NominationCase> cases = {
      {"same namespace, equal priority", "eq1", 10, false, true, true},
      {"same namespace, higher priority", "eq1", 11, false, true, true},
      {"same namespace, lower priority", "eq1", 9, false, false, false},
      {"other quota namespace, not borrowing", "eq2", 0, false, false, true},
      {"other quota namespace, not borrowing, higher priority", "eq2", 100, false, false, true},
      {"other quota namespace, borrowing", "eq2", 0, true, false, false},
      {"namespace without quota", "free", 100, false, false, false},
  };
  for (const auto& c : cases) {
    INFO(c.description);
    ClusterState state = StateWithNode();
    state.UpsertQuota(MakeQuota("eq1", CpuList(10000), CpuList(100000)));
    state.UpsertQuota(MakeQuota("eq2", CpuList(4000), CpuList(100000)));
    state.UpsertPod(MakePod("eq2", "used").Cpu(c.eq2_borrowing ? 6000 : 2000).BoundTo("n1"));
    state.UpsertPod(MakePod(c.ns, "nominated").Cpu(3000).Priority(c.priority).NominatedTo("n1"));
    REQUIRE(state.Nominations().size() == 1);

    Pod p = MakePod("eq1", "p").Cpu(1000).Priority(10);
    NominatedSums sums = ComputeNominatedSums(state, state.Normalize(p));
    CHECK(sums.in_eq.Get("cpu") == (c.counted_in_eq ? 4000 : 1000));
    CHECK(sums.all.Get("cpu") == (c.counted_in_all ? 4000 : 1000));
  }
}

TEST_CASE("a pod's own nomination is not counted twice", "[quota_admission]") {
  ClusterState state = StateWithNode();
  state.UpsertQuota(MakeQuota("eq1", CpuList(10000), CpuList(10000)));
  state.UpsertPod(MakePod("eq1", "a").Cpu(8000).BoundTo("n1"));
  Pod p = MakePod("eq1", "p").Cpu(2000).NominatedTo("n1");
  state.UpsertPod(p);
  state.Nominate(UidOf(p), "n1", 1000);
  NominatedSums sums = ComputeNominatedSums(state, state.Normalize(*state.FindPod(UidOf(p))));
  CHECK(sums.in_eq.Get("cpu") == 2000);
  CHECK(CheckQuota(state, state.Normalize(*state.FindPod(UidOf(p)))).ok());
}

TEST_CASE("a same-namespace nomination of priority >= p's counts against max",
          "[quota_admission]") {
  ClusterState state = StateWithNode();
  state.UpsertQuota(MakeQuota("eq1", CpuList(10000), CpuList(10000)));
  state.UpsertPod(MakePod("eq1", "a").Cpu(6000).BoundTo("n1"));
  state.UpsertPod(MakePod("eq1", "waiting").Cpu(3000).Priority(5).NominatedTo("n1"));

  Status same = CheckQuota(state, state.Normalize(MakePod("eq1", "p").Cpu(2000).Priority(5)));
  CHECK(same.code() == StatusCode::kUnschedulable);
  CHECK_THAT(same.message(), Catch::Contains("cpu used 6 + nominated 3 + request 2 > max 10"));
  CHECK(CheckQuota(state, state.Normalize(MakePod("eq1", "p").Cpu(2000).Priority(6))).ok());
}

TEST_CASE("another quota's nomination counts in the aggregate but not against max",
          "[quota_admission]") {
  SECTION("not counted against max") {
    ClusterState state = StateWithNode();
    state.UpsertQuota(MakeQuota("eq1", CpuList(5000), CpuList(5000)));
    state.UpsertQuota(MakeQuota("eq2", CpuList(20000), CpuList(20000)));
    state.UpsertPod(MakePod("eq1", "a").Cpu(2000).BoundTo("n1"));
    state.UpsertPod(MakePod("eq2", "waiting").Cpu(3000).Priority(100).NominatedTo("n1"));
    CHECK(CheckQuota(state, state.Normalize(MakePod("eq1", "p").Cpu(2000))).ok());  // 2 + 2 <= 5
  }
  SECTION("counted in the aggregate while its quota is not borrowing") {
    ClusterState state = StateWithNode();
    state.UpsertQuota(MakeQuota("eq1", CpuList(6000), CpuList(20000)));
    state.UpsertQuota(MakeQuota("eq2", CpuList(4000), CpuList(20000)));
    state.UpsertPod(MakePod("eq1", "a").Cpu(4000).BoundTo("n1"));
    state.UpsertPod(MakePod("eq2", "b").Cpu(2000).BoundTo("n1"));
    Pod p = MakePod("eq1", "p").Cpu(2000);
    CHECK(CheckQuota(state, state.Normalize(p)).ok());  // 6 + 2 <= 10
    state.UpsertPod(MakePod("eq2", "waiting").Cpu(3000).NominatedTo("n1"));
    Status r = CheckQuota(state, state.Normalize(p));
    CHECK(r.code() == StatusCode::kUnschedulable);
    CHECK_THAT(r.message(), Catch::Contains("cpu used 6 + nominated 3 + request 2 > min 10"));
  }
  SECTION("not counted while its quota is borrowing") {
    ClusterState state = StateWithNode();
    state.UpsertQuota(MakeQuota("eq1", CpuList(8000), CpuList(20000)));
    state.UpsertQuota(MakeQuota("eq2", CpuList(2000), CpuList(20000)));
    state.UpsertPod(MakePod("eq1", "a").Cpu(2000).BoundTo("n1"));
    state.UpsertPod(MakePod("eq2", "b").Cpu(3000).BoundTo("n1"));  // over its min 2
    state.UpsertPod(MakePod("eq2", "waiting").Cpu(4000).NominatedTo("n1"));
    CHECK(CheckQuota(state, state.Normalize(MakePod("eq1", "p").Cpu(2000)))
              .ok());  // 5 + 2 <= 10, not 11
  }
}

TEST_CASE("our own nominations count until they expire", "[quota_admission]") {
  ClusterState state = StateWithNode();
  state.UpsertQuota(MakeQuota("eq1", CpuList(10000), CpuList(10000)));
  state.UpsertPod(MakePod("eq1", "a").Cpu(6000).BoundTo("n1"));
  Pod waiting = MakePod("eq1", "waiting").Cpu(3000).Priority(5);
  state.UpsertPod(waiting);
  state.Nominate(UidOf(waiting), "n1", /*expires_ms=*/5000);
  Pod p = MakePod("eq1", "p").Cpu(2000).Priority(5);
  CHECK_FALSE(CheckQuota(state, state.Normalize(p)).ok());
  CHECK(state.Expire(4999).empty());
  CHECK_FALSE(CheckQuota(state, state.Normalize(p)).ok());
  CHECK(state.Expire(5000) == std::vector<std::string>{UidOf(waiting)});
  CHECK(CheckQuota(state, state.Normalize(p)).ok());
}

// --- what "used" counts ------------------------------------------------------------------------

TEST_CASE("terminal pods are not counted", "[quota_admission]") {
  ClusterState state = StateWithNode();
  state.UpsertQuota(MakeQuota("eq1", CpuList(10000), CpuList(10000)));
  state.UpsertPod(MakePod("eq1", "done").Cpu(8000).BoundTo("n1").Phase(PodPhase::kSucceeded));
  state.UpsertPod(MakePod("eq1", "crashed").Cpu(8000).BoundTo("n1").Phase(PodPhase::kFailed));
  Pod p = MakePod("eq1", "p").Cpu(4000);
  CHECK(CheckQuota(state, state.Normalize(p)).ok());

  Pod running = MakePod("eq1", "running").Cpu(8000).BoundTo("n1");
  state.UpsertPod(running);
  CHECK_FALSE(CheckQuota(state, state.Normalize(p)).ok());
  running.phase = PodPhase::kSucceeded;
  state.UpsertPod(running);
  CHECK(CheckQuota(state, state.Normalize(p)).ok());
}

TEST_CASE("reservations count until released or expired", "[quota_admission]") {
  ClusterState state = StateWithNode();
  state.UpsertQuota(MakeQuota("eq1", CpuList(10000), CpuList(10000)));
  Pod reserved = MakePod("eq1", "reserved").Cpu(9000);
  state.UpsertPod(reserved);
  Pod p = MakePod("eq1", "p").Cpu(2000);
  REQUIRE(CheckQuota(state, state.Normalize(p)).ok());

  state.Reserve(UidOf(reserved), "n1", /*reserved_ms=*/1000, /*expires_ms=*/60000);
  Status r = CheckQuota(state, state.Normalize(p));
  CHECK(r.code() == StatusCode::kUnschedulable);
  CHECK_THAT(r.message(), Catch::Contains("cpu used 9 + request 2 > max 10"));

  SECTION("released") {
    state.ReleaseReservation(UidOf(reserved));
    CHECK(CheckQuota(state, state.Normalize(p)).ok());
  }
  SECTION("expired") {
    CHECK(state.Expire(59999).empty());
    CHECK_FALSE(CheckQuota(state, state.Normalize(p)).ok());
    CHECK(state.Expire(60000) == std::vector<std::string>{UidOf(reserved)});
    CHECK(CheckQuota(state, state.Normalize(p)).ok());
  }
  SECTION("turned into usage once bound, counted once") {
    Pod bound = reserved;
    bound.node_name = "n1";
    bound.phase = PodPhase::kRunning;
    state.UpsertPod(bound);
    CHECK(state.FindReservation(UidOf(reserved)) == nullptr);
    CHECK(state.Used("eq1").Get("cpu") == 9000);
    CHECK(CheckQuota(state, state.Normalize(MakePod("eq1", "small").Cpu(1000))).ok());
  }
}

// --- extended resources --------------------------------------------------------------------------

TEST_CASE("an nvidia.com/gpu quota", "[quota_admission]") {
  ClusterState state = StateWithNode();
  state.UpsertQuota(
      MakeQuota("gpu", ResourceList{{"nvidia.com/gpu", 2}}, ResourceList{{"nvidia.com/gpu", 4}}));
  // A second quota's min keeps the aggregate (4 GPUs) out of the way.
  state.UpsertQuota(MakeQuota("other", ResourceList{{"nvidia.com/gpu", 2}}, std::nullopt));
  state.UpsertPod(MakePod("gpu", "a").Cpu(1000).Request("nvidia.com/gpu", 4).BoundTo("n1"));
  Status r = CheckQuota(state, state.Normalize(MakePod("gpu", "p").Request("nvidia.com/gpu", 1)));
  CHECK(r.code() == StatusCode::kUnschedulable);
  CHECK_THAT(r.message(), Catch::Contains("nvidia.com/gpu used 4 + request 1 > max 4"));
  // cpu is not governed by this quota; a pod without GPUs is admitted.
  CHECK(CheckQuota(state, state.Normalize(MakePod("gpu", "cpu-only").Cpu(64000))).ok());
  CHECK(CheckQuota(state, state.Normalize(MakePod("gpu", "huge").Request("nvidia.com/gpu", 5)))
            .code() == StatusCode::kUnschedulableAndUnresolvable);
}

TEST_CASE("an accelerator-model quota (nvidia.com/gpu.V100)", "[quota_admission]") {
  ClusterState state = StateWithNode();
  state.UpsertQuota(MakeQuota("ml", std::nullopt, ResourceList{{"nvidia.com/gpu.V100", 1}}));
  state.UpsertPod(
      MakePod("ml", "a").Request("nvidia.com/gpu", 1).AcceleratorModel("V100").BoundTo("n1"));
  CHECK(state.Used("ml").Get("nvidia.com/gpu.V100") == 1);

  Status r = CheckQuota(
      state,
      state.Normalize(MakePod("ml", "v100").Request("nvidia.com/gpu", 1).AcceleratorModel("V100")));
  CHECK(r.code() == StatusCode::kUnschedulable);
  CHECK_THAT(r.message(), Catch::Contains("nvidia.com/gpu.V100 used 1 + request 1 > max 1"));
  CHECK(CheckQuota(state,
                   state.Normalize(
                       MakePod("ml", "t4").Request("nvidia.com/gpu", 1).AcceleratorModel("T4")))
            .ok());
  CHECK(CheckQuota(state, state.Normalize(MakePod("ml", "any").Request("nvidia.com/gpu", 3))).ok());
}

// --- the two semantics through the state
// -----------------------------------------------------------

TEST_CASE("scheduler-plugins semantics through CheckQuota", "[quota_admission]") {
  SECTION("a max listing only cpu rejects a memory-requesting pod") {
    ClusterState state = StateWithNode(QuotaSemantics::kSchedulerPlugins);
    state.UpsertQuota(
        MakeQuota("eq1", ResourceList{{"cpu", 4000}, {"memory", 8 * kGi}}, CpuList(10000)));
    Status r = CheckQuota(state, state.Normalize(MakePod("eq1", "p").Cpu(100).Memory(kGi)));
    CHECK(r.code() == StatusCode::kUnschedulableAndUnresolvable);
    CHECK_THAT(r.message(), Catch::Contains("memory request 1Gi > max 0"));
    CHECK(CheckQuota(state, state.Normalize(MakePod("eq1", "cpu-only").Cpu(100))).ok());
  }
  SECTION("an absent min is 0 in the aggregate, where capacity-extender does no check") {
    for (auto semantics : {QuotaSemantics::kSchedulerPlugins, QuotaSemantics::kCapacityExtender}) {
      ClusterState state = StateWithNode(semantics);
      state.UpsertQuota(MakeQuota("eq1", std::nullopt, CpuList(10000)));
      Status r = CheckQuota(state, state.Normalize(MakePod("eq1", "p").Cpu(100)));
      if (semantics == QuotaSemantics::kSchedulerPlugins) {
        CHECK(r.code() == StatusCode::kUnschedulable);
        CHECK_THAT(r.message(),
                   Catch::Contains("sum of all mins: cpu used 0 + request 100m > min 0"));
      } else {
        CHECK(r.ok());
      }
    }
  }
  SECTION("pods in max has no effect") {
    ClusterState state = StateWithNode(QuotaSemantics::kSchedulerPlugins);
    state.UpsertQuota(MakeQuota("eq1", ResourceList{{"cpu", 4000}, {"memory", 8 * kGi}},
                                ResourceList{{"cpu", 10000}, {"memory", 8 * kGi}, {"pods", 1}}));
    state.UpsertPod(MakePod("eq1", "a").Cpu(100).BoundTo("n1"));
    state.UpsertPod(MakePod("eq1", "b").Cpu(100).BoundTo("n1"));
    CHECK(CheckQuota(state, state.Normalize(MakePod("eq1", "p").Cpu(100))).ok());
  }
}

TEST_CASE("capacity-extender: pods in max counts pods through the state", "[quota_admission]") {
  ClusterState state = StateWithNode();
  state.UpsertQuota(MakeQuota("eq1", std::nullopt, ResourceList{{"pods", 2}}));
  state.UpsertPod(MakePod("eq1", "a").BoundTo("n1"));
  CHECK(CheckQuota(state, state.Normalize(MakePod("eq1", "p"))).ok());
  state.UpsertPod(MakePod("eq1", "b").BoundTo("n1"));
  Status r = CheckQuota(state, state.Normalize(MakePod("eq1", "p")));
  CHECK(r.code() == StatusCode::kUnschedulable);
  CHECK_THAT(r.message(), Catch::Contains("pods used 2 + request 1 > max 2"));
}

}  // namespace
}  // namespace quota_admission_test
}  // namespace capext
