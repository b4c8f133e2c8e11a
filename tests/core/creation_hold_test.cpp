// Creation holds (docs/workloads.md#2-holds-quota-without-a-node; gate mode's admission at
// creation, docs/workloads-live.md#admission-at-creation): a pod admitted by /mutate before it
// exists holds its quota by namespace and admitted-at time until the first stored pod of that
// namespace with that admitted-at takes over (its derived hold, in the same step), or until the
// hold expires. The room is never free meanwhile and never counted twice afterwards.
#include <catch2/catch.hpp>
#include <string>

#include "core/admission_queue.h"
#include "core/cluster_state.h"
#include "core/quota_admission.h"
#include "tests/support/builders.h"
#include "tests/support/workload_pods.h"

namespace capext {
namespace creation_hold_test {
namespace {

using testing::AdmittedAt;
using testing::CpuList;
using testing::Gated;
using testing::MakeNode;
using testing::MakePod;
using testing::MakeQuota;

// eq1 and eq2 {min = max = cpu 10}; nothing used.
ClusterState TwoQuotas() {
  ClusterState state;
  state.UpsertNode(MakeNode("n1", 100000));
  state.UpsertQuota(MakeQuota("eq1", CpuList(10000), CpuList(10000)));
  state.UpsertQuota(MakeQuota("eq2", CpuList(10000), CpuList(10000)));
  return state;
}

// The pod as /mutate sees it: no uid, no name yet (generateName), no annotation.
NormalizedPod AtCreation(const ClusterState& state, const std::string& ns, int64_t cpu_milli) {
  return state.Normalize(MakePod(ns, "").Cpu(cpu_milli));
}

TEST_CASE("a creation hold counts in used until the pod is stored, then its derived hold does",
          "[workloads][creation-hold]") {
  ClusterState state = TwoQuotas();
  state.HoldAtCreation(AtCreation(state, "eq1", 6000), 1000, 61000);
  CHECK(state.Used("eq1").Get("cpu") == 6000);
  CHECK(state.creation_holds().size() == 1);
  // Meanwhile the room is taken: a second pod of 6 cpu does not fit max 10.
  CHECK_FALSE(CheckQuota(state, AtCreation(state, "eq1", 6000)).ok());
  CHECK(CheckQuota(state, AtCreation(state, "eq1", 4000)).ok());

  // The watch shows the pod, named now, carrying the admitted-at /mutate wrote.
  state.UpsertPod(AdmittedAt(MakePod("eq1", "p-x7k2q").Cpu(6000), 1000));
  CHECK(state.creation_holds().empty());
  CHECK(state.Used("eq1").Get("cpu") == 6000);  // once, as the derived hold
  const QuotaHold* hold = state.FindHold(StoreKeyOf(MakePod("eq1", "p-x7k2q")));
  REQUIRE(hold != nullptr);
  CHECK(hold->derived);
  // Its own admission at /filter: used without its own hold 0 + 6 <= 10.
  CHECK(CheckQuota(state, *state.FindPod(StoreKeyOf(MakePod("eq1", "p-x7k2q")))).ok());

  // Updates of the pod end nothing more: a second creation hold of the same time stays.
  state.HoldAtCreation(AtCreation(state, "eq1", 1000), 1000, 61000);
  state.UpsertPod(AdmittedAt(MakePod("eq1", "p-x7k2q").Cpu(6000).Label("a", "b"), 1000));
  CHECK(state.creation_holds().size() == 1);
  CHECK(state.Used("eq1").Get("cpu") == 7000);
}

TEST_CASE("only a pod of the same namespace and admitted-at ends a creation hold",
          "[workloads][creation-hold]") {
  ClusterState state = TwoQuotas();
  state.HoldAtCreation(AtCreation(state, "eq1", 2000), 1000, 61000);
  state.UpsertPod(AdmittedAt(MakePod("eq2", "other-ns").Cpu(2000), 1000));
  state.UpsertPod(AdmittedAt(MakePod("eq1", "other-time").Cpu(2000), 1001));
  state.UpsertPod(MakePod("eq1", "not-admitted").Cpu(2000));
  CHECK(state.creation_holds().size() == 1);
  CHECK(state.Used("eq1").Get("cpu") == 4000);  // the hold + other-time's derived hold
  // Two holds of one namespace and time: the pod ends the one with its own request.
  state.HoldAtCreation(AtCreation(state, "eq1", 3000), 1000, 61000);
  state.UpsertPod(AdmittedAt(MakePod("eq1", "p").Cpu(3000), 1000));
  REQUIRE(state.creation_holds().size() == 1);
  CHECK(state.creation_holds().begin()->second.quota_request.Get("cpu") == 2000);
  CHECK(state.Used("eq1").Get("cpu") == 2000 + 2000 + 3000);
  // A pod first seen bound ends it too (its usage is then bound usage).
  Pod bound = AdmittedAt(MakePod("eq1", "q").Cpu(2000), 1000);
  bound.node_name = "n1";
  bound.phase = PodPhase::kRunning;
  state.UpsertPod(bound);
  CHECK(state.creation_holds().empty());
  CHECK(state.Used("eq1").Get("cpu") == 2000 + 2000 + 3000);
}

TEST_CASE("a creation hold the pod never follows ends at its expiry, and copies carry it",
          "[workloads][creation-hold]") {
  ClusterState state = TwoQuotas();
  state.HoldAtCreation(AtCreation(state, "eq1", 4000), 1000, 61000);
  const ClusterState copy(state);
  CHECK(copy.Used("eq1").Get("cpu") == 4000);
  CHECK(copy.creation_holds().size() == 1);
  const ClusterState what_if(state, ClusterState::WithoutDenseNodes{});
  CHECK(what_if.Used("eq1").Get("cpu") == 4000);
  state.Expire(60999);
  CHECK(state.Used("eq1").Get("cpu") == 4000);
  CHECK(state.Expire(61000).empty());  // no key: a creation hold has none
  CHECK(state.creation_holds().empty());
  CHECK(state.Used("eq1").Get("cpu") == 0);
}

TEST_CASE("the admission queue's size counts pending pods gated by our gate alone",
          "[workloads][creation-hold]") {
  ClusterState state = TwoQuotas();
  CHECK(state.queued_gated_pods() == 0);
  state.UpsertPod(Gated(MakePod("eq1", "a").Cpu(1000)));
  state.UpsertPod(Gated(MakePod("eq2", "b").Cpu(1000)));
  Pod other = Gated(MakePod("eq1", "c").Cpu(1000));
  other.other_gates = true;  // not in the queue until its other gates are gone
  state.UpsertPod(other);
  CHECK(state.queued_gated_pods() == 2);
  // Held while its gate removal is in flight: still counted.
  state.Hold(StoreKeyOf(MakePod("eq1", "a")), 500, 60500);
  CHECK(state.queued_gated_pods() == 2);
  // The patch lands: ungated and admitted.
  state.UpsertPod(AdmittedAt(MakePod("eq1", "a").Cpu(1000), 500));
  CHECK(state.queued_gated_pods() == 1);
  other.other_gates = false;
  state.UpsertPod(other);
  CHECK(state.queued_gated_pods() == 2);
  state.DeletePod(StoreKeyOf(MakePod("eq2", "b")));
  CHECK(state.queued_gated_pods() == 1);
  const ClusterState copy(state);
  CHECK(copy.queued_gated_pods() == 1);
  Pod done = other;
  done.phase = PodPhase::kFailed;
  state.UpsertPod(done);
  CHECK(state.queued_gated_pods() == 0);
}

}  // namespace
}  // namespace creation_hold_test
}  // namespace capext
