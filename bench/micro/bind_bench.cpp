// /bind throughput in embedded mode with 16 concurrent clients: first in process (16 threads
// calling ExtenderService::Bind), then over HTTP keep-alive against the real http::Server
// (2 IO threads) + router. The quota admits only part of the pending pods, so the run also
// checks that no interleaving over-admitted: exactly `admitted` pods bound, used == max,
// nothing left reserved. Target: >= 10,000 binds/s.
//
// Usage: bench_bind_bench [--json FILE] [--quick] [--clients N] [--pending N] [--admitted N]
//                         [--log-level info|warn|...]
#include <rapidjson/document.h>

#include <atomic>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "bench/micro/bench_support.h"
#include "extender/embedded/embedded_binder.h"
#include "extender/http/server.h"
#include "extender/log.h"
#include "extender/routes.h"
#include "extender/verbs/extender_service.h"

namespace capext::bench {
namespace {

constexpr int64_t kRequestMilli = 100;
const char* const kNs = "bind-team";

// A cluster of 1,000 nodes with 20 running pods each, plus `pending` pods of bind-team, whose
// quota admits exactly `admitted` of them.
struct BindCluster {
  BindCluster(int pending, int admitted)
      : cache(QuotaSemantics::kCapacityExtender, {}),
        binder(&cache),
        service(&cache, &metrics, NodeScoring::kLeastAllocated, PriorityThenStartTimeOrder(),
                &binder, ServiceOptions{}) {
    ClusterShape shape;
    shape.nodes = 1000;
    cache.Write([&](ClusterState& state) {
      BuildCluster(state, shape);
      ElasticQuota q = MakeTeamQuota(0, shape);
      q.ns = q.name = kNs;
      q.min->Set("cpu", 1'000'000'000);  // the aggregated check never limits
      q.max->Set("cpu", admitted * kRequestMilli);
      state.UpsertQuota(q);
      for (int i = 0; i < pending; ++i) {
        Pod pod = MakeBoundPod(1'000'000 + static_cast<uint64_t>(i), "", shape);
        pod.ns = kNs;
        pod.node_name.clear();
        pod.phase = PodPhase::kPending;
        pod.start_ms = 0;
        pod.requests = ResourceList{};
        pod.requests.Set("cpu", kRequestMilli);
        pod.requests.Set("memory", int64_t{64} << 20);
        pod.requests.Set("pods", 1);
        const std::string node = NodeName(i % shape.nodes);
        bodies.push_back(BindBody(pod, node));
        state.UpsertPod(std::move(pod));
      }
      return 0;
    });
    cache.set_ready(true);
  }

  struct Check {
    std::size_t bound = 0;
    int64_t used = 0, reserved = 0, max = 0;
    std::size_t reservations = 0;
  };
  Check Verify() {
    return cache.Read([](const ClusterState& s) {
      Check c;
      for (const auto& [uid, pod] : s.pods()) {
        if (pod.ns == kNs && pod.IsBound()) ++c.bound;
      }
      c.used = s.Used(kNs).Get("cpu");
      c.reserved = s.ledger().Reserved(kNs).Get("cpu");
      c.max = s.QuotaFor(kNs)->max->Get("cpu");
      c.reservations = s.reservations().size();
      return c;
    });
  }

  Metrics metrics;
  SchedulerCache cache;
  EmbeddedBinder binder;
  ExtenderService service;
  std::vector<std::string> bodies;
};

bool ReportCheck(Report& report, const std::string& key, const BindCluster::Check& c, int admitted,
                 std::size_t successes) {
  const bool ok = c.bound == static_cast<std::size_t>(admitted) && successes == c.bound &&
                  c.used == c.max && c.reserved == 0 && c.reservations == 0;
  std::printf(
      "  check: %zu bound (admitted %d, answered ok %zu), used %lldm of max %lldm, "
      "reserved %lldm, %zu reservations: %s\n",
      c.bound, admitted, successes, static_cast<long long>(c.used), static_cast<long long>(c.max),
      static_cast<long long>(c.reserved), c.reservations, ok ? "no over-admission" : "WRONG");
  report.Number(key + ".bound", static_cast<double>(c.bound));
  report.Number(key + ".over_admitted", static_cast<double>(c.bound) - admitted);
  report.Note(key + ".check", ok ? "ok" : "WRONG");
  return ok;
}

}  // namespace
}  // namespace capext::bench

constexpr const char* kUsage =
    "Usage: bench_bind_bench [--json FILE] [--quick] [--clients N] [--pending N] [--admitted N] "
    "[--log-level info|warn|error]";

int main(int argc, char** argv) {
  using namespace capext;
  using namespace capext::bench;
  const Args args = Args::Parse(argc, argv, kUsage);
  ConfigureLog("logfmt", args.Str("--log-level", "info"));
  const int clients = args.Int("--clients", 16);
  const int pending = args.quick ? 5000 : args.Int("--pending", 40'000);
  const int admitted = args.quick ? 4000 : args.Int("--admitted", 32'000);
  Report report("bind_bench");
  report.Number("clients", clients);
  report.Number("pending", pending);
  report.Number("admitted", admitted);
  bool all_ok = true;

  // In process.
  {
    BindCluster cluster(pending, admitted);
    std::atomic<int> next{0};
    std::atomic<std::size_t> successes{0};
    std::vector<std::vector<double>> latencies(static_cast<std::size_t>(clients));
    std::vector<std::thread> threads;
    const auto t0 = Clock::now();
    for (int c = 0; c < clients; ++c) {
      threads.emplace_back([&, c] {
        for (int i = next++; i < pending; i = next++) {
          const auto s = Clock::now();
          bool ok = false;
          cluster.service.Bind(cluster.bodies[static_cast<std::size_t>(i)], [&](http::Response r) {
            ok = r.status == 200 && r.body.find(R"("Error":"")") != std::string::npos;
          });
          latencies[static_cast<std::size_t>(c)].push_back(MicrosSince(s));
          if (ok) ++successes;
        }
      });
    }
    for (auto& t : threads)
      t.join();
    const double seconds = MicrosSince(t0) / 1e6;
    std::vector<double> all;
    for (auto& l : latencies)
      all.insert(all.end(), l.begin(), l.end());
    const Summary lat = Summarize(all);
    const double rate = pending / seconds;
    std::printf(
        "in process: %d clients, %d binds (%zu ok) in %.3f s: %.0f binds/s, ok binds "
        "%.0f/s\n",
        clients, pending, successes.load(), seconds, rate, successes.load() / seconds);
    PrintSummary("ExtenderService::Bind", lat);
    report.Number("in_process.binds_per_s", rate);
    report.Number("in_process.ok_binds_per_s", successes.load() / seconds);
    report.Latency("in_process.latency", lat);
    all_ok &= ReportCheck(report, "in_process", cluster.Verify(), admitted, successes.load());
    report.Target("in_process.binds_per_s", rate, ">=", 10000, "binds/s");
  }

  // Over HTTP keep-alive.
  {
    BindCluster cluster(pending, admitted);
    Metrics router_metrics;
    auto server = StartLoopbackServer(MakeRouter(&cluster.service, &router_metrics, {}));
    std::vector<std::string> requests;
    requests.reserve(cluster.bodies.size());
    for (const auto& b : cluster.bodies)
      requests.push_back(KeepAliveClient::PostRequest("/bind", b));
    std::atomic<std::size_t> successes{0};
    LoadResult load = RunKeepAliveLoad(
        server->port(), clients, requests.size(),
        [&](std::size_t i) -> const std::string& { return requests[i]; },
        [&](int status, std::string_view body) {
          if (status != 200) return false;
          if (body.find(R"("Error":"")") != std::string_view::npos) ++successes;
          return true;
        });
    server->Shutdown(std::chrono::milliseconds(1000));
    std::printf(
        "HTTP keep-alive: %d clients, 2 IO threads: %zu binds (%zu ok, %zu failures) in "
        "%.3f s: %.0f binds/s\n",
        clients, load.requests, successes.load(), load.failures, load.seconds, load.per_second);
    PrintSummary("round trip", load.latency_us);
    report.Number("http.binds_per_s", load.per_second);
    report.Number("http.ok_binds_per_s", successes.load() / load.seconds);
    report.Number("http.failures", static_cast<double>(load.failures));
    report.Latency("http.latency", load.latency_us);
    all_ok &= ReportCheck(report, "http", cluster.Verify(), admitted, successes.load());
    report.Target("http.binds_per_s", load.per_second, ">=", 10000, "binds/s");
  }
  report.Write(args.Str("--json", ""));
  return all_ok ? 0 : 1;
}
