// ClusterState: priority resolution, usage accounting (bound, terminal, reservations),
// nominations, duplicate quotas and the pending queue order.
#include "core/cluster_state.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "tests/support/builders.h"

namespace capext {
namespace cluster_state_test {
namespace {

using testing::CpuList;
using testing::KeysOf;
using testing::MakeNode;
using testing::MakePod;
using testing::MakePriorityClass;
using testing::MakeQuota;
using testing::UidOf;

// --- priority resolution -----------------------------------------------------------------------

struct PriorityCase {
  std::string description;
  std::optional<int32_t> spec_priority;
  std::string class_name;
  int32_t want_priority;
  PreemptionPolicy want_policy;
};

TEST_CASE("priority resolution: spec.priority, then the class, then globalDefault, then 0",
          "[cluster_state]") {
  const std::vector<PriorityCase> cases = {
      {"spec.priority wins over the class", 7, "high", 7, PreemptionPolicy::kNever},
      {"the named class", std::nullopt, "high", 1000, PreemptionPolicy::kNever},
      {"a class that preempts", std::nullopt, "low", 10, PreemptionPolicy::kPreemptLowerPriority},
      {"no class name: the smallest of several globalDefault values", std::nullopt, "", 20,
       PreemptionPolicy::kPreemptLowerPriority},
      {"an unknown class name is not the global default", std::nullopt, "missing", 0,
       PreemptionPolicy::kPreemptLowerPriority},
  };
  for (const auto& c : cases) {
    INFO(c.description);
    ClusterState state;
    state.UpsertPriorityClass(MakePriorityClass("high", 1000, false, PreemptionPolicy::kNever));
    state.UpsertPriorityClass(MakePriorityClass("low", 10));
    state.UpsertPriorityClass(MakePriorityClass("default-a", 20, true));
    state.UpsertPriorityClass(MakePriorityClass("default-b", 50, true));
    Pod pod = MakePod("ns", "p").PriorityClassName(c.class_name);
    pod.spec_priority = c.spec_priority;
    state.UpsertPod(pod);
    const NormalizedPod* got = state.FindPod(UidOf(pod));
    REQUIRE(got != nullptr);
    CHECK(got->priority == c.want_priority);
    CHECK(got->preemption_policy == c.want_policy);
  }
}

TEST_CASE("priority resolution: 0 without any class", "[cluster_state]") {
  ClusterState state;
  state.UpsertPod(MakePod("ns", "p"));
  CHECK(state.FindPod("uid-ns-p")->priority == 0);
  CHECK(state.FindPod("uid-ns-p")->preemption_policy == PreemptionPolicy::kPreemptLowerPriority);
}

TEST_CASE("priority resolution: spec.preemptionPolicy overrides the class", "[cluster_state]") {
  ClusterState state;
  state.UpsertPriorityClass(MakePriorityClass("high", 1000, false, PreemptionPolicy::kNever));
  Pod pod = MakePod("ns", "p").PriorityClassName("high");
  pod.spec_preemption_policy = PreemptionPolicy::kPreemptLowerPriority;
  state.UpsertPod(pod);
  CHECK(state.FindPod(UidOf(pod))->preemption_policy == PreemptionPolicy::kPreemptLowerPriority);
}

TEST_CASE("priority resolution follows class changes, nominations included", "[cluster_state]") {
  ClusterState state;
  Pod pod = MakePod("ns", "p").PriorityClassName("late").NominatedTo("n1");
  state.UpsertPod(pod);
  CHECK(state.FindPod(UidOf(pod))->priority == 0);
  state.UpsertPriorityClass(MakePriorityClass("late", 300));
  CHECK(state.FindPod(UidOf(pod))->priority == 300);
  REQUIRE(state.Nominations().size() == 1);
  CHECK(state.Nominations()[0].priority == 300);
  state.DeletePriorityClass("late");
  CHECK(state.FindPod(UidOf(pod))->priority == 0);
}

// --- usage
// -----------------------------------------------------------------------------------------

TEST_CASE("bound, non-terminal pods count on their node and in their namespace",
          "[cluster_state]") {
  ClusterState state;
  state.UpsertNode(MakeNode("n1", 8000));
  state.UpsertQuota(MakeQuota("eq1", CpuList(4000), std::nullopt));
  state.UpsertPod(MakePod("eq1", "a").Cpu(1000).BoundTo("n1"));
  state.UpsertPod(MakePod("eq1", "b").Cpu(2000).BoundTo("n1"));
  state.UpsertPod(MakePod("eq1", "pending").Cpu(4000));
  state.UpsertPod(MakePod("eq1", "done").Cpu(4000).BoundTo("n1").Phase(PodPhase::kSucceeded));
  state.UpsertPod(MakePod("eq1", "failed").Cpu(4000).BoundTo("n1").Phase(PodPhase::kFailed));
  state.UpsertPod(MakePod("free", "c").Cpu(500).BoundTo("n1"));

  CHECK(state.UsageOf("n1").requested.Get("cpu") == 3500);
  CHECK(state.UsageOf("n1").pod_count == 3);
  CHECK(KeysOf(state.UsageOf("n1").pods) == std::vector<std::string>{"eq1/a", "eq1/b", "free/c"});
  CHECK(state.Used("eq1") == ResourceList({{"cpu", 3000}, {"pods", 2}}));
  CHECK(state.Used("free").Get("cpu") == 500);
  CHECK(state.totals().used.Get("cpu") == 3000);  // namespaces with a quota only

  SECTION("a pod that ends stops counting") {
    Pod b = *state.FindPod("uid-eq1-b");
    b.phase = PodPhase::kSucceeded;
    state.UpsertPod(b);
    CHECK(state.UsageOf("n1").requested.Get("cpu") == 1500);
    CHECK(state.Used("eq1").Get("cpu") == 1000);
    CHECK(state.totals().used.Get("cpu") == 1000);
  }
  SECTION("a deleted pod stops counting") {
    state.DeletePod("uid-eq1-a");
    CHECK(state.UsageOf("n1").pod_count == 2);
    CHECK(state.Used("eq1").Get("cpu") == 2000);
    CHECK(state.FindPodByName("eq1", "a") == nullptr);
  }
  SECTION("updating a pod does not count it twice") {
    state.UpsertPod(*state.FindPod("uid-eq1-a"));
    state.UpsertPod(*state.FindPod("uid-eq1-a"));
    CHECK(state.UsageOf("n1").requested.Get("cpu") == 3500);
    CHECK(state.Used("eq1").Get("cpu") == 3000);
  }
}

TEST_CASE("a quota created after its pods sees their usage at once", "[cluster_state]") {
  ClusterState state;
  state.UpsertPod(MakePod("eq1", "a").Cpu(1000).BoundTo("n1"));
  state.UpsertQuota(MakeQuota("eq1", CpuList(4000), std::nullopt));
  CHECK(state.Used("eq1").Get("cpu") == 1000);
  CHECK(state.totals().used.Get("cpu") == 1000);
  state.DeleteQuota("eq1", "eq1");
  CHECK(state.totals().used.Get("cpu") == 0);
}

TEST_CASE("a second quota in a namespace is ignored until the first goes", "[cluster_state]") {
  ClusterState state;
  CHECK(state.UpsertQuota(MakeQuota("eq1", CpuList(4000), std::nullopt)));
  ElasticQuota second = MakeQuota("eq1", CpuList(9000), std::nullopt);
  second.name = "second";
  CHECK_FALSE(state.UpsertQuota(second));
  REQUIRE(state.quota_set().duplicates().size() == 1);
  CHECK(state.QuotaFor("eq1")->name == "eq1");
  CHECK(state.totals().min.Get("cpu") == 4000);
  state.DeleteQuota("eq1", "eq1");
  REQUIRE(state.QuotaFor("eq1") != nullptr);
  CHECK(state.QuotaFor("eq1")->name == "second");
  CHECK(state.quota_set().duplicates().empty());
  CHECK(state.totals().min.Get("cpu") == 9000);
}

// --- reservations
// ----------------------------------------------------------------------------------

TEST_CASE("reservations hold a pod's request on its node and in its quota", "[cluster_state]") {
  ClusterState state;
  state.UpsertNode(MakeNode("n1", 8000));
  state.UpsertQuota(MakeQuota("eq1", CpuList(4000), std::nullopt));
  Pod pod = MakePod("eq1", "p").Cpu(3000);
  state.UpsertPod(pod);
  REQUIRE(state.PendingPods().size() == 1);

  state.Reserve(UidOf(pod), "n1", 5000, 10000);
  CHECK(state.UsageOf("n1").requested.Get("cpu") == 3000);
  CHECK(state.UsageOf("n1").pod_count == 1);
  CHECK(state.ledger().Reserved("eq1").Get("cpu") == 3000);
  CHECK(state.Used("eq1").Get("cpu") == 3000);
  CHECK(state.totals().used.Get("cpu") == 3000);
  CHECK(state.PendingPods().empty());  // a reserved pod is not pending

  SECTION("reserving the same uid twice is idempotent") {
    state.Reserve(UidOf(pod), "n1", 6000, 20000);
    CHECK(state.UsageOf("n1").requested.Get("cpu") == 3000);
    CHECK(state.Used("eq1").Get("cpu") == 3000);
    CHECK(state.FindReservation(UidOf(pod))->expires_ms == 20000);
  }
  SECTION("reserving on another node moves the reservation") {
    state.Reserve(UidOf(pod), "n2", 7000, 20000);
    CHECK(state.UsageOf("n1").requested.Get("cpu") == 0);
    CHECK(state.UsageOf("n2").requested.Get("cpu") == 3000);
    CHECK(state.Used("eq1").Get("cpu") == 3000);
  }
  SECTION("released") {
    state.ReleaseReservation(UidOf(pod));
    CHECK(state.UsageOf("n1").requested.Get("cpu") == 0);
    CHECK(state.UsageOf("n1").pod_count == 0);
    CHECK(state.Used("eq1").Get("cpu") == 0);
    CHECK(state.totals().used.Get("cpu") == 0);
    CHECK(state.PendingPods().size() == 1);
  }
  SECTION("expired at its deadline, not before") {
    CHECK(state.Expire(9999).empty());
    CHECK(state.FindReservation(UidOf(pod)) != nullptr);
    CHECK(state.Expire(10000) == std::vector<std::string>{UidOf(pod)});
    CHECK(state.FindReservation(UidOf(pod)) == nullptr);
    CHECK(state.Used("eq1").Get("cpu") == 0);
  }
  SECTION("the pod seen bound turns it into ordinary usage") {
    Pod bound = pod;
    bound.node_name = "n1";
    bound.phase = PodPhase::kRunning;
    state.UpsertPod(bound);
    CHECK(state.FindReservation(UidOf(pod)) == nullptr);
    CHECK(state.UsageOf("n1").requested.Get("cpu") == 3000);
    CHECK(state.UsageOf("n1").pod_count == 1);
    CHECK(state.Used("eq1").Get("cpu") == 3000);
    CHECK(state.ledger().Reserved("eq1").Get("cpu") == 0);
  }
  SECTION("deleting the pod releases it") {
    state.DeletePod(UidOf(pod));
    CHECK(state.UsageOf("n1").requested.Get("cpu") == 0);
    CHECK(state.Used("eq1").Get("cpu") == 0);
  }
}

// docs/capacity-semantics.md#6-accounting-used-reservations-nominations, "A reserved pod is a bound
// pod": the pod is among its node's pods (what victim selection, the dense mirror and the candidate
// search read), started at the reservation time, and its status.nominatedNodeName holds no room
// while the reservation does.
TEST_CASE("a reserved pod is among its node's pods, started at the reservation time",
          "[cluster_state][issue18]") {
  ClusterState state;
  state.UpsertNode(MakeNode("n1", 8000));
  state.UpsertNode(MakeNode("n2", 8000));
  state.UpsertQuota(MakeQuota("eq1", CpuList(4000), std::nullopt));
  state.UpsertPod(MakePod("eq1", "running").Cpu(1000).Started(100).BoundTo("n1"));
  const Pod pod = MakePod("eq1", "p").Cpu(3000).Created(50).NominatedTo("n2");
  state.UpsertPod(pod);
  const std::string key = UidOf(pod);
  REQUIRE(state.UsageOf("n2").pods.empty());
  REQUIRE(state.FindNodeRecord("n2")->fit.nominations == 1);

  state.Reserve(key, "n1", 5000, 10000);
  auto on_n1 = [&] {
    std::vector<std::string> keys;
    for (const NormalizedPod* p : state.UsageOf("n1").pods)
      keys.push_back(p->store_key());
    return keys;
  };
  CHECK(on_n1() == std::vector<std::string>{UidOf(MakePod("eq1", "running")), key});
  CHECK(state.UsageOf("n1").requested.Get("cpu") == 4000);
  CHECK(state.FindPod(key)->reserved_ms == 5000);
  CHECK(EffectiveStartMs(*state.FindPod(key)) == 5000);  // not its creation time
  CHECK(state.FindNodeRecord("n2")->fit.nominations == 0);
  CHECK(state.ledger().status_nominations().empty());

  SECTION("renewing keeps the reservation time") {
    state.Reserve(key, "n1", 6000, 20000);
    CHECK(state.FindPod(key)->reserved_ms == 5000);
    CHECK(state.FindReservation(key)->expires_ms == 20000);
  }
  SECTION("an update of the pending pod keeps it on the node, reserved") {
    Pod changed = pod;
    changed.labels["app"] = "x";
    changed.nominated_node_name = "n2";
    state.UpsertPod(changed);
    CHECK(on_n1().size() == 2);
    CHECK(state.UsageOf("n1").requested.Get("cpu") == 4000);
    CHECK(state.FindPod(key)->reserved_ms == 5000);
    CHECK(state.FindPod(key)->labels.at("app") == "x");
    CHECK(state.ledger().status_nominations().empty());
  }
  SECTION("released (a failed bind): off the node, and its status nomination holds room again") {
    state.ReleaseReservation(key);
    CHECK(on_n1().size() == 1);
    CHECK(state.FindPod(key)->reserved_ms == 0);
    CHECK(state.FindNodeRecord("n2")->fit.nominations == 1);
  }
  SECTION("expired: the same") {
    state.Expire(10000);
    CHECK(on_n1().size() == 1);
    CHECK(state.FindPod(key)->reserved_ms == 0);
    CHECK(state.FindNodeRecord("n2")->fit.nominations == 1);
  }
  SECTION("seen bound: a bound pod, its start from status.startTime") {
    Pod bound = pod;
    bound.node_name = "n1";
    bound.start_ms = 5200;
    state.UpsertPod(bound);
    CHECK(on_n1().size() == 2);
    CHECK(state.FindPod(key)->reserved_ms == 0);
    CHECK(EffectiveStartMs(*state.FindPod(key)) == 5200);
    CHECK(state.ledger().status_nominations().empty());
  }
  SECTION("deleted (an eviction): gone from the node and the quota, no nomination left") {
    state.DeletePod(key);
    CHECK(on_n1().size() == 1);
    CHECK(state.Used("eq1").Get("cpu") == 1000);
    CHECK(state.FindNodeRecord("n2")->fit.nominations == 0);
  }
  SECTION("a copy keeps it on the node, in the same place, with its time") {
    state.UpsertPod(MakePod("eq1", "later").Cpu(500).Started(6000).BoundTo("n1"));
    const ClusterState copy(state);
    std::vector<std::string> keys;
    for (const NormalizedPod* p : copy.UsageOf("n1").pods)
      keys.push_back(p->store_key());
    CHECK(keys == std::vector<std::string>{UidOf(MakePod("eq1", "running")), key,
                                           UidOf(MakePod("eq1", "later"))});
    CHECK(copy.FindPod(key)->reserved_ms == 5000);
    CHECK(copy.FindReservation(key)->reserved_ms == 5000);
    CHECK(copy.ledger().status_nominations().empty());
  }
  SECTION("a bound or terminal pod is not reserved") {
    const std::string running = UidOf(MakePod("eq1", "running"));
    state.Reserve(running, "n2", 7000, 10000);
    CHECK(state.FindReservation(running) == nullptr);
    CHECK(state.UsageOf("n2").pods.empty());
  }
}

// --- nominations
// -----------------------------------------------------------------------------------

TEST_CASE("nominations: status.nominatedNodeName and our own", "[cluster_state]") {
  ClusterState state;
  Pod a = MakePod("eq1", "a").Cpu(1000).Priority(5).NominatedTo("n1");
  Pod b = MakePod("eq1", "b").Cpu(2000).Priority(6);
  state.UpsertPod(a);
  state.UpsertPod(b);
  REQUIRE(state.Nominations().size() == 1);
  CHECK(state.Nominations()[0].node == "n1");
  CHECK_FALSE(state.Nominations()[0].ours);
  CHECK(state.Nominations()[0].quota_request == ResourceList({{"cpu", 1000}, {"pods", 1}}));

  state.Nominate(UidOf(b), "n2", 5000);
  state.Nominate(UidOf(a), "n3", 7000);  // ours wins for a pod that has both
  std::vector<Nomination> all = state.Nominations();
  REQUIRE(all.size() == 2);
  CHECK(all[0].uid == UidOf(a));
  CHECK(all[0].node == "n3");
  CHECK(all[0].ours);
  CHECK(all[1].uid == UidOf(b));
  CHECK(all[1].priority == 6);
  CHECK(state.FindOurNomination(UidOf(b))->expires_ms == 5000);

  SECTION("expire drops ours at their deadline; status nominations stay") {
    CHECK(state.Expire(5000) == std::vector<std::string>{UidOf(b)});
    CHECK(state.Expire(7000) == std::vector<std::string>{UidOf(a)});
    REQUIRE(state.Nominations().size() == 1);
    CHECK(state.Nominations()[0].node == "n1");
    CHECK_FALSE(state.Nominations()[0].ours);
  }
  SECTION("binding the pod releases both kinds") {
    Pod bound = a;
    bound.node_name = "n3";
    bound.phase = PodPhase::kRunning;
    state.UpsertPod(bound);
    REQUIRE(state.Nominations().size() == 1);
    CHECK(state.Nominations()[0].uid == UidOf(b));
  }
  SECTION("deleting the pod releases both kinds") {
    state.DeletePod(UidOf(a));
    REQUIRE(state.Nominations().size() == 1);
    CHECK(state.Nominations()[0].uid == UidOf(b));
  }
  SECTION("nominations never count as usage") {
    CHECK(state.Used("eq1").empty());
    CHECK(state.UsageOf("n1").requested.empty());
  }
  SECTION("a reservation replaces ours; a failed bind brings it back at once, expiry kept") {
    // docs/capacity-semantics.md#8-the-reclaim-controller: in the same change, not at the next
    // reclaim pass, which is held while the cache is out of sync.
    state.Reserve(UidOf(b), "n2", 1000, 3000);
    CHECK(state.FindOurNomination(UidOf(b)) == nullptr);
    state.ReleaseReservation(UidOf(b));
    const Nomination* back = state.FindOurNomination(UidOf(b));
    REQUIRE(back != nullptr);
    CHECK(back->node == "n2");
    CHECK(back->expires_ms == 5000);
    CHECK(state.Expire(5000) == std::vector<std::string>{UidOf(b)});
    CHECK(state.FindOurNomination(UidOf(b)) == nullptr);
  }
  SECTION("an expired reservation brings it back too, and Expire drops it if its time is over") {
    state.Reserve(UidOf(b), "n2", 1000, 6000);
    state.Expire(6000);
    CHECK(state.FindReservation(UidOf(b)) == nullptr);
    CHECK(state.FindOurNomination(UidOf(b)) == nullptr);  // 5000 had passed
  }
  SECTION("a bind that lands, or a reservation moved to another node, does not bring it back") {
    state.Reserve(UidOf(b), "n2", 1000, 3000);
    state.Reserve(UidOf(b), "n1", 1100, 3000);  // moved: still suspended
    Pod bound = b;
    bound.node_name = "n1";
    bound.phase = PodPhase::kRunning;
    state.UpsertPod(bound);
    CHECK(state.FindOurNomination(UidOf(b)) == nullptr);
    Pod pending_again = b;  // (a watch replaying the pod pending cannot revive it)
    state.UpsertPod(pending_again);
    state.ReleaseReservation(UidOf(b));
    CHECK(state.FindOurNomination(UidOf(b)) == nullptr);
  }
  SECTION("a reservation moved to another node keeps ours aside for a failed bind") {
    state.Reserve(UidOf(b), "n2", 1000, 3000);
    state.Reserve(UidOf(b), "n1", 1100, 3000);
    state.ReleaseReservation(UidOf(b));
    REQUIRE(state.FindOurNomination(UidOf(b)) != nullptr);
    CHECK(state.FindOurNomination(UidOf(b))->node == "n2");
  }
}

TEST_CASE("pending pods come in priority order, then creation time, then uid", "[cluster_state]") {
  ClusterState state;
  state.UpsertPod(MakePod("ns", "old-low").Priority(0).Created(1000));
  state.UpsertPod(MakePod("ns", "new-high").Priority(10).Created(5000));
  state.UpsertPod(MakePod("ns", "old-high").Priority(10).Created(2000));
  state.UpsertPod(MakePod("ns", "b-tie").Priority(0).Created(3000).Uid("b"));
  state.UpsertPod(MakePod("ns", "a-tie").Priority(0).Created(3000).Uid("a"));
  state.UpsertPod(MakePod("ns", "bound").Priority(100).BoundTo("n1"));
  state.UpsertPod(MakePod("ns", "done").Priority(100).Phase(PodPhase::kSucceeded));
  CHECK(KeysOf(state.PendingPods()) == std::vector<std::string>{"ns/old-high", "ns/new-high",
                                                                "ns/old-low", "ns/a-tie",
                                                                "ns/b-tie"});
}

TEST_CASE("a pod without a uid is keyed by namespace/name", "[cluster_state]") {
  ClusterState state;
  Pod pod = MakePod("ns", "p").Cpu(100).BoundTo("n1").Uid("");
  state.UpsertPod(pod);
  REQUIRE(state.FindPod("ns/p") != nullptr);
  CHECK(state.FindPodByName("ns", "p") == state.FindPod("ns/p"));
  state.DeletePod("ns/p");
  CHECK(state.UsageOf("n1").pod_count == 0);
}

// The pod map is keyed by views of the pods' own keys (core/object_store.h): every replacement
// must leave each key readable and equal to its pod's store key (ASan reads freed keys).
TEST_CASE("every stored pod stays findable by its key through replacements", "[cluster_state]") {
  ClusterState state;
  const std::string long_uid(40, 'u');  // a heap-allocated string
  const std::vector<Pod> pods = {
      MakePod("ns", "long").Cpu(100).BoundTo("n1").Uid(long_uid),
      MakePod("ns", "short").Cpu(100).BoundTo("n1").Uid("u-short"),  // in the string itself
      MakePod("ns", "without-uid-and-a-long-name").Cpu(100).BoundTo("n1").Uid(""),
  };
  for (int round = 0; round < 3; ++round) {
    for (Pod pod : pods) {
      pod.requests.Set("cpu", 100 + round);
      state.UpsertPod(pod);
    }
    for (const auto& [key, pod] : state.pods())
      CHECK(key == pod.store_key());
  }
  REQUIRE(state.pods().size() == 3);
  for (const char* key : {long_uid.c_str(), "u-short", "ns/without-uid-and-a-long-name"}) {
    INFO(key);
    const NormalizedPod* found = state.FindPod(key);
    REQUIRE(found != nullptr);
    CHECK(found->requests.Get("cpu") == 102);
    state.DeletePod(key);
  }
  CHECK(state.pods().empty());
  CHECK(state.UsageOf("n1").pod_count == 0);
}

TEST_CASE("node records: a name is known while anything refers to it", "[cluster_state]") {
  ClusterState state;
  state.UpsertNode(MakeNode("n1", 4000));
  Pod pod = MakePod("ns", "p").Cpu(1000).BoundTo("n1");
  state.UpsertPod(pod);
  REQUIRE(state.FindNodeRecord("n1") != nullptr);
  CHECK(state.FindNodeRecord("n1")->fit.free_cpu == 3000);
  CHECK(state.FindNodeRecord("n1")->fit.free_pods == 109);

  // The node goes first: its pods keep counting under its name until they go too.
  state.DeleteNode("n1");
  CHECK_FALSE(state.FindNode("n1").has_value());
  REQUIRE(state.FindNodeRecord("n1") != nullptr);
  CHECK(state.FindNodeRecord("n1")->node == nullptr);
  CHECK(KeysOf(state.UsageOf("n1").pods) == std::vector<std::string>{"ns/p"});
  state.DeletePod(UidOf(pod));
  CHECK(state.FindNodeRecord("n1") == nullptr);
  CHECK(state.UsageOf("n1").pod_count == 0);

  // Nominations and reservations name nodes too; the slot is reused afterwards.
  state.UpsertPod(MakePod("ns", "q").Cpu(500).NominatedTo("n9"));
  REQUIRE(state.FindNodeRecord("n9") != nullptr);
  CHECK(state.FindNodeRecord("n9")->fit.nominations == 1);
  state.UpsertPod(MakePod("ns", "q").Cpu(500));
  CHECK(state.FindNodeRecord("n9") == nullptr);
  state.UpsertNode(MakeNode("n2", 2000));
  state.Reserve(UidOf(MakePod("ns", "q")), "n2", 500, 1000);
  CHECK(state.FindNodeRecord("n2")->fit.free_cpu == 1500);
  state.ReleaseReservation(UidOf(MakePod("ns", "q")));
  CHECK(state.FindNodeRecord("n2")->fit.free_cpu == 2000);
}

TEST_CASE("a copy of the state has its own nodes and pods", "[cluster_state]") {
  ClusterState state;
  state.UpsertNode(MakeNode("n1", 4000));
  state.UpsertPod(MakePod("ns", "a").Cpu(1000).BoundTo("n1"));
  ClusterState copy = state;
  state.DeletePod(UidOf(MakePod("ns", "a")));
  state.DeleteNode("n1");
  REQUIRE(copy.FindNode("n1").has_value());
  CHECK(&copy.FindNode("n1")->node == &copy.nodes().at("n1"));
  const std::vector<const NormalizedPod*> pods = copy.UsageOf("n1").pods;
  REQUIRE(pods.size() == 1);
  CHECK(pods[0] == copy.FindPod(UidOf(MakePod("ns", "a"))));
  CHECK(copy.FindNodeRecord("n1")->fit.free_cpu == 3000);
  CHECK(state.FindNodeRecord("n1") == nullptr);
  CHECK(copy.FindPodByName("ns", "a") == pods[0]);
  CHECK(state.FindPodByName("ns", "a") == nullptr);
}

TEST_CASE("a copy without the dense mirror: the same state, no mirror", "[cluster_state]") {
  ClusterState state;
  state.EnableDenseNodes({});
  state.UpsertNode(MakeNode("n1", 4000));
  state.UpsertPod(MakePod("ns", "a").Cpu(1000).BoundTo("n1"));
  const ClusterState full(state);
  const ClusterState lean(state, ClusterState::WithoutDenseNodes{});
  CHECK(full.dense_nodes() != nullptr);
  CHECK(lean.dense_nodes() == nullptr);
  CHECK(lean.version() == state.version());
  CHECK(lean.FindNodeRecord("n1")->fit.free_cpu == 3000);
  REQUIRE(lean.UsageOf("n1").pods.size() == 1);
  CHECK(lean.UsageOf("n1").pods[0] == lean.FindPodByName("ns", "a"));
}

TEST_CASE("pods by name: the latest upserted pod of a name, until it goes", "[cluster_state]") {
  ClusterState state;
  // A pod re-created under the same name gets a new uid; both exist for a while.
  state.UpsertPod(MakePod("ns", "web").Uid("old").BoundTo("n1"));
  state.UpsertPod(MakePod("ns", "web").Uid("new"));
  REQUIRE(state.FindPodByName("ns", "web") != nullptr);
  CHECK(state.FindPodByName("ns", "web")->uid == "new");
  state.DeletePod("old");  // the old pod going does not hide the new one
  REQUIRE(state.FindPodByName("ns", "web") != nullptr);
  CHECK(state.FindPodByName("ns", "web")->uid == "new");
  for (int i = 0; i < 200; ++i)
    state.UpsertPod(MakePod("ns" + std::to_string(i % 7), "p" + std::to_string(i)));
  for (int i = 0; i < 200; i += 2)
    state.DeletePod(UidOf(MakePod("ns" + std::to_string(i % 7), "p" + std::to_string(i))));
  for (int i = 0; i < 200; ++i) {
    const NormalizedPod* p =
        state.FindPodByName("ns" + std::to_string(i % 7), "p" + std::to_string(i));
    CHECK((p != nullptr) == (i % 2 == 1));
  }
  state.DeletePod("new");
  CHECK(state.FindPodByName("ns", "web") == nullptr);
}

TEST_CASE("the version increases on every change", "[cluster_state]") {
  ClusterState state;
  uint64_t v = state.version();
  state.UpsertNode(MakeNode("n1", 1000));
  CHECK(state.version() > v);
  v = state.version();
  state.UpsertPod(MakePod("ns", "p"));
  CHECK(state.version() > v);
}

}  // namespace
}  // namespace cluster_state_test
}  // namespace capext
