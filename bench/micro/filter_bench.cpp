// /filter on a large cluster: 5,000 nodes with ~20 running pods each and a few quotas.
//   (a) the RapidJSON parse floor of the very body /filter gets (normal DOM parse, in-situ, and
//       in-situ with the flags the extender uses: iterative + UTF-8 validation);
//   (b) ExtenderService::Filter server time per call, p50/p99, and p99 / parse (the parses and
//       the Filter call alternate, so both see the same machine);
//   (c) requests/s over HTTP keep-alive against the real http::Server (2 IO threads) + router,
//       next to the same server answering a canned body of the same size (transport ceiling);
//   (d) heap per node and per pod of the ClusterState holding the cluster.
// Bodies carry 500 and 5,000 NodeNames and a real-sized Pod (the captured fixtures' shape).
//
// Usage: see kUsage below (--help). --http 0 --names 500 is handy under a profiler.
#include <rapidjson/document.h>

#include <cstdio>
#include <string>
#include <vector>

#include "bench/micro/bench_support.h"
#include "extender/embedded/embedded_binder.h"
#include "extender/http/server.h"
#include "extender/log.h"
#include "extender/routes.h"
#include "extender/verbs/extender_service.h"

namespace capext::bench {
namespace {

constexpr unsigned kExtenderParseFlags = rapidjson::kParseInsituFlag |
                                         rapidjson::kParseIterativeFlag |
                                         rapidjson::kParseValidateEncodingFlag;

// Wall and thread-CPU time of a series of calls.
struct Timings {
  Summary wall, cpu;
};

class Samples {
 public:
  void Add(const Stopwatch& w) {
    const double cpu = w.CpuMicros();
    wall_.push_back(w.WallMicros());
    cpu_.push_back(cpu);
  }
  Timings Done() { return {Summarize(std::move(wall_)), Summarize(std::move(cpu_))}; }

 private:
  std::vector<double> wall_, cpu_;
};

struct ParseFloor {
  Timings normal, insitu, extender_flags;
};

// Server time of Filter (the body copy the transport would hand over is made outside the clock).
Timings MeasureFilter(ExtenderService& service, const std::string& body, int iterations,
                      std::size_t* answer_bytes) {
  Samples samples;
  std::string copy;
  for (int i = 0; i < iterations; ++i) {
    copy = body;
    const Stopwatch w;
    http::Response r = service.Filter(copy);
    samples.Add(w);
    *answer_bytes = r.body.size();
  }
  return samples.Done();
}

// The parse floor and Filter's server time, one call of each in turn: on a machine shared with
// other work the speed of the core drifts by 1.5x and more over seconds, and a ratio of two
// numbers measured seconds apart would measure that drift.
struct ParseAndFilter {
  ParseFloor floor;
  Timings filter;
};
ParseAndFilter MeasureParseAndFilter(ExtenderService& service, const std::string& body,
                                     int iterations, std::size_t* answer_bytes) {
  Samples normal, insitu, flags, filter;
  std::string copy;
  for (int i = 0; i < iterations; ++i) {
    {
      rapidjson::Document doc;
      const Stopwatch w;
      doc.Parse(body.c_str(), body.size());
      normal.Add(w);
      if (doc.HasParseError()) std::abort();
    }
    {
      copy = body;
      rapidjson::Document doc;
      const Stopwatch w;
      doc.ParseInsitu(copy.data());
      insitu.Add(w);
    }
    {
      copy = body;
      rapidjson::Document doc;
      const Stopwatch w;
      doc.ParseInsitu<kExtenderParseFlags>(copy.data());
      flags.Add(w);
    }
    copy = body;
    const Stopwatch w;
    http::Response r = service.Filter(copy);
    filter.Add(w);
    *answer_bytes = r.body.size();
  }
  return {{normal.Done(), insitu.Done(), flags.Done()}, filter.Done()};
}

void PrintTimings(const char* what, const Timings& t) {
  PrintSummary((std::string(what) + " wall").c_str(), t.wall);
  PrintSummary((std::string(what) + " cpu").c_str(), t.cpu);
}

void ReportTimings(Report& report, const std::string& key, const Timings& t) {
  report.Latency(key + ".wall", t.wall);
  report.Latency(key + ".cpu", t.cpu);
}

}  // namespace
}  // namespace capext::bench

constexpr const char* kUsage =
    "Usage: bench_filter_bench [--json FILE] [--quick] [--nodes N] [--pods-per-node N]\n"
    "         [--clients N] [--iterations-500 N] [--iterations-5000 N] [--requests-500 N]\n"
    "         [--requests-5000 N] [--http 0|1] [--names 500|5000] [--log-level L]";

int main(int argc, char** argv) {
  using namespace capext;
  using namespace capext::bench;
  const Args args = Args::Parse(argc, argv, kUsage);
  ConfigureLog("logfmt", args.Str("--log-level", "info"));
  ClusterShape shape;
  shape.nodes = args.Int("--nodes", 5000);
  shape.pods_per_node = args.Int("--pods-per-node", 20);
  const int clients = args.Int("--clients", 4);
  const int iterations_500 = args.quick ? 500 : args.Int("--iterations-500", 5000);
  const int iterations_5000 = args.quick ? 100 : args.Int("--iterations-5000", 1000);
  const std::size_t requests_500 = args.quick ? 3000 : args.Int("--requests-500", 20000);
  const std::size_t requests_5000 = args.quick ? 300 : args.Int("--requests-5000", 1000);
  const bool http_load = args.Int("--http", 1) != 0;
  const int only_names = args.Int("--names", 0);  // 0 = both 500 and 5,000
  Report report("filter_bench");

  // --- (d) the cluster, measured while it is loaded ---------------------------------------------
  Metrics metrics;
  SchedulerCache cache(QuotaSemantics::kCapacityExtender, {});
  struct Heap {
    std::size_t nodes = 0, pods = 0;
    std::size_t rss_nodes = 0, rss_pods = 0;
  } heap;
  const auto load_start = Clock::now();
  cache.Write([&](ClusterState& state) {
    for (int k = 0; k < shape.quotas; ++k)
      state.UpsertQuota(MakeTeamQuota(k, shape));
    ElasticQuota tight = MakeTeamQuota(0, shape);
    tight.ns = tight.name = "tight";
    tight.min->Set("cpu", 1000);
    tight.max->Set("cpu", 1000);
    state.UpsertQuota(tight);
    const std::size_t h0 = HeapInUse(), r0 = ResidentBytes();
    for (int i = 0; i < shape.nodes; ++i)
      state.UpsertNode(MakeBenchNode(i, shape));
    const std::size_t h1 = HeapInUse(), r1 = ResidentBytes();
    uint64_t index = 0;
    for (int i = 0; i < shape.nodes; ++i) {
      const std::string node = NodeName(i);
      for (int p = 0; p < shape.pods_per_node; ++p) {
        state.UpsertPod(MakeBoundPod(index++, node, shape));
      }
    }
    const std::size_t h2 = HeapInUse(), r2 = ResidentBytes();
    heap.nodes = h1 - h0;
    heap.pods = h2 - h1;
    heap.rss_nodes = r1 - r0;
    heap.rss_pods = r2 - r1;
    return 0;
  });
  cache.set_ready(true);
  const double load_seconds = MicrosSince(load_start) / 1e6;
  const double pods = static_cast<double>(shape.nodes) * shape.pods_per_node;
  const double per_node = static_cast<double>(heap.nodes) / shape.nodes;
  const double per_pod = static_cast<double>(heap.pods) / pods;
  std::printf("cluster: %d nodes, %.0f pods, %d quotas, loaded in %.2f s\n", shape.nodes, pods,
              shape.quotas + 1, load_seconds);
  std::printf("  heap per node %.0f B (RSS %.0f B), per pod %.0f B (RSS %.0f B)\n", per_node,
              static_cast<double>(heap.rss_nodes) / shape.nodes, per_pod,
              static_cast<double>(heap.rss_pods) / pods);
  report.Number("cluster.nodes", shape.nodes);
  report.Number("cluster.pods", pods);
  report.Number("cluster.load_seconds", load_seconds);
  report.Number("memory.heap_bytes_per_node", per_node);
  report.Number("memory.heap_bytes_per_pod", per_pod);
  report.Number("memory.rss_bytes_per_node", static_cast<double>(heap.rss_nodes) / shape.nodes);
  report.Number("memory.rss_bytes_per_pod", static_cast<double>(heap.rss_pods) / pods);

  EmbeddedBinder binder(&cache);
  ExtenderService service(&cache, &metrics, NodeScoring::kLeastAllocated,
                          PriorityThenStartTimeOrder(), &binder, ServiceOptions{});

  PodSpecText pod;
  pod.ns = "team-0";
  pod.name = "trainer-0";
  const std::string pod_json = RealPodJson(pod);
  PodSpecText rejected_pod = pod;
  rejected_pod.ns = "tight";
  rejected_pod.name = "too-big";
  rejected_pod.uid = "0c8e1d7a-5f0b-4a3e-9d55-7c0f8e2b9a11";
  const std::string rejected_json = RealPodJson(rejected_pod);
  std::printf("pod JSON: %zu bytes\n", pod_json.size());
  report.Number("pod_json_bytes", static_cast<double>(pod_json.size()));

  struct Case {
    int names;
    int iterations;
    std::size_t requests;
    double http_target;
  };
  const Case cases[] = {{500, iterations_500, requests_500, 15000},
                        {5000, iterations_5000, requests_5000, 2000}};
  for (const Case& c : cases) {
    if (c.names > shape.nodes || (only_names != 0 && c.names != only_names)) continue;
    // A spread sample of the cluster, as percentageOfNodesToScore would send.
    const auto names = NodeNames(c.names, shape.nodes / c.names);
    const std::string body = FilterBody(pod_json, names);
    const std::string rejected_body = FilterBody(rejected_json, names);
    const std::string key = fmt::format("names_{}", c.names);
    std::printf("\n/filter with %d NodeNames: body %zu bytes\n", c.names, body.size());
    report.Number(key + ".body_bytes", static_cast<double>(body.size()));
    if (PassedNodes(service, body) != c.names) {
      std::fprintf(stderr, "unexpected filter answer for %d names\n", c.names);
      return 1;
    }

    // (a) parse floor, (b) server time, measured in turn.
    std::size_t answer_bytes = 0;
    MeasureParseAndFilter(service, body, 50, &answer_bytes);  // warm-up
    const ParseAndFilter measured =
        MeasureParseAndFilter(service, body, c.iterations, &answer_bytes);
    const ParseFloor& floor = measured.floor;
    const Timings& filter = measured.filter;
    PrintTimings("Parse (normal, DOM copy)", floor.normal);
    PrintTimings("ParseInsitu (default flags)", floor.insitu);
    PrintTimings("ParseInsitu (extender flags)", floor.extender_flags);
    PrintTimings("Filter (all nodes pass)", filter);
    std::size_t rejected_bytes = 0;
    MeasureFilter(service, rejected_body, 20, &rejected_bytes);
    const Timings rejected =
        MeasureFilter(service, rejected_body, std::max(50, c.iterations / 5), &rejected_bytes);
    PrintTimings("Filter (quota-rejected)", rejected);
    std::printf("  answer %zu bytes (pass), %zu bytes (rejected)\n", answer_bytes, rejected_bytes);
    // The target compares the server's p99 with the parse floor (its median).
    const double ratio_normal = filter.wall.p99 / floor.normal.wall.p50;
    const double ratio_insitu = filter.wall.p99 / floor.insitu.wall.p50;
    const double ratio_cpu = filter.cpu.p99 / floor.normal.cpu.p50;
    const double ratio_p50 = filter.wall.p50 / floor.normal.wall.p50;
    std::printf(
        "  filter p99 / parse p50: %.2fx (normal), %.2fx (in-situ), %.2fx (CPU time, "
        "normal); filter p50 / parse p50: %.2fx\n",
        ratio_normal, ratio_insitu, ratio_cpu, ratio_p50);
    ReportTimings(report, key + ".parse_normal", floor.normal);
    ReportTimings(report, key + ".parse_insitu", floor.insitu);
    ReportTimings(report, key + ".parse_insitu_extender_flags", floor.extender_flags);
    ReportTimings(report, key + ".filter_pass", filter);
    ReportTimings(report, key + ".filter_quota_rejected", rejected);
    report.Number(key + ".answer_bytes_pass", static_cast<double>(answer_bytes));
    report.Number(key + ".answer_bytes_rejected", static_cast<double>(rejected_bytes));
    report.Number(key + ".ratio_filter_p99_to_parse_normal_p50", ratio_normal);
    report.Number(key + ".ratio_filter_p99_to_parse_insitu_p50", ratio_insitu);
    report.Number(key + ".ratio_filter_cpu_p99_to_parse_normal_cpu_p50", ratio_cpu);
    report.Number(key + ".ratio_filter_p50_to_parse_normal_p50", ratio_p50);
    if (c.names == 500) {
      report.Target("names_500.filter_p99_over_parse_p50", ratio_normal, "<=", 2.0, "x");
    }

    // (c) HTTP keep-alive throughput: the real server + router, then a canned answer of the same
    // size through the same server code (what the transport and this client cost alone).
    if (!http_load) continue;
    const std::string request = KeepAliveClient::PostRequest("/filter", body);
    auto check = [](int status, std::string_view answer) {
      return status == 200 && answer.find(R"("Error":"")") != std::string_view::npos;
    };
    LoadResult load;
    {
      auto server = StartLoopbackServer(MakeRouter(&service, &metrics, {}));
      RunKeepAliveLoad(
          server->port(), clients, c.requests / 10,
          [&](std::size_t) -> const std::string& { return request; }, check);
      load = RunKeepAliveLoad(
          server->port(), clients, c.requests,
          [&](std::size_t) -> const std::string& { return request; }, check);
      server->Shutdown(std::chrono::milliseconds(1000));
    }
    std::string canned_answer;
    {
      std::string copy = body;
      canned_answer = service.Filter(copy).body;
    }
    LoadResult ceiling;
    {
      auto server = StartLoopbackServer([&](http::Request&&, http::Responder respond) {
        respond({200, "application/json", canned_answer, {}});
      });
      ceiling = RunKeepAliveLoad(
          server->port(), clients, c.requests,
          [&](std::size_t) -> const std::string& { return request; }, check);
      server->Shutdown(std::chrono::milliseconds(1000));
    }
    std::printf(
        "  HTTP keep-alive, %d clients, 2 IO threads: %.0f req/s (failures %zu), "
        "latency p50 %.0f us p99 %.0f us\n",
        clients, load.per_second, load.failures, load.latency_us.p50, load.latency_us.p99);
    std::printf("  same server, canned answer (transport + client ceiling): %.0f req/s\n",
                ceiling.per_second);
    report.Number(key + ".http.clients", clients);
    report.Number(key + ".http.requests", static_cast<double>(load.requests));
    report.Number(key + ".http.failures", static_cast<double>(load.failures));
    report.Number(key + ".http.req_per_s", load.per_second);
    report.Latency(key + ".http.latency", load.latency_us);
    report.Number(key + ".http_canned.req_per_s", ceiling.per_second);
    report.Target(key + ".http_req_per_s", load.per_second, ">=", c.http_target, "req/s");
  }

  std::printf("\nmemory\n");
  report.Target("memory.heap_bytes_per_pod", per_pod, "<=", 1024, "B");
  report.Target("memory.heap_bytes_per_node", per_node, "<=", 2048, "B");
  report.Note("machine", fmt::format("{} hardware threads", std::thread::hardware_concurrency()));
  report.Note("note",
              "HTTP clients run on the same machine as the server; the canned-answer run shows "
              "what transport + client cost alone");
  report.Write(args.Str("--json", ""));
  return 0;
}
