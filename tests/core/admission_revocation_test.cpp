// A revoked admission (docs/workloads.md#2-holds-quota-without-a-node): a member admitted through
// the gate whose gang lost its core, without a controller, has its admission revoked. Between the
// decision and the watch showing the annotation removed, the revocation record keeps the hold
// from being derived again from the stale annotation; the record ends when the annotation is
// gone, another admitted-at shows, the pod is bound, terminal or deleted, or at its expiry.
#include <catch2/catch.hpp>
#include <string>

#include "core/admission_queue.h"
#include "core/cluster_state.h"
#include "core/group_quota.h"
#include "tests/support/builders.h"
#include "tests/support/workload_pods.h"

namespace capext {
namespace admission_revocation_test {
namespace {

using testing::AdmittedAt;
using testing::CpuList;
using testing::MakeNode;
using testing::MakePod;
using testing::MakeQuota;
using testing::Member;
using testing::PodGroupOf;

std::string Key(const std::string& name) {
  return StoreKeyOf(MakePod("eq1", name));
}

Pod W(int i, int64_t admitted_ms = 1000) {
  Pod pod = AdmittedAt(
      Member(MakePod("eq1", "w-" + std::to_string(i)).Cpu(1000).Created(10 + i), "w"), admitted_ms);
  pod.has_controller = false;
  return pod;
}

Pod Bound(int i) {
  Pod pod = W(i);
  pod.node_name = "n1";
  pod.phase = PodPhase::kRunning;
  pod.start_ms = 100 + i;
  return pod;
}

const GroupView& Gang(const ClusterState& state) {
  return *state.FindGroup(testing::CoschedulingKey("eq1", "w"));
}

// docs/workloads.md's worked numbers: eq1 max 8, gang w of minMember 3 without controllers; w-0
// and w-1 bound, w-2 admitted through the gate; a reclaim takes the core {w-0, w-1}.
ClusterState LostCore() {
  ClusterState state;
  state.UpsertNode(MakeNode("n1", 100000));
  state.UpsertQuota(MakeQuota("eq1", CpuList(0), CpuList(8000)));
  state.UpsertPodGroup(PodGroupOf("eq1", "w", 3));
  state.UpsertPod(Bound(0));
  state.UpsertPod(Bound(1));
  state.UpsertPod(W(2));
  state.DeletePod(Key("w-1"));
  state.DeletePod(Key("w-0"));
  return state;
}

TEST_CASE("a gang that lost its core: its bare admitted member's admission is revoked at once",
          "[workloads][revocation]") {
  ClusterState state = LostCore();
  // Core ends the derived hold at once, as it ends explicit holds, and records the revocation.
  CHECK(state.FindHold(Key("w-2")) == nullptr);
  CHECK(state.Used("eq1").Get("cpu") == 0);
  REQUIRE(state.FindRevocation(Key("w-2")) != nullptr);
  CHECK(state.FindRevocation(Key("w-2"))->admitted_ms == 1000);
  CHECK(state.FindRevocation(Key("w-2"))->expires_ms == ClusterState::kNoExpiry);
  CHECK(Gang(state).orphaned == std::vector<std::string>{Key("w-2")});
  CHECK(Gang(state).pending == 1);
  // /filter meanwhile: a pending member, the group rule applies.
  CHECK(CheckGroupQuota(state, *state.FindPod(Key("w-2"))).status.message() ==
        "gang eq1/w: 1 of 3 pods exist");
  // The round lists it for the loop, which removes the annotation.
  const AdmissionRound round = PlanAdmissions(state, {}, 2000);
  REQUIRE(round.timed_out.size() == 1);
  CHECK(round.timed_out[0].revoke == std::vector<std::string>{Key("w-2")});
  CHECK(round.timed_out[0].evict.empty());
  CHECK(round.timed_out[0].active == 0);
  CHECK(round.timed_out[0].min_member == 3);
}

TEST_CASE("while revoked, no hold is derived from the stale annotation",
          "[workloads][revocation]") {
  ClusterState state = LostCore();
  state.RevokeAdmission(Key("w-2"), 60'000);  // the loop's, again: idempotent, no expiry set
  REQUIRE(state.FindRevocation(Key("w-2")) != nullptr);
  CHECK(state.FindRevocation(Key("w-2"))->expires_ms == ClusterState::kNoExpiry);
  CHECK(state.FindHold(Key("w-2")) == nullptr);
  CHECK(state.Used("eq1").Get("cpu") == 0);
  CHECK(Gang(state).pending == 1);
  SECTION("a watch event still showing the annotation does not bring the hold back") {
    Pod again = W(2);
    again.unschedulable_condition = true;  // a status change
    state.UpsertPod(again);
    CHECK(state.FindHold(Key("w-2")) == nullptr);
    CHECK(state.Used("eq1").Get("cpu") == 0);
    CHECK(state.FindRevocation(Key("w-2")) != nullptr);
    // Nor does a copy (a what-if, the admission round's).
    const ClusterState copy(state);
    CHECK(copy.FindHold(Key("w-2")) == nullptr);
    CHECK(copy.Used("eq1").Get("cpu") == 0);
  }
  SECTION("the watch shows the annotation gone: the record ends, the pod is pending") {
    state.UpsertPod(W(2, /*admitted_ms=*/0));
    CHECK(state.FindRevocation(Key("w-2")) == nullptr);
    CHECK(state.FindHold(Key("w-2")) == nullptr);
    CHECK(Gang(state).pending == 1);
    // It passes /filter only with the gang's whole need: 1 of 3 pods exist.
    const GroupQuotaCheck check = CheckGroupQuota(state, *state.FindPod(Key("w-2")));
    CHECK(check.applies);
    CHECK(check.status.message() == "gang eq1/w: 1 of 3 pods exist");
  }
  SECTION("a newer admitted-at is another admission: the record ends and it holds") {
    state.UpsertPod(W(2, /*admitted_ms=*/5000));
    CHECK(state.FindRevocation(Key("w-2")) == nullptr);
    REQUIRE(state.FindHold(Key("w-2")) != nullptr);
    CHECK(state.FindHold(Key("w-2"))->held_ms == 5000);
    CHECK(state.Used("eq1").Get("cpu") == 1000);
  }
  SECTION("bound: the record ends, the pod counts as bound") {
    Pod bound = W(2);
    bound.node_name = "n1";
    bound.phase = PodPhase::kRunning;
    state.UpsertPod(bound);
    CHECK(state.FindRevocation(Key("w-2")) == nullptr);
    CHECK(state.Used("eq1").Get("cpu") == 1000);
  }
  SECTION("terminal or deleted: the record ends") {
    Pod failed = W(2);
    failed.phase = PodPhase::kFailed;
    state.UpsertPod(failed);
    CHECK(state.FindRevocation(Key("w-2")) == nullptr);
    state.DeletePod(Key("w-2"));
    CHECK(state.FindRevocation(Key("w-2")) == nullptr);
    state.UpsertPod(W(2));  // a pod of that name again: admitted, holds
    CHECK(state.FindHold(Key("w-2")) != nullptr);
  }
  SECTION("the patch lands: it is no longer listed") {
    state.UpsertPod(W(2, /*admitted_ms=*/0));
    CHECK(Gang(state).orphaned.empty());
    CHECK(PlanAdmissions(state, {}, 2000).timed_out.empty());
  }
}

TEST_CASE("a caller's revocation with an expiry: at the expiry the annotation holds again",
          "[workloads][revocation]") {
  ClusterState state;
  state.UpsertNode(MakeNode("n1", 100000));
  state.UpsertQuota(MakeQuota("eq1", CpuList(0), CpuList(8000)));
  Pod single = AdmittedAt(MakePod("eq1", "s").Cpu(1000), 1000);
  state.UpsertPod(single);
  REQUIRE(state.Used("eq1").Get("cpu") == 1000);
  state.RevokeAdmission(Key("s"), 60'000);
  CHECK(state.Used("eq1").Get("cpu") == 0);
  state.RevokeAdmission(Key("s"), 90'000);  // renewed
  state.Expire(60'000);
  CHECK(state.FindRevocation(Key("s")) != nullptr);
  state.UpsertPod(single);  // a watch event still showing the annotation
  CHECK(state.Used("eq1").Get("cpu") == 0);
  state.Expire(90'000);
  CHECK(state.FindRevocation(Key("s")) == nullptr);
  CHECK(state.Used("eq1").Get("cpu") == 1000);
}

TEST_CASE("a revocation applies only to an admitted, pending pod", "[workloads][revocation]") {
  ClusterState state = LostCore();
  state.UpsertPod(W(3, /*admitted_ms=*/0));  // never admitted
  state.RevokeAdmission(Key("w-3"), 60'000);
  CHECK(state.FindRevocation(Key("w-3")) == nullptr);
  state.RevokeAdmission(Key("unknown"), 60'000);
  CHECK(state.FindRevocation(Key("unknown")) == nullptr);
  Pod bound = Bound(4);
  state.UpsertPod(bound);
  state.RevokeAdmission(Key("w-4"), 60'000);
  CHECK(state.FindRevocation(Key("w-4")) == nullptr);
  // An explicit hold (filter mode's, or a /filter pass of the revoked pod) is not the
  // annotation's: a revoked pod that then passes /filter with its gang is held as usual.
  state.RevokeAdmission(Key("w-2"), 60'000);
  state.Hold(Key("w-2"), 3000, 70'000);
  REQUIRE(state.FindHold(Key("w-2")) != nullptr);
  CHECK_FALSE(state.FindHold(Key("w-2"))->derived);
  state.UpsertPod(W(2));  // still annotated: the explicit hold stays, none is derived
  REQUIRE(state.FindHold(Key("w-2")) != nullptr);
  CHECK_FALSE(state.FindHold(Key("w-2"))->derived);
  CHECK(state.FindHold(Key("w-2"))->held_ms == 3000);
}

}  // namespace
}  // namespace admission_revocation_test
}  // namespace capext
