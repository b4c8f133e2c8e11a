// /preempt with many candidates: 500 proposed nodes, each full with 20 running pods, for a
// high-priority pod of a borrowing quota (so victim selection runs with same-namespace
// lower-priority victims and the reprieve loop on every node). Reports the server time of
// ExtenderService::Preempt, p50/p99, next to the RapidJSON parse floor of its body. Target: p99 < 5
// ms.
//
// Usage: bench_preempt_bench [--json FILE] [--quick] [--nodes N] [--pods-per-node N]
//                            [--iterations N] [--log-level info|warn|...]
#include <rapidjson/document.h>

#include <cstdio>
#include <string>
#include <vector>

#include "bench/micro/bench_support.h"
#include "extender/embedded/embedded_binder.h"
#include "extender/log.h"
#include "extender/verbs/extender_service.h"

constexpr const char* kUsage =
    "Usage: bench_preempt_bench [--json FILE] [--quick] [--nodes N] [--pods-per-node N] "
    "[--iterations N] [--log-level info|warn|error]";

int main(int argc, char** argv) {
  using namespace capext;
  using namespace capext::bench;
  const Args args = Args::Parse(argc, argv, kUsage);
  ConfigureLog("logfmt", args.Str("--log-level", "info"));
  ClusterShape shape;
  shape.nodes = args.Int("--nodes", 500);
  shape.pods_per_node = args.Int("--pods-per-node", 20);
  shape.quotas = 4;
  shape.node_cpu_milli = 32'000;
  shape.pod_cpu_milli = 32'000 / shape.pods_per_node;  // the nodes are full
  const int iterations = args.quick ? 50 : args.Int("--iterations", 500);
  Report report("preempt_bench");

  Metrics metrics;
  SchedulerCache cache(QuotaSemantics::kCapacityExtender, {});
  // Victim uids kube-scheduler's own dry run would propose per node: the three lowest team-0 pods.
  std::vector<std::pair<std::string, std::vector<std::string>>> proposed;
  cache.Write([&](ClusterState& state) {
    for (int k = 0; k < shape.quotas; ++k) {
      ElasticQuota q = MakeTeamQuota(k, shape);
      // team-0 (the preemptor's) uses half the cluster against a min of a quarter: it borrows,
      // so its victims are its own lower-priority pods.
      const int64_t cluster_cpu = shape.node_cpu_milli * shape.nodes;
      q.min->Set("cpu", k == 0 ? cluster_cpu / 4 : cluster_cpu / 2);
      q.max->Set("cpu", cluster_cpu * 2);
      state.UpsertQuota(q);
    }
    uint64_t index = 0;
    for (int i = 0; i < shape.nodes; ++i) {
      state.UpsertNode(MakeBenchNode(i, shape));
      std::vector<std::string> victims;
      for (int p = 0; p < shape.pods_per_node; ++p, ++index) {
        // Half the pods are team-0's (priority 0), the rest other teams' (priority 10).
        const bool own = p % 2 == 0;
        Pod pod = MakeBoundPod(index, NodeName(i), shape, own ? 0 : 10);
        pod.ns = own ? "team-0" : TeamNamespace(1 + p % (shape.quotas - 1));
        if (own && victims.size() < 3) victims.push_back(pod.uid);
        state.UpsertPod(std::move(pod));
      }
      proposed.emplace_back(NodeName(i), std::move(victims));
    }
    return 0;
  });
  cache.set_ready(true);
  EmbeddedBinder binder(&cache);
  ExtenderService service(&cache, &metrics, NodeScoring::kLeastAllocated,
                          PriorityThenStartTimeOrder(), &binder, ServiceOptions{});

  PodSpecText preemptor;
  preemptor.ns = "team-0";
  preemptor.name = "urgent-0";
  preemptor.cpu = "4";
  preemptor.memory = "4Gi";
  preemptor.priority = 1000;
  preemptor.priority_class = "high";
  const std::string body = PreemptBody(RealPodJson(preemptor), proposed);
  std::printf("/preempt: %d proposed nodes x %d pods, body %zu bytes\n", shape.nodes,
              shape.pods_per_node, body.size());

  // Sanity: every proposed node is a candidate.
  std::size_t candidates = 0, victims = 0;
  {
    std::string copy = body;
    http::Response r = service.Preempt(copy);
    rapidjson::Document doc;
    doc.Parse(r.body.c_str());
    if (r.status != 200 || !doc.IsObject() || !doc["NodeNameToMetaVictims"].IsObject()) {
      std::fprintf(stderr, "unexpected answer: %.200s\n", r.body.c_str());
      return 1;
    }
    const auto& m = doc["NodeNameToMetaVictims"];
    candidates = m.MemberCount();
    for (auto it = m.MemberBegin(); it != m.MemberEnd(); ++it)
      victims += it->value["Pods"].Size();
  }
  std::printf("  answer: %zu candidate nodes, %zu victims in all\n", candidates, victims);
  if (candidates != static_cast<std::size_t>(shape.nodes)) {
    std::fprintf(stderr, "expected every node to be a candidate\n");
    return 1;
  }

  std::vector<double> parse, server, server_cpu;
  std::string copy;
  for (int i = 0; i < iterations + 20; ++i) {
    {
      rapidjson::Document doc;
      const Stopwatch w;
      doc.Parse(body.c_str(), body.size());
      if (i >= 20) parse.push_back(w.WallMicros());
    }
    copy = body;
    const Stopwatch w;
    http::Response r = service.Preempt(copy);
    if (i >= 20) {
      server_cpu.push_back(w.CpuMicros());
      server.push_back(w.WallMicros());
    }
  }
  const Summary parse_s = Summarize(parse);
  const Summary server_s = Summarize(server);
  const Summary cpu_s = Summarize(server_cpu);
  PrintSummary("RapidJSON Parse (normal) of the body", parse_s);
  PrintSummary("ExtenderService::Preempt wall", server_s);
  PrintSummary("ExtenderService::Preempt thread CPU", cpu_s);
  report.Number("nodes", shape.nodes);
  report.Number("pods_per_node", shape.pods_per_node);
  report.Number("body_bytes", static_cast<double>(body.size()));
  report.Number("candidates", static_cast<double>(candidates));
  report.Number("victims", static_cast<double>(victims));
  report.Latency("parse_normal", parse_s);
  report.Latency("preempt.wall", server_s);
  report.Latency("preempt.cpu", cpu_s);
  report.Number("per_node_us_p50", server_s.p50 / shape.nodes);
  report.Target("preempt_p99_ms", server_s.p99 / 1000.0, "<=", 5.0, "ms");
  report.Write(args.Str("--json", ""));
  return 0;
}
