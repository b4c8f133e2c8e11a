// NodeFit: taints and tolerations, node affinity, nodeSelector, unschedulable nodes, pod count and
// resources, with kube-scheduler's wording; and the summary of why a pod fits nowhere.
#include "core/node_fit.h"

#include <catch2/catch.hpp>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "core/placement.h"
#include "core/reasons.h"
#include "tests/support/builders.h"

namespace capext {
namespace node_fit_test {
namespace {

using testing::ExpressionsTerm;
using testing::kGi;
using testing::MakeNode;
using testing::MakePod;
using testing::MakeQuota;
using testing::Requirement;
using testing::UidOf;

// --- taints and tolerations --------------------------------------------------------------------

struct TolerationCase {
  std::string description;
  Toleration toleration;
  Taint taint;
  bool tolerates;
};

TEST_CASE("ToleratesTaint", "[node_fit]") {
  const std::vector<TolerationCase> cases = {
      {"Equal with the same key, value and effect",
       {"k", "Equal", "v", "NoSchedule"},
       {"k", "v", "NoSchedule"},
       true},
      {"empty operator means Equal", {"k", "", "v", "NoSchedule"}, {"k", "v", "NoSchedule"}, true},
      {"Equal with a different value",
       {"k", "Equal", "other", "NoSchedule"},
       {"k", "v", "NoSchedule"},
       false},
      {"Equal with an empty value against a valued taint",
       {"k", "Equal", "", "NoSchedule"},
       {"k", "v", "NoSchedule"},
       false},
      {"Exists ignores the value",
       {"k", "Exists", "", "NoSchedule"},
       {"k", "v", "NoSchedule"},
       true},
      {"a different key", {"other", "Exists", "", "NoSchedule"}, {"k", "v", "NoSchedule"}, false},
      {"empty key with Exists tolerates every taint",
       {"", "Exists", "", ""},
       {"anything", "v", "NoExecute"},
       true},
      {"empty key with Exists and an effect tolerates only that effect",
       {"", "Exists", "", "NoSchedule"},
       {"anything", "v", "NoExecute"},
       false},
      {"empty effect matches every effect", {"k", "Equal", "v", ""}, {"k", "v", "NoExecute"}, true},
      {"a different effect", {"k", "Equal", "v", "NoExecute"}, {"k", "v", "NoSchedule"}, false},
      {"an unknown operator tolerates nothing",
       {"k", "Like", "v", ""},
       {"k", "v", "NoSchedule"},
       false},
  };
  for (const auto& c : cases) {
    INFO(c.description);
    CHECK(ToleratesTaint(c.toleration, c.taint) == c.tolerates);
  }
}

struct TaintFilterCase {
  std::string effect;
  bool filters;
};

TEST_CASE("NoSchedule and NoExecute taints filter, PreferNoSchedule does not", "[node_fit]") {
  const std::vector<TaintFilterCase> cases = {
      {"NoSchedule", true}, {"NoExecute", true}, {"PreferNoSchedule", false}};
  for (const auto& c : cases) {
    INFO(c.effect);
    Node node = MakeNode("n1", 8000);
    node.taints.push_back({"dedicated", "gpu", c.effect});
    Status untolerated = CheckNodeStatic(MakePod("ns", "p"), node);
    CHECK(untolerated.ok() == !c.filters);
    if (c.filters) {
      CHECK(untolerated.code() == StatusCode::kUnschedulableAndUnresolvable);
      CHECK(untolerated.message() == "node(s) had untolerated taint {dedicated: gpu}");
    }
    Pod tolerating = MakePod("ns", "t").Tolerate({"dedicated", "Equal", "gpu", c.effect});
    CHECK(CheckNodeStatic(tolerating, node).ok());
  }
}

TEST_CASE("every filtering taint must be tolerated", "[node_fit]") {
  Node node = MakeNode("n1", 8000);
  node.taints.push_back({"a", "1", "NoSchedule"});
  node.taints.push_back({"b", "2", "NoExecute"});
  Pod only_a = MakePod("ns", "p").Tolerate({"a", "Exists", "", ""});
  Status r = CheckNodeStatic(only_a, node);
  CHECK_FALSE(r.ok());
  CHECK(r.message() == "node(s) had untolerated taint {b: 2}");
  Pod both = MakePod("ns", "q").Tolerate({"a", "Exists", "", ""}).Tolerate({"b", "Exists", "", ""});
  CHECK(CheckNodeStatic(both, node).ok());
}

// --- node affinity and nodeSelector
// -----------------------------------------------------------------

struct AffinityCase {
  std::string description;
  std::vector<NodeSelectorTerm> terms;
  bool matches;
};

NodeSelectorTerm FieldsTerm(std::vector<NodeSelectorRequirement> fields) {
  NodeSelectorTerm term;
  term.match_fields = std::move(fields);
  return term;
}

TEST_CASE("required node affinity", "[node_fit]") {
  Node node = MakeNode("n1", 8000);
  node.labels["zone"] = "a";
  node.labels["gpu-count"] = "4";
  node.labels["spot"] = "true";
  const std::vector<AffinityCase> cases = {
      {"In matches", {ExpressionsTerm({Requirement("zone", "In", {"a", "b"})})}, true},
      {"In does not match", {ExpressionsTerm({Requirement("zone", "In", {"b"})})}, false},
      {"In on a missing label", {ExpressionsTerm({Requirement("rack", "In", {"a"})})}, false},
      {"NotIn", {ExpressionsTerm({Requirement("zone", "NotIn", {"b"})})}, true},
      {"NotIn the node's value", {ExpressionsTerm({Requirement("zone", "NotIn", {"a"})})}, false},
      {"NotIn on a missing label matches",
       {ExpressionsTerm({Requirement("rack", "NotIn", {"a"})})},
       true},
      {"Exists", {ExpressionsTerm({Requirement("spot", "Exists")})}, true},
      {"Exists on a missing label", {ExpressionsTerm({Requirement("rack", "Exists")})}, false},
      {"DoesNotExist", {ExpressionsTerm({Requirement("rack", "DoesNotExist")})}, true},
      {"DoesNotExist on a present label",
       {ExpressionsTerm({Requirement("spot", "DoesNotExist")})},
       false},
      {"Gt", {ExpressionsTerm({Requirement("gpu-count", "Gt", {"3"})})}, true},
      {"Gt equal is not greater",
       {ExpressionsTerm({Requirement("gpu-count", "Gt", {"4"})})},
       false},
      {"Lt", {ExpressionsTerm({Requirement("gpu-count", "Lt", {"5"})})}, true},
      {"Lt equal is not less", {ExpressionsTerm({Requirement("gpu-count", "Lt", {"4"})})}, false},
      {"Gt on a non-integer label", {ExpressionsTerm({Requirement("zone", "Gt", {"1"})})}, false},
      {"Gt on a missing label", {ExpressionsTerm({Requirement("rack", "Gt", {"1"})})}, false},
      {"expressions in a term are ANDed",
       {ExpressionsTerm({Requirement("zone", "In", {"a"}), Requirement("spot", "DoesNotExist")})},
       false},
      {"terms are ORed",
       {ExpressionsTerm({Requirement("zone", "In", {"b"})}),
        ExpressionsTerm({Requirement("spot", "Exists")})},
       true},
      {"no term matches",
       {ExpressionsTerm({Requirement("zone", "In", {"b"})}),
        ExpressionsTerm({Requirement("rack", "Exists")})},
       false},
      {"an empty term matches nothing", {NodeSelectorTerm{}}, false},
      {"an empty term next to a matching one",
       {NodeSelectorTerm{}, ExpressionsTerm({Requirement("zone", "In", {"a"})})},
       true},
      {"matchFields metadata.name In",
       {FieldsTerm({Requirement("metadata.name", "In", {"n1"})})},
       true},
      {"matchFields metadata.name NotIn",
       {FieldsTerm({Requirement("metadata.name", "NotIn", {"n1"})})},
       false},
      {"matchFields on another field matches nothing",
       {FieldsTerm({Requirement("metadata.uid", "In", {"n1"})})},
       false},
      {"an unknown operator", {ExpressionsTerm({Requirement("zone", "Matches", {"a"})})}, false},
  };
  for (const auto& c : cases) {
    INFO(c.description);
    Pod pod = MakePod("ns", "p");
    for (const auto& t : c.terms)
      pod.required_affinity.push_back(t);
    Status r = CheckNodeStatic(pod, node);
    CHECK(r.ok() == c.matches);
    if (!c.matches) {
      CHECK(r.code() == StatusCode::kUnschedulableAndUnresolvable);
      CHECK(r.message() == reasons::kNodeAffinityMismatch);
    }
  }
}

TEST_CASE("nodeSelector needs every label with its value", "[node_fit]") {
  Node node = MakeNode("n1", 8000);
  node.labels["zone"] = "a";
  CHECK(CheckNodeStatic(MakePod("ns", "p").NodeSelector("zone", "a"), node).ok());
  CHECK(
      CheckNodeStatic(
          MakePod("ns", "p").NodeSelector("zone", "a").NodeSelector("kubernetes.io/hostname", "n1"),
          node)
          .ok());
  Status r = CheckNodeStatic(MakePod("ns", "p").NodeSelector("zone", "b"), node);
  CHECK(r.code() == StatusCode::kUnschedulableAndUnresolvable);
  CHECK(r.message() == "node(s) didn't match Pod's node affinity/selector");
  CHECK_FALSE(CheckNodeStatic(MakePod("ns", "p").NodeSelector("rack", "1"), node).ok());
  // nodeSelector and affinity must both hold.
  CHECK_FALSE(CheckNodeStatic(MakePod("ns", "p")
                                  .NodeSelector("zone", "b")
                                  .AffinityTerm(ExpressionsTerm({Requirement("zone", "Exists")})),
                              node)
                  .ok());
}

TEST_CASE("an unschedulable node", "[node_fit]") {
  Node node = MakeNode("n1", 8000);
  node.unschedulable = true;
  Status r = CheckNodeStatic(MakePod("ns", "p"), node);
  CHECK(r.code() == StatusCode::kUnschedulableAndUnresolvable);
  CHECK(r.message() == "node(s) were unschedulable");
  Pod tolerating =
      MakePod("ns", "p").Tolerate({"node.kubernetes.io/unschedulable", "Exists", "", "NoSchedule"});
  CHECK(CheckNodeStatic(tolerating, node).ok());
}

// --- resources
// ---------------------------------------------------------------------------------------

TEST_CASE("Insufficient <resource>, resolvable unless above the whole allocatable", "[node_fit]") {
  Node node = MakeNode("n1", 4000, 8 * kGi);
  node.allocatable.Set("nvidia.com/gpu", 2);
  const ResourceList requested{{"cpu", 3000}, {"memory", 2 * kGi}};

  CHECK(CheckNodeResources(MakePod("ns", "p").Cpu(1000), node, requested, 1).ok());

  Status cpu = CheckNodeResources(MakePod("ns", "p").Cpu(1001), node, requested, 1);
  CHECK(cpu.code() == StatusCode::kUnschedulable);
  CHECK(cpu.message() == "Insufficient cpu");

  Status both =
      CheckNodeResources(MakePod("ns", "p").Cpu(2000).Memory(7 * kGi), node, requested, 1);
  CHECK(both.message() == "Insufficient cpu, Insufficient memory");

  Status gpu =
      CheckNodeResources(MakePod("ns", "p").Request("nvidia.com/gpu", 3), node, requested, 1);
  CHECK(gpu.code() == StatusCode::kUnschedulableAndUnresolvable);
  CHECK(gpu.message() == "Insufficient nvidia.com/gpu");

  Status missing =
      CheckNodeResources(MakePod("ns", "p").Request("example.com/fpga", 1), node, requested, 1);
  CHECK(missing.code() == StatusCode::kUnschedulableAndUnresolvable);
  CHECK(missing.message() == "Insufficient example.com/fpga");

  // A zero request is never insufficient.
  CHECK(CheckNodeResources(MakePod("ns", "p").Request("example.com/fpga", 0), node, requested, 1)
            .ok());
}

TEST_CASE("Too many pods", "[node_fit]") {
  Node node = MakeNode("n1", 4000, 8 * kGi, /*max_pods=*/3);
  CHECK(CheckNodeResources(MakePod("ns", "p"), node, {}, 2).ok());
  Status r = CheckNodeResources(MakePod("ns", "p"), node, {}, 3);
  CHECK(r.code() == StatusCode::kUnschedulable);
  CHECK(r.message() == "Too many pods");
  Node unlimited = MakeNode("n2", 4000, 8 * kGi, std::nullopt);
  CHECK(CheckNodeResources(MakePod("ns", "p"), unlimited, {}, 1000).ok());
}

TEST_CASE("CheckNodeFit counts bound pods, reservations and nominations of priority >= the pod's",
          "[node_fit]") {
  ClusterState state;
  state.UpsertNode(MakeNode("n1", 4000));
  state.UpsertPod(MakePod("ns", "bound").Cpu(2000).BoundTo("n1"));
  Pod p = MakePod("ns", "p").Cpu(2000).Priority(5);
  CHECK(CheckNodeFit(state, state.Normalize(p), *state.FindNode("n1")).ok());

  SECTION("a nomination of equal priority holds the room") {
    state.UpsertPod(MakePod("ns", "nominated").Cpu(1000).Priority(5).NominatedTo("n1"));
    Status r = CheckNodeFit(state, state.Normalize(p), *state.FindNode("n1"));
    CHECK(r.code() == StatusCode::kUnschedulable);
    CHECK(r.message() == "Insufficient cpu");
  }
  SECTION("a lower-priority nomination does not") {
    state.UpsertPod(MakePod("ns", "nominated").Cpu(1000).Priority(4).NominatedTo("n1"));
    CHECK(CheckNodeFit(state, state.Normalize(p), *state.FindNode("n1")).ok());
  }
  SECTION("a nomination to another node does not") {
    state.UpsertPod(MakePod("ns", "nominated").Cpu(1000).Priority(9).NominatedTo("n2"));
    CHECK(CheckNodeFit(state, state.Normalize(p), *state.FindNode("n1")).ok());
  }
  SECTION("the pod's own nomination does not") {
    Pod nominated = p;
    nominated.nominated_node_name = "n1";
    state.UpsertPod(nominated);
    CHECK(
        CheckNodeFit(state, state.Normalize(*state.FindPod(UidOf(p))), *state.FindNode("n1")).ok());
  }
  SECTION("our own nomination holds the room until it expires") {
    Pod waiting = MakePod("ns", "waiting").Cpu(1000).Priority(6);
    state.UpsertPod(waiting);
    state.Nominate(UidOf(waiting), "n1", 100);
    CHECK_FALSE(CheckNodeFit(state, state.Normalize(p), *state.FindNode("n1")).ok());
    state.Expire(100);
    CHECK(CheckNodeFit(state, state.Normalize(p), *state.FindNode("n1")).ok());
  }
  SECTION("a reservation holds the room") {
    Pod reserved = MakePod("ns", "reserved").Cpu(1000);
    state.UpsertPod(reserved);
    state.Reserve(UidOf(reserved), "n1", 50, 100);
    CHECK_FALSE(CheckNodeFit(state, state.Normalize(p), *state.FindNode("n1")).ok());
    state.ReleaseReservation(UidOf(reserved));
    CHECK(CheckNodeFit(state, state.Normalize(p), *state.FindNode("n1")).ok());
  }
  SECTION("a terminal pod does not") {
    state.UpsertPod(MakePod("ns", "done").Cpu(2000).BoundTo("n1").Phase(PodPhase::kSucceeded));
    CHECK(CheckNodeFit(state, state.Normalize(p), *state.FindNode("n1")).ok());
  }
}

// --- placement summary
// -------------------------------------------------------------------------------

TEST_CASE("FindFeasibleNodes and SummarizeUnschedulable", "[node_fit]") {
  ClusterState state;
  Node tainted = MakeNode("master", 8000);
  tainted.taints.push_back({"node-role.kubernetes.io/control-plane", "", "NoSchedule"});
  state.UpsertNode(tainted);
  state.UpsertNode(MakeNode("n1", 2000));
  state.UpsertNode(MakeNode("n2", 2000));
  state.UpsertNode(MakeNode("n3", 8000));
  Pod p = MakePod("ns", "p").Cpu(4000);
  Feasibility f = FindFeasibleNodes(state, state.Normalize(p));
  CHECK(f.quota.ok());
  CHECK(f.feasible == std::vector<std::string>{"n3"});
  REQUIRE(f.failed.size() == 3);

  state.UpsertPod(MakePod("ns", "filler").Cpu(6000).BoundTo("n3"));
  Feasibility none = FindFeasibleNodes(state, state.Normalize(p));
  CHECK(none.feasible.empty());
  CHECK(SummarizeUnschedulable(none) ==
        "0/4 nodes are available: 3 Insufficient cpu, 1 node(s) had untolerated taint "
        "{node-role.kubernetes.io/control-plane: }.");

  SECTION("a node the state does not know passes: kube-scheduler vetted it") {
    const NormalizedPod normalized = state.Normalize(p);
    const PodFilter filter(state, normalized);
    CHECK(filter.CheckNode("gone").ok());
    CHECK_FALSE(filter.CheckNode("n1").ok());
  }
  SECTION("a quota rejection is reported instead of node reasons") {
    state.UpsertQuota(MakeQuota("ns", std::nullopt, testing::CpuList(1000)));
    Feasibility rejected = FindFeasibleNodes(state, state.Normalize(p));
    CHECK_FALSE(rejected.quota.ok());
    CHECK(rejected.failed.empty());
    CHECK(SummarizeUnschedulable(rejected) == rejected.quota.message());
  }
}

// --- NodeFitScreen: the same answers as CheckNodeFit, from the per-node summary -----------------

// Every node of `state` for every pod of `pods`: the screen agrees with CheckNodeFit, reasons
// included.
void ExpectScreenAgrees(const ClusterState& state, const std::vector<Pod>& pods) {
  for (const Pod& raw : pods) {
    const NormalizedPod pod = state.Normalize(raw);
    const NodeFitScreen screen(state, pod);
    for (const auto& [name, node] : state.nodes()) {
      INFO("pod " << pod.Key() << " on " << name);
      const NodeRecord* record = state.FindNodeRecord(name);
      REQUIRE(record != nullptr);
      REQUIRE(record->node == &node);
      const Status expected = CheckNodeFit(state, pod, *state.FindNode(name));
      CHECK(screen.Fits(*record) == expected.ok());
      const Status got = screen.Check(*record);
      CHECK(got.code() == expected.code());
      CHECK(got.message() == expected.message());
    }
  }
}

TEST_CASE("NodeFitScreen agrees with CheckNodeFit through changes of the state", "[node_fit]") {
  std::mt19937 random(20240611);
  auto pick = [&](int n) { return static_cast<int>(random() % static_cast<unsigned>(n)); };
  ClusterState state;
  std::vector<std::string> names;
  for (int i = 0; i < 12; ++i) {
    Node node = MakeNode("n" + std::to_string(i), 4000 + 1000 * pick(5), (8 + pick(8)) * kGi,
                         i % 4 == 3 ? std::nullopt : std::optional<int64_t>(3 + pick(4)));
    if (i % 5 == 1) node.taints.push_back({"dedicated", "gpu", "NoSchedule"});
    if (i % 5 == 2) node.taints.push_back({"soft", "", "PreferNoSchedule"});
    if (i % 7 == 3) node.unschedulable = true;
    if (i % 3 == 0) node.allocatable.Set("ephemeral-storage", 100 * kGi);
    if (i % 4 == 0) node.allocatable.Set("nvidia.com/gpu", 2);
    names.push_back(node.name);
    state.UpsertNode(std::move(node));
  }
  std::vector<Pod> probes = {
      MakePod("a", "small").Cpu(500).Memory(kGi).Priority(0),
      MakePod("a", "big").Cpu(3000).Memory(6 * kGi).Priority(5),
      MakePod("a", "disk").Cpu(100).Request("ephemeral-storage", 60 * kGi).Priority(0),
      MakePod("a", "gpu").Cpu(100).Request("nvidia.com/gpu", 1).Priority(0),
      MakePod("a", "selector").Cpu(100).NodeSelector("kubernetes.io/hostname", "n2").Priority(0),
      MakePod("a", "tolerant")
          .Cpu(100)
          .Tolerate({"dedicated", "Exists", "", ""})
          .Tolerate({"node.kubernetes.io/unschedulable", "Exists", "", "NoSchedule"})
          .Priority(0),
      MakePod("a", "high").Cpu(1500).Priority(100),
      MakePod("a", "nothing").Priority(0),
  };
  ExpectScreenAgrees(state, probes);

  std::vector<std::string> bound;
  for (int step = 0; step < 300; ++step) {
    const int action = pick(10);
    const std::string node = names[static_cast<std::size_t>(pick(12))];
    const std::string id = "p" + std::to_string(step);
    if (action <= 3) {  // a bound pod
      state.UpsertPod(
          MakePod("b", id).Cpu(250 * (1 + pick(6))).Memory(kGi * pick(3)).BoundTo(node));
      bound.push_back(UidOf(MakePod("b", id)));
    } else if (action == 4 && !bound.empty()) {  // a pod goes away
      const std::size_t k = static_cast<std::size_t>(pick(static_cast<int>(bound.size())));
      state.DeletePod(bound[k]);
      bound.erase(bound.begin() + static_cast<std::ptrdiff_t>(k));
    } else if (action == 5) {  // a status nomination
      state.UpsertPod(MakePod("c", id).Cpu(1000).Priority(pick(3) * 50).NominatedTo(node));
    } else if (action == 6) {  // a reservation, sometimes released again
      state.UpsertPod(MakePod("d", id).Cpu(500).Memory(kGi));
      state.Reserve(UidOf(MakePod("d", id)), node, 500, 1000);
      if (pick(2) == 0) state.ReleaseReservation(UidOf(MakePod("d", id)));
    } else if (action == 7) {  // our nomination, moved or expired
      state.UpsertPod(MakePod("e", id).Cpu(750).Priority(10));
      state.Nominate(UidOf(MakePod("e", id)), node, 500 + step);
      if (pick(2) == 0) state.Nominate(UidOf(MakePod("e", id)), names[0], 500 + step);
      state.Expire(step);
    } else if (action == 8) {  // the node changes or goes
      if (pick(3) == 0) {
        state.DeleteNode(node);
      } else {
        Node changed = MakeNode(node, 3000 + 1000 * pick(6), 16 * kGi, 2 + pick(6));
        if (pick(2) == 0) changed.taints.push_back({"dedicated", "gpu", "NoExecute"});
        state.UpsertNode(std::move(changed));
      }
    } else if (!bound.empty()) {  // a bound pod terminates
      const std::size_t k = static_cast<std::size_t>(pick(static_cast<int>(bound.size())));
      Pod done = *state.FindPod(bound[k]);
      done.phase = PodPhase::kSucceeded;
      state.UpsertPod(done);
      bound.erase(bound.begin() + static_cast<std::ptrdiff_t>(k));
    }
    if (step % 10 == 9) ExpectScreenAgrees(state, probes);
  }
  ExpectScreenAgrees(state, probes);
}

TEST_CASE("NodeFitScreen: overcommitted on a resource the pod does not request, the node fits",
          "[node_fit]") {
  // Found by the differential test (tests/e2e/decision_paths_test.cpp): a snapshot may show a
  // node whose pods request more of a resource than it has (here ephemeral-storage it does not
  // have at all, or memory); node fit only checks what the pod requests, but the screen compared
  // the pod's 0 with the node's negative room.
  ClusterState state;
  state.UpsertNode(MakeNode("n1", 16000, 8 * kGi));
  state.UpsertPod(MakePod("a", "disk").Cpu(250).Request("ephemeral-storage", kGi).BoundTo("n1"));
  state.UpsertPod(MakePod("a", "fat").Cpu(250).Memory(12 * kGi).BoundTo("n1"));
  const std::vector<Pod> probes = {MakePod("b", "cpu-only").Cpu(1000).Priority(0),
                                   MakePod("b", "nothing").Priority(0),
                                   MakePod("b", "memory").Cpu(100).Memory(kGi).Priority(0)};
  ExpectScreenAgrees(state, probes);
  const NormalizedPod cpu_only = state.Normalize(probes[0]);
  CHECK(NodeFitScreen(state, cpu_only).Fits(*state.FindNodeRecord("n1")));
}

}  // namespace
}  // namespace node_fit_test
}  // namespace capext
