// DenseNodes must agree exactly with the core's node fit and the policies' node scorers, since
// the simulator uses it in their place on its hot path.
#include "bench/sim/dense_nodes.h"

#include <catch2/catch.hpp>

#include "core/node_fit.h"
#include "policies/node_scorer.h"

namespace capext {
namespace {

// A small deterministic generator for test data.
uint64_t Next(uint64_t* s) {
  *s = *s * 6364136223846793005ull + 1442695040888963407ull;
  return *s >> 33;
}

std::string NodeName(int i) {
  return "n" + std::to_string(100 + i);
}

Node MakeNode(const std::string& name, int64_t cpu, int64_t mem, int64_t gpu, int64_t pods) {
  Node n;
  n.name = name;
  n.allocatable.Set("cpu", cpu);
  n.allocatable.Set("memory", mem);
  if (gpu > 0) n.allocatable.Set("nvidia.com/gpu", gpu);
  if (pods > 0) n.allocatable.Set("pods", pods);
  return n;
}

Pod MakePod(const std::string& name, int64_t cpu, int64_t mem, int64_t gpu) {
  Pod p;
  p.ns = "t";
  p.name = name;
  p.uid = name;
  if (cpu > 0) p.requests.Set("cpu", cpu);
  if (mem > 0) p.requests.Set("memory", mem);
  if (gpu > 0) p.requests.Set("nvidia.com/gpu", gpu);
  return p;
}

TEST_CASE("dense fit and scores equal the core's and the policies'", "[sim][dense]") {
  ClusterState state;
  uint64_t seed = 7;
  for (int i = 0; i < 40; ++i) {
    state.UpsertNode(MakeNode(NodeName(i), 1000 * (1 + static_cast<int64_t>(Next(&seed) % 64)),
                              (int64_t{1} << 30) * (1 + static_cast<int64_t>(Next(&seed) % 512)),
                              static_cast<int64_t>(Next(&seed) % 3) * 4, i % 5 == 0 ? 0 : 8));
  }
  // Random bound pods, some of them overcommitting their node (a snapshot may say so).
  for (int i = 0; i < 200; ++i) {
    Pod p = MakePod("bound-" + std::to_string(i), 100 * static_cast<int64_t>(Next(&seed) % 100),
                    (int64_t{1} << 28) * static_cast<int64_t>(Next(&seed) % 64),
                    static_cast<int64_t>(Next(&seed) % 2));
    p.node_name = NodeName(static_cast<int>(Next(&seed) % 40));
    p.phase = PodPhase::kRunning;
    state.UpsertPod(p);
  }
  DenseNodes dense(state, {"cpu", "memory", "nvidia.com/gpu"});
  REQUIRE(dense.size() == 40);
  for (const char* scoring : {"least-allocated", "most-allocated", "none"}) {
    auto scorer = MakeNodeScorer(scoring);
    auto dense_scoring = DenseScoringFromName(scoring);
    REQUIRE(scorer);
    REQUIRE(dense_scoring);
    for (int k = 0; k < 200; ++k) {
      Pod pod = MakePod("p", 250 * static_cast<int64_t>(Next(&seed) % 80),
                        (int64_t{1} << 27) * static_cast<int64_t>(Next(&seed) % 300),
                        static_cast<int64_t>(Next(&seed) % 3));
      const DenseRequest r = dense.MakeRequest(pod.requests);
      for (int n = 0; n < dense.size(); ++n) {
        auto info = state.FindNode(dense.name(n));
        REQUIRE(info);
        INFO(scoring << " node " << dense.name(n) << " pod " << pod.requests.ToString());
        CHECK(dense.Score(*dense_scoring, r, n) == scorer->Score(pod, *info));
        CHECK(dense.Fits(r, n) ==
              CheckNodeResources(pod, info->node, info->usage->requested, info->usage->pod_count)
                  .ok());
        CHECK(dense.FitsAllocatable(r, n) ==
              CheckNodeResources(pod, info->node, ResourceList{}, 0).ok());
      }
    }
  }
}

TEST_CASE("dense mirror follows usage changes after Resync", "[sim][dense]") {
  ClusterState state;
  state.UpsertNode(MakeNode("a", 4000, 1000, 0, 2));
  DenseNodes dense(state, {"cpu", "memory"});
  const DenseRequest r = dense.MakeRequest(MakePod("x", 3000, 0, 0).requests);
  CHECK(dense.Fits(r, 0));
  Pod p = MakePod("b1", 2000, 0, 0);
  p.node_name = "a";
  p.phase = PodPhase::kRunning;
  state.UpsertPod(p);
  dense.Resync(state, 0);
  CHECK_FALSE(dense.Fits(r, 0));
  CHECK(dense.Free(0, dense.DimOf("cpu")) == 2000);
  CHECK(dense.PodSlots(0) == 1);
  state.DeletePod("b1");
  dense.Resync(state, 0);
  CHECK(dense.Fits(r, 0));
}

TEST_CASE("static classes come from the core's static checks", "[sim][dense]") {
  ClusterState state;
  Node gpu = MakeNode("g", 1000, 1000, 1, 0);
  gpu.labels["alibaba.com/gpu-model"] = "T4";
  state.UpsertNode(gpu);
  Node tainted = MakeNode("t", 1000, 1000, 0, 0);
  tainted.taints.push_back({"dedicated", "x", "NoSchedule"});
  state.UpsertNode(tainted);
  DenseNodes dense(state, {"cpu"});
  Pod any = MakePod("p", 1, 0, 0);
  const int free_class = dense.StaticClassFor(any, "");
  CHECK(dense.StaticOk(free_class, dense.IndexOf("g")));
  CHECK_FALSE(dense.StaticOk(free_class, dense.IndexOf("t")));
  Pod t4 = any;
  NodeSelectorTerm term;
  term.match_expressions.push_back({"alibaba.com/gpu-model", "In", {"T4"}});
  t4.required_affinity.push_back(term);
  const int t4_class = dense.StaticClassFor(t4, "T4|");
  CHECK(t4_class != free_class);
  CHECK(dense.StaticClassFor(t4, "T4|") == t4_class);
  CHECK(dense.StaticOk(t4_class, dense.IndexOf("g")));
  CHECK_FALSE(dense.StaticOk(t4_class, dense.IndexOf("t")));
}

TEST_CASE("ScanBest finds what Scan finds, and the best of it by score", "[sim][dense]") {
  ClusterState state;
  uint64_t seed = 5;
  const int count = 300;
  for (int i = 0; i < count; ++i) {
    Node node = MakeNode(NodeName(i), 1000 * (1 + static_cast<int64_t>(Next(&seed) % 16)),
                         (int64_t{1} << 30) * (1 + static_cast<int64_t>(Next(&seed) % 16)),
                         static_cast<int64_t>(Next(&seed) % 2) * 4, i % 7 == 0 ? 0 : 8);
    if (i % 5 == 0) node.labels["pool"] = "a";
    state.UpsertNode(node);
  }
  for (int i = 0; i < 900; ++i) {
    Pod p = MakePod("bound-" + std::to_string(i), 100 * static_cast<int64_t>(Next(&seed) % 30),
                    (int64_t{1} << 28) * static_cast<int64_t>(Next(&seed) % 20), 0);
    p.node_name = NodeName(static_cast<int>(Next(&seed) % count));
    p.phase = PodPhase::kRunning;
    state.UpsertPod(p);
  }
  DenseNodes dense(state, {"cpu", "memory", "nvidia.com/gpu"});
  Pod any = MakePod("any", 0, 0, 0);
  Pod pooled = any;
  pooled.node_selector["pool"] = "a";
  const int classes[] = {dense.StaticClassFor(any, ""), dense.StaticClassFor(pooled, "pool=a")};
  for (const char* name : {"least-allocated", "most-allocated", "none"}) {
    const DenseScoring scoring = *DenseScoringFromName(name);
    for (int round = 0; round < 400; ++round) {
      // Nominations on a few nodes in some rounds: ScanBest then takes its general path.
      const int nominated = round % 4 == 3 ? static_cast<int>(Next(&seed) % count) : -1;
      if (nominated >= 0) dense.AddNomination(nominated, +1);
      const Pod pod = MakePod("p", 200 * static_cast<int64_t>(Next(&seed) % 40),
                              (int64_t{1} << 27) * static_cast<int64_t>(Next(&seed) % 40),
                              static_cast<int64_t>(Next(&seed) % 3));
      const DenseRequest r = dense.MakeRequest(pod.requests);
      const int shape = dense.ShapeOf(scoring, r);
      const int cls = classes[round % 2];
      const int start = static_cast<int>(Next(&seed) % count);
      const std::size_t limit = round % 5 == 0 ? SIZE_MAX : 1 + Next(&seed) % 120;
      auto exact = [&](int n) { return dense.Fits(r, n); };
      std::vector<int> expected, got;
      const int expected_processed = dense.Scan(r, cls, start, limit, &expected, exact);
      int expected_best = -1, expected_score = -1;
      for (int n : expected) {
        const int s = dense.Score(scoring, r, n);
        if (s > expected_score || (s == expected_score && n < expected_best)) {
          expected_best = n;
          expected_score = s;
        }
      }
      int best = -2;
      const int processed =
          dense.ScanBest(r, cls, shape, scoring, start, limit, &got, exact, &best);
      INFO(name << " round " << round << " start " << start << " limit " << limit);
      CHECK(processed == expected_processed);
      CHECK(got == expected);
      CHECK(best == expected_best);
      if (nominated >= 0) dense.AddNomination(nominated, -1);
    }
  }
}

TEST_CASE("Apply keeps the mirror equal to the state, and memoised scores follow it",
          "[sim][dense]") {
  ClusterState state;
  uint64_t seed = 11;
  for (int i = 0; i < 12; ++i) {
    state.UpsertNode(MakeNode(NodeName(i), 1000 * (1 + static_cast<int64_t>(Next(&seed) % 32)),
                              (int64_t{1} << 30) * (1 + static_cast<int64_t>(Next(&seed) % 64)), 4,
                              i % 4 == 0 ? 0 : 6));
  }
  DenseNodes live(state, {"cpu", "memory", "nvidia.com/gpu"});
  const auto scoring = DenseScoring::kLeastAllocated;
  std::vector<std::pair<std::string, int>> bound;  // pod uid, node
  std::vector<Pod> shapes;
  for (int k = 0; k < 5; ++k) {
    shapes.push_back(MakePod("shape", 250 * static_cast<int64_t>(1 + Next(&seed) % 16),
                             (int64_t{1} << 28) * static_cast<int64_t>(Next(&seed) % 32),
                             static_cast<int64_t>(Next(&seed) % 2)));
  }
  // One pod asks for an amount near INT64_MAX, so the saturating arithmetic is exercised.
  shapes.push_back(MakePod("huge", INT64_MAX - 5, 0, 0));
  for (int step = 0; step < 2000; ++step) {
    const bool add = bound.empty() || Next(&seed) % 3 != 0;
    int n = 0;
    if (add) {
      const Pod& shape = shapes[Next(&seed) % shapes.size()];
      Pod p = MakePod("p" + std::to_string(step), 0, 0, 0);
      p.requests = shape.requests;
      n = static_cast<int>(Next(&seed) % 12);
      p.node_name = NodeName(n);
      p.phase = PodPhase::kRunning;
      const DenseRequest r = live.MakeRequest(p.requests);
      REQUIRE(live.CanApply(r));
      state.UpsertPod(p);
      live.Apply(n, r, +1);
      bound.emplace_back(p.uid, n);
    } else {
      const std::size_t i = Next(&seed) % bound.size();
      const Pod* p = state.FindPod(bound[i].first);
      REQUIRE(p != nullptr);
      n = bound[i].second;
      const DenseRequest r = live.MakeRequest(p->requests);
      state.DeletePod(bound[i].first);
      live.Apply(n, r, -1);
      bound.erase(bound.begin() + static_cast<std::ptrdiff_t>(i));
    }
    DenseNodes fresh(state, {"cpu", "memory", "nvidia.com/gpu"});
    INFO("step " << step << " node " << n);
    for (int d = 0; d < 3; ++d) {
      CHECK(live.Requested(n, d) == fresh.Requested(n, d));
      CHECK(live.Free(n, d) == fresh.Free(n, d));
    }
    CHECK(live.PodSlots(n) == fresh.PodSlots(n));
    for (const Pod& shape : shapes) {
      const DenseRequest r = live.MakeRequest(shape.requests);
      const int id = live.ShapeOf(scoring, r);
      for (int m = 0; m < live.size(); ++m) {
        CHECK(live.CachedScore(scoring, r, id, m) == fresh.Score(scoring, r, m));
      }
    }
  }
  Pod negative = MakePod("neg", 100, 0, 0);
  negative.requests.Set("memory", -1);
  CHECK_FALSE(live.CanApply(live.MakeRequest(negative.requests)));
}

}  // namespace
}  // namespace capext
