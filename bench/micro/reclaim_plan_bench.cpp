// The plan search (docs/reclaim-plan.md, core/reclaim_plan.h) at scale: 5,000 nodes of 32 cpu,
// each full with 10 running pods of 3.2 cpu (50,000 pods) of three teams that each borrow about a
// quarter of what they use, for a 16-pod gang of 8-cpu pods within its quota's min (no node has
// room: the plan takes borrowers on several nodes), and for a single 8-cpu pod. Reports
// SearchReclaimPlan's p50/p99 for both, the plan's size and steps (a spare quota's unused min keeps
// the cluster-wide sum of mins above what runs), and, for comparison, today's single-node
// PlanReclaim for the single pod. Target: the gang's plan p99 < 50 ms.
//
// Usage: bench_reclaim_plan_bench [--json FILE] [--quick] [--nodes N] [--iterations N]
#include <cstdio>
#include <string>
#include <vector>

#include "bench/micro/bench_support.h"
#include "core/reclaim_plan.h"
#include "core/reclaim_planner.h"

constexpr const char* kUsage =
    "Usage: bench_reclaim_plan_bench [--json FILE] [--quick] [--nodes N] [--iterations N]";

int main(int argc, char** argv) {
  using namespace capext;
  using namespace capext::bench;
  const Args args = Args::Parse(argc, argv, kUsage);
  const int nodes = args.quick ? 1000 : args.Int("--nodes", 5000);
  const int iterations = args.quick ? 5 : args.Int("--iterations", 30);
  constexpr int kPodsPerNode = 10;
  constexpr int64_t kNodeCpu = 32'000, kPodCpu = 3'200, kMemberCpu = 8'000;
  constexpr int kGang = 16;
  Report report("reclaim_plan_bench");

  ClusterState state;
  ClusterShape shape;
  shape.node_cpu_milli = kNodeCpu;
  shape.pod_cpu_milli = kPodCpu;
  shape.quotas = 5;
  const int64_t cluster_cpu = kNodeCpu * nodes;
  for (int k = 0; k < shape.quotas; ++k) {
    ElasticQuota q = MakeTeamQuota(k, shape);
    // team-0 waits (min for its gang and a single pod); team-1..3 use a third of the cluster
    // each against a min of a quarter: each borrows a quarter of what it uses; team-4 runs
    // nothing and keeps the sum of mins above what runs (the cluster-wide rule passes).
    const int64_t min = k == 0   ? kMemberCpu * (kGang + 1)
                        : k == 4 ? cluster_cpu / 2
                                 : cluster_cpu / 4;
    q.min->Set("cpu", min);
    q.max->Set("cpu", cluster_cpu);
    state.UpsertQuota(q);
  }
  uint64_t index = 0;
  for (int i = 0; i < nodes; ++i) {
    state.UpsertNode(MakeBenchNode(i, shape));
    for (int p = 0; p < kPodsPerNode; ++p, ++index) {
      Pod pod = MakeBoundPod(index, NodeName(i), shape, 0);
      pod.ns = TeamNamespace(1 + static_cast<int>(index % 3));
      state.UpsertPod(std::move(pod));
    }
  }
  PodGroupSpec group;
  group.key = GroupKey{std::string(kCoschedulingApiGroup), "team-0", "train"};
  group.min_member = kGang;
  state.UpsertPodGroup(group);
  for (int m = 0; m <= kGang; ++m) {
    Pod pod;
    pod.ns = "team-0";
    pod.name = m < kGang ? fmt::format("train-{}", m) : "solo";
    pod.uid = Uid(0xa0a0a0a0, static_cast<uint64_t>(m));
    pod.creation_ms = 1'800'000'000'000 + m;
    pod.scheduler_name = "default-scheduler";
    pod.requests.Set("cpu", kMemberCpu);
    pod.requests.Set("memory", int64_t{4} << 30);
    if (m < kGang) {
      pod.group = GroupRef{std::string(kCoschedulingApiGroup), "train", "", ""};
      pod.has_controller = true;
    }
    state.UpsertPod(std::move(pod));
  }
  const NormalizedPod& member = *state.FindPodByName("team-0", "train-0");
  const NormalizedPod& solo = *state.FindPodByName("team-0", "solo");
  std::printf("plan search: %d nodes x %d pods, a %d-pod gang of %lld-cpu pods and a single pod\n",
              nodes, kPodsPerNode, kGang, static_cast<long long>(kMemberCpu / 1000));

  const VictimOrder& order = PriorityThenStartTimeOrder();
  auto run = [&](const NormalizedPod& pod, const char* name) {
    ReclaimPlan plan;
    std::vector<double> wall;
    for (int i = 0; i < iterations + 2; ++i) {
      const Stopwatch w;
      plan = SearchReclaimPlan(state, pod, order);
      if (i >= 2) wall.push_back(w.WallMicros());
    }
    const Summary s = Summarize(wall);
    std::printf("  %s: %s, %zu members on %zu nodes, %zu victims in %zu units, %lld steps\n", name,
                ReclaimPlanOutcomeName(plan.outcome), plan.members.size(), plan.nodes.size(),
                plan.Victims().size(), plan.units.size(), static_cast<long long>(plan.steps));
    PrintSummary(name, s);
    report.Latency(std::string(name) + ".wall", s);
    report.Number(std::string(name) + ".victims", static_cast<double>(plan.Victims().size()));
    report.Number(std::string(name) + ".steps", static_cast<double>(plan.steps));
    return std::make_pair(plan.found(), s);
  };
  const auto [gang_found, gang] = run(member, "gang_plan");
  const auto [solo_found, single] = run(solo, "single_plan");
  if (!gang_found || !solo_found) {
    std::fprintf(stderr, "expected a plan for the gang and the single pod\n");
    return 1;
  }
  std::vector<double> today;
  for (int i = 0; i < iterations + 2; ++i) {
    const Stopwatch w;
    const ReclaimPlanForPod plan = PlanReclaim(state, solo, order, {});
    if (i >= 2) today.push_back(w.WallMicros());
    if (plan.decision != ReclaimDecision::kEvict) {
      std::fprintf(stderr, "expected today's reclaim to evict for the single pod\n");
      return 1;
    }
  }
  // What a copy of the state costs: the search's what-if once was one (a floor of every search
  // then); it is deltas over the state now (docs/reclaim-plan.md#the-what-if-and-the-placement).
  std::vector<double> copies;
  for (int i = 0; i < iterations; ++i) {
    const Stopwatch w;
    const ClusterState copy(state);
    copies.push_back(w.WallMicros());
  }
  const Summary copy_s = Summarize(copies);
  PrintSummary("a copy of the state (the what-if it no longer is)", copy_s);
  report.Latency("state_copy.wall", copy_s);
  const Summary today_s = Summarize(today);
  PrintSummary("single pod, today's one-node PlanReclaim", today_s);
  report.Latency("single_today.wall", today_s);
  report.Number("nodes", nodes);
  report.Number("pods", static_cast<double>(index));
  report.Target("gang_plan_p99_ms", gang.p99 / 1000.0, "<=", 50.0, "ms");
  report.Write(args.Str("--json", ""));
  return 0;
}
