// DenseNodes (core/dense_nodes.h) must equal the node table it mirrors, and the node table and
// the ledger must equal what the pods, reservations and nominations add up to, on random states
// and through random changes (binds, deletions, reservations, nominations, node updates, priority
// class and quota changes, expiry): free room per dimension, pod slots, nomination counts,
// scores against ScoreNode, fits against CheckNodeResources, namespace slices against the pods
// on each node — and a mirror kept up to date equals one built afresh.
#include "core/dense_nodes.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include <fmt/format.h>
#include <catch2/catch.hpp>

#include "core/node_fit.h"
#include "core/node_score.h"
#include "core/quota_admission.h"
#include "tests/support/builders.h"
#include "tests/support/quota_tree_recount.h"
#include "tests/support/random_changes.h"

namespace capext {
namespace dense_nodes_test {
namespace {

using testing::ClusterCase;
using testing::DecodeGeneratedPod;
using testing::PodLifecycle;
using testing::QuotaTreeRecount;
using testing::RandomChanges;
using testing::RandomCluster;
using testing::SameAmounts;

// The node table and the ledger against what the objects add up to.
void CheckAccounting(const ClusterState& state) {
  std::map<std::string, ResourceList> requested, used;
  std::map<std::string, int32_t> pod_count;
  std::map<std::string, std::multiset<std::string>> on_node;
  for (const auto& [key, pod] : state.pods()) {
    if (state.FindReservation(key) == nullptr) CHECK(pod.reserved_ms == 0);
    if (!pod.IsBound() || pod.IsTerminal()) continue;
    requested[pod.node_name].Add(pod.requests);
    ++pod_count[pod.node_name];
    on_node[pod.node_name].emplace(key);
    used[pod.ns].Add(pod.quota_request());
  }
  // A reserved pod is on its node as if bound there
  // (docs/capacity-semantics.md#6-accounting-used-reservations-nominations).
  for (const auto& [key, r] : state.reservations()) {
    const NormalizedPod* pod = state.FindPod(key);
    REQUIRE(pod != nullptr);
    CHECK_FALSE(pod->IsBound());
    CHECK(pod->reserved_ms == r.reserved_ms);
    // Its status.nominatedNodeName holds no room while the reservation does.
    CHECK(state.ledger().status_nominations().count(key) == 0);
    requested[r.node].Add(pod->requests);
    ++pod_count[r.node];
    on_node[r.node].insert(key);
    used[r.ns].Add(r.quota_request);
  }
  std::map<std::string, int32_t> nominations;
  for (const auto& [key, n] : state.ledger().our_nominations())
    ++nominations[n.node];
  for (const auto& [key, n] : state.ledger().status_nominations())
    ++nominations[n.node];
  for (const auto& [name, node] : state.nodes()) {
    INFO("node " << name);
    const NodeRecord* record = state.FindNodeRecord(name);
    REQUIRE(record != nullptr);
    CHECK(SameAmounts(record->usage.requested, requested[name]));
    CHECK(record->usage.pod_count == pod_count[name]);
    std::multiset<std::string> keys;
    for (const NormalizedPod* p : record->usage.pods)
      keys.insert(p->store_key());
    CHECK(keys == on_node[name]);
    CHECK(record->fit.nominations == nominations[name]);
    CHECK(record->fit.free_cpu ==
          SaturatingSub(node.allocatable.Get(kCpuName), requested[name].Get(kCpuName)));
    CHECK(record->fit.free_memory ==
          SaturatingSub(node.allocatable.Get(kMemoryName), requested[name].Get(kMemoryName)));
  }
  for (const auto& [ns, quota] : state.quota_set().quotas()) {
    INFO("namespace " << ns);
    CHECK(SameAmounts(state.Used(ns), used[ns]));
  }
  // The quota tree's subtree usage, and the cluster-wide sums over its roots.
  const QuotaTreeRecount recount(state);
  const QuotaTree& tree = state.ledger().tree();
  for (const QuotaTreeRecount::TreeNode& n : recount.nodes()) {
    INFO("quota tree node " << n.key);
    const int core = n.own ? tree.LeafOf(n.quota.ns) : tree.QuotaNodeOf(n.quota.ns);
    REQUIRE(core >= 0);
    CHECK(SameAmounts(state.ledger().NodeUsed(core), n.used));
    // The borrowing the ledger keeps with the usage is the recount's.
    CHECK(state.ledger().NodeBorrowing(core) == IsBorrowing(state.semantics(), n.quota, n.used));
  }
  const AggregateTotals expected = recount.RootTotals(state.semantics());
  CHECK(SameAmounts(state.totals().used, expected.used));
  CHECK(SameAmounts(state.totals().min, expected.min));
  CHECK(state.totals().checked == expected.checked);
}

// One slice's content, comparable: (namespace, priority) -> pods, used per dimension, members.
using SliceKey = std::pair<std::string, int32_t>;
struct SliceContent {
  int64_t pods = 0;
  std::vector<int64_t> used;
  std::multiset<std::string> members;
  bool operator==(const SliceContent& o) const {
    return pods == o.pods && used == o.used && members == o.members;
  }
};

// Also checks that every slice has its head, and each slice's largest request per dimension
// against its members'. Namespace names come from the heads' ids: a wrong id shows as a slice
// in the wrong namespace.
std::map<SliceKey, SliceContent> SlicesOf(const DenseNodes& dense, int n) {
  std::map<SliceKey, SliceContent> out;
  const std::size_t dims = dense.dims().size();
  REQUIRE(dense.SliceHeads(n).size() == dense.Slices(n).size());
  for (std::size_t k = 0; k < dense.Slices(n).size(); ++k) {
    const SliceHead& head = dense.SliceHeads(n)[k];
    const NamespaceSlice& s = dense.Slices(n)[k];
    const std::string& ns = dense.namespaces()[head.ns];
    const int64_t* used = dense.SliceUsed(n, k);
    for (std::size_t d = 0; d < dims; ++d) {
      int64_t most = 0;
      for (const NormalizedPod* m : s.members)
        most = std::max(most, m->requests.Get(dense.dims()[d]));
      CHECK(s.largest()[d] == most);
    }
    const bool empty = head.pods == 0 && s.members.empty() &&
                       std::all_of(used, used + dims, [](int64_t u) { return u == 0; });
    if (empty) continue;  // kept for the namespace's return
    SliceContent& c = out[{ns, head.priority}];
    c.pods += head.pods;
    c.used.resize(dims, 0);
    for (std::size_t d = 0; d < dims; ++d)
      c.used[d] += used[d];
    for (const NormalizedPod* m : s.members)
      c.members.insert(m->store_key());
  }
  return out;
}

// The mirror against the node table (and pod checks against the plain functions).
void CheckMirror(const ClusterState& state, RandomCluster& gen, const ClusterCase& c) {
  const DenseNodes& dense = *state.dense_nodes();
  REQUIRE(dense.size() == static_cast<int>(state.nodes().size()));
  // A few pods to fit and score, of every size class.
  std::vector<Pod> pods;
  for (int k = 0; k < 4; ++k) {
    pods.push_back(DecodeGeneratedPod(gen.NewPod(gen.AnyNamespace(), PodLifecycle::kPending, ""),
                                      c.decode_options()));
  }
  int n = 0;
  for (const auto& [name, node] : state.nodes()) {
    INFO("node " << name << " (index " << n << ")");
    CHECK(dense.name(n) == name);
    CHECK(dense.IndexOf(name) == n);
    const NodeRecord* record = state.FindNodeRecord(name);
    REQUIRE(record != nullptr);
    CHECK(record->dense == n);
    const NodeUsage& usage = record->usage;
    for (std::size_t d = 0; d < dense.dims().size(); ++d) {
      const ResourceName dim = dense.dims()[d];
      INFO("dimension " << dim.str());
      CHECK(dense.Free(n, static_cast<int>(d)) ==
            SaturatingSub(node.allocatable.Get(dim), usage.requested.Get(dim)));
    }
    const auto max_pods = node.allocatable.Find(kPodsName);
    CHECK(dense.PodSlots(n) ==
          (max_pods ? *max_pods - usage.pod_count : std::numeric_limits<int64_t>::max()));
    CHECK(dense.NominationCount(n) == record->fit.nominations);
    // Slices: the pods on the node, grouped by namespace and priority.
    std::map<SliceKey, SliceContent> expected;
    for (const NormalizedPod* p : usage.pods) {
      SliceContent& s = expected[{p->ns, p->priority}];
      ++s.pods;
      s.used.resize(dense.dims().size(), 0);
      for (std::size_t d = 0; d < dense.dims().size(); ++d)
        s.used[d] += p->requests.Get(dense.dims()[d]);
      s.members.insert(p->store_key());
    }
    CHECK(SlicesOf(dense, n) == expected);
    for (const Pod& raw : pods) {
      const NormalizedPod pod = state.Normalize(raw);
      const DenseRequest r = dense.MakeRequest(pod.requests);
      const NodeInfo info{node, &usage};
      INFO("pod requests " << pod.requests.ToString());
      for (const NodeScoring scoring :
           {NodeScoring::kLeastAllocated, NodeScoring::kMostAllocated, NodeScoring::kNone}) {
        CHECK(dense.Score(scoring, r, n) == ScoreNode(scoring, pod, info));
      }
      if (r.complete) {
        CHECK(dense.Fits(r, n) ==
              CheckNodeResources(pod, node, usage.requested, usage.pod_count).ok());
        CHECK(dense.FitsAllocatable(r, n) == CheckNodeResources(pod, node, {}, 0).ok());
      }
    }
    ++n;
  }
  // HasPods: any counted pod of the namespace on some node (below the priority).
  for (std::size_t id = 0; id < dense.namespaces().size(); ++id) {
    const std::string& ns = dense.namespaces()[id];
    for (const int32_t priority : {-100, 0, 100, 1000, 100000}) {
      bool any = false, below = false;
      for (const auto& [name, node] : state.nodes()) {
        for (const NormalizedPod* p : state.UsageOf(name).pods) {
          if (p->ns != ns) continue;
          any = true;
          below = below || p->priority < priority;
        }
      }
      INFO("namespace " << ns << " priority " << priority);
      CHECK(dense.HasPods(static_cast<int>(id), false, priority) == any);
      CHECK(dense.HasPods(static_cast<int>(id), true, priority) == below);
    }
  }
}

// Two mirrors of the same nodes hold the same columns and slices.
void CheckSameMirror(const DenseNodes& a, const DenseNodes& b) {
  REQUIRE(a.size() == b.size());
  REQUIRE(a.dims() == b.dims());
  for (int n = 0; n < a.size(); ++n) {
    INFO("node " << a.name(n));
    CHECK(a.name(n) == b.name(n));
    for (int d = 0; d < static_cast<int>(a.dims().size()); ++d)
      CHECK(a.Free(n, d) == b.Free(n, d));
    CHECK(a.PodSlots(n) == b.PodSlots(n));
    CHECK(a.NominationCount(n) == b.NominationCount(n));
    CHECK(SlicesOf(a, n) == SlicesOf(b, n));
  }
}

}  // namespace

TEST_CASE("a PriorityClass change re-files the bound pods it re-prioritises", "[core][dense]") {
  // Found by the random changes below: the mirror filed a pod under the priority it had when it
  // was bound, so after a class change the reclaim search's bounds read stale slices, and
  // deleting the pod left a slice with a dangling member and one with -1 pods.
  ClusterState state;
  state.UpsertPriorityClass(testing::MakePriorityClass("batch", 100));
  state.UpsertNode(testing::MakeNode("n1", 8000));
  state.UpsertPod(testing::MakePod("a", "job").Cpu(1000).PriorityClassName("batch").BoundTo("n1"));
  state.EnableDenseNodes({});
  const DenseNodes& dense = *state.dense_nodes();
  const int ns = dense.NamespaceId("a");
  CHECK(dense.HasPods(ns, true, 200));
  state.UpsertPriorityClass(testing::MakePriorityClass("batch", 500));
  CHECK_FALSE(dense.HasPods(ns, true, 200));
  CHECK(dense.HasPods(ns, true, 501));
  std::map<SliceKey, SliceContent> expected;
  expected[{"a", 500}] = SliceContent{1, {1000, 0}, {"uid-a-job"}};
  CHECK(SlicesOf(dense, 0) == expected);
  state.DeletePod("uid-a-job");
  CHECK(SlicesOf(dense, 0).empty());
  CHECK_FALSE(dense.HasPods(ns, false, 0));
}

TEST_CASE("DenseNodes equals the node table through random changes", "[core][dense]") {
  for (uint64_t seed = 1; seed <= 120; ++seed) {
    RandomCluster gen(seed);
    const ClusterCase c = gen.Generate();
    ClusterState state;
    testing::BuildDenseState(gen, c, &state);
    RandomChanges changes(&gen, c.decode_options());
    std::vector<std::string> done;
    for (int step = 0; step <= 40; ++step) {
      if (step > 0) done.push_back(changes.Apply(&state));
      INFO("seed " << seed << ", changes: " << fmt::format("{}", fmt::join(done, "; ")));
      CheckAccounting(state);
      CheckMirror(state, gen, c);
      if (step % 10 == 0) {
        const ClusterState fresh(state);  // replays every object into a new mirror
        CheckSameMirror(*state.dense_nodes(), *fresh.dense_nodes());
      }
    }
  }
}

}  // namespace dense_nodes_test
}  // namespace capext
