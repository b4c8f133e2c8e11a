// Binds under a slow API server (issue 18 point 4): the real `capacity-extender serve
// --kubeconfig F` against the API-server TEST DOUBLE answering every Binding `--delay-ms` late
// (20), and a burst of `--pods` binds at once (3,000) from a simulated kube-scheduler with its real
// timing: httpTimeout 5 s, backoff 1 s doubling to 10 s (bench/micro/bind_retry_scheduler.h).
// Two scenarios:
//   * burst: every Binding 20 ms late;
//   * stall: the same, and the first `--stall` Bindings (16: every connection of the Binding
//     client) take 7.5 s, longer than kube-scheduler waits, so kube-scheduler times out and
//     retries pods whose Bindings are still in flight (the storm of issue 18).
// Reports per scenario: binds per second (pods bound / time until the last was), errors
// answered (binds refused or failed, each one a scheduling cycle kube-scheduler spends again),
// binds timed out at kube-scheduler, attempts per pod, the wait before each Binding was sent (its
// arrival at the API server minus its bind's start: the queueing wait), and the invariants of
// CheckBindRun (no Binding sent after its deadline, each pod bound exactly once, none bound by a
// bind answered with an error). Targets: the invariants, no timeouts in the burst, the wait under
// the deadline. `--extender BIN` measures another build (one without the bind flags: before).
//
// Usage: bench_slow_bind_bench [--json FILE] [--quick] [--pods N] [--delay-ms MS] [--stall N]
//                              [--extender BIN] [--flags "--a x --b y"]
//                              [--only burst,stall] [--keep 1]   (--keep: keep the logs)
#include <sys/stat.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "bench/micro/bench_support.h"
#include "bench/micro/bind_run_check.h"
#include "bench/micro/podcost_apiserver_double.h"
#include "bench/micro/podcost_extender_under_test.h"

namespace capext::bench {
namespace {

using namespace std::chrono_literals;

constexpr const char* kUsage =
    "Usage: bench_slow_bind_bench [--json FILE] [--quick] [--pods N] [--delay-ms MS] [--stall N]\n"
    "                             [--extender BIN] [--flags \"--a x --b y\"]\n"
    "                             [--only burst,stall] [--keep 1]";
constexpr const char* kNs = "burst";
constexpr auto kDeadline = 4000ms;  // bindDeadline's default, for the checks

struct Environment {
  std::string extender_binary, double_script, work_dir;
  std::vector<std::string> flags;  // extra flags of capacity-extender
  int pods = 3000;
  int delay_ms = 20;
};

struct ScenarioResult {
  bool ok = false;
  double binds_per_s = 0, errors = 0, timeouts = 0, max_wait_ms = 0;
  BindRunCheck check;
};

std::vector<std::string> Split(const std::string& text) {
  std::istringstream in(text);
  std::vector<std::string> out;
  for (std::string word; in >> word;)
    out.push_back(word);
  return out;
}

Status LoadCluster(ApiServerDouble& api, int pods) {
  std::vector<std::string> nodes, quotas, items;
  for (const char* n : {"n1", "n2"}) {
    nodes.push_back(fmt::format(
        R"({{"apiVersion":"v1","kind":"Node","metadata":{{"name":"{}"}},)"
        R"("status":{{"allocatable":{{"cpu":"1000","memory":"4Ti","pods":"50000"}}}}}})",
        n));
  }
  quotas.push_back(
      fmt::format(R"({{"apiVersion":"scheduling.x-k8s.io/v1alpha1","kind":"ElasticQuota",)"
                  R"("metadata":{{"name":"{}","namespace":"{}"}},"spec":{{"min":{{"cpu":"500"}},)"
                  R"("max":{{"cpu":"500"}}}}}})",
                  kNs, kNs));
  for (int i = 0; i < pods; ++i) {
    items.push_back(fmt::format(
        R"({{"apiVersion":"v1","kind":"Pod","metadata":{{"name":"p-{:05}","namespace":"{}"}},)"
        R"("spec":{{"containers":[{{"name":"c","image":"pause","resources":{{"requests":)"
        R"({{"cpu":"10m"}}}}}}]}},"status":{{"phase":"Pending"}}}})",
        i, kNs));
  }
  if (Status s = api.CreateMany("nodes", nodes); !s.ok()) return s;
  if (Status s = api.CreateMany("elasticquotas", quotas, 1000, "scheduling.x-k8s.io"); !s.ok()) {
    return s;
  }
  return api.CreateMany("pods", items);
}

std::vector<BindRetryScheduler::Pod> PodsOf(ApiServerDouble& api) {
  std::vector<BindRetryScheduler::Pod> pods;
  rapidjson::Document doc;
  if (!api.Objects("pods", &doc)) return pods;
  for (const auto& item : doc["items"].GetArray()) {
    const auto& meta = item["metadata"];
    pods.push_back({meta["namespace"].GetString(),
                    meta["name"].GetString(),
                    meta["uid"].GetString(),
                    {"n1", "n2"}});
  }
  return pods;
}

// One scenario on a fresh double and extender: `stall` Bindings first take 7.5 s.
ScenarioResult RunScenario(const Environment& env, const std::string& name, int stall,
                           Report& report) {
  ScenarioResult out;
  const std::string dir = env.work_dir + "/" + name;
  std::filesystem::create_directories(dir);
  ApiServerDouble api;
  ExtenderUnderTest extender;
  Status started = api.Start(env.double_script, dir, /*request_log=*/true);
  if (started.ok()) started = LoadCluster(api, env.pods);
  if (!started.ok()) {
    std::fprintf(stderr, "%s: %s\n", name.c_str(), started.message().c_str());
    return out;
  }
  { std::ofstream(dir + "/kubeconfig") << api.Kubeconfig(); }
  // Debug: the log then has each sent Binding with its bind's deadline (CheckBindRun).
  std::vector<std::string> flags = {"--reclaim", "off", "--events=false", "--log-level", "debug"};
  flags.insert(flags.end(), env.flags.begin(), env.flags.end());
  if (Status s = extender.StartCapacity(env.extender_binary, dir + "/kubeconfig", flags,
                                        dir + "/extender.log", 60s);
      !s.ok()) {
    std::fprintf(stderr, "%s: %s\n", name.c_str(), s.message().c_str());
    return out;
  }
  const std::vector<BindRetryScheduler::Pod> pods = PodsOf(api);
  const std::string bindings =
      fmt::format(R"("path_prefix":"/api/v1/namespaces/{}/pods/","method":"POST")", kNs);
  if (stall > 0)
    api.Control("delay", fmt::format(R"({{"ms":7500,"count":{},{}}})", stall, bindings));
  api.Control("delay", fmt::format(R"({{"ms":{},"count":-1,{}}})", env.delay_ms, bindings));
  api.Control("requests/clear", "{}");

  BindRetryScheduler::Options options;
  options.extender_port = extender.port();
  options.api_port = api.port();
  options.api_token = ApiServerDouble::kToken;
  options.give_up = 600s;
  options.seed = 18;
  const BindRetryScheduler::Result run = BindRetryScheduler(options).Run(pods);

  std::string log;
  api.Control("requests", "", &log);
  std::ofstream(dir + "/requests.json") << log;
  std::vector<BindingPost> posts;
  ParseBindingPosts(log, &posts);
  std::ifstream extender_log(dir + "/extender.log");
  const std::string log_text((std::istreambuf_iterator<char>(extender_log)),
                             std::istreambuf_iterator<char>());
  out.check = CheckBindRun(pods, run, posts, ParseBindOwners(log_text), kDeadline, 150ms);
  BindRetryScheduler::Clock::time_point first = BindRetryScheduler::Clock::time_point::max(),
                                        last{};
  for (const auto& a : run.attempts) {
    first = std::min(first, a.start);
    if (a.outcome == BindRetryScheduler::Outcome::kRefused) ++out.errors;
    if (a.outcome == BindRetryScheduler::Outcome::kTimedOut) ++out.timeouts;
  }
  for (const auto& p : posts) {
    if (p.status == 201) last = std::max(last, p.answered);
  }
  const double seconds = last > first ? std::chrono::duration<double>(last - first).count() : 0;
  out.binds_per_s = seconds > 0 ? static_cast<double>(out.check.created) / seconds : 0;
  out.max_wait_ms = out.check.max_send_wait_ms;
  const Summary wait = Summarize(out.check.send_wait_ms);
  out.ok = run.finished && out.check.ok();

  std::printf(
      "%s: %zu pods, Bindings %d ms late%s: %zu bound in %.1f s = %.0f binds/s; %zu attempts "
      "(%.2f per pod), %.0f errors answered, %.0f timed out at kube-scheduler; wait before "
      "sending p50 %.0f ms, p99 %.0f ms, max %.0f ms\n  %s\n",
      name.c_str(), pods.size(), env.delay_ms,
      stall > 0 ? fmt::format(", the first {} 7.5 s", stall).c_str() : "", out.check.created,
      seconds, out.binds_per_s, run.attempts.size(),
      static_cast<double>(run.attempts.size()) / static_cast<double>(pods.size()), out.errors,
      out.timeouts, wait.p50, wait.p99, wait.max, out.check.Describe().c_str());
  std::string metrics;
  extender.Get("/metrics", &metrics);
  for (const char* metric :
       {"capacity_extender_binds_refused_at_bound_total", "capacity_extender_binds_expired_total",
        "capacity_extender_binds_joined_total", "capacity_extender_binds_unanswered_total"}) {
    const std::size_t at = metrics.find(std::string("\n") + metric + " ");
    const double value =
        at == std::string::npos ? 0 : std::stod(metrics.substr(at + std::strlen(metric) + 2));
    std::printf("  %s %.0f\n", metric, value);
    report.Number(name + "." + metric, value);
  }
  report.Number(name + ".pods", static_cast<double>(pods.size()));
  report.Number(name + ".seconds", seconds);
  report.Number(name + ".binds_per_s", out.binds_per_s);
  report.Number(name + ".attempts", static_cast<double>(run.attempts.size()));
  report.Number(name + ".errors_answered", out.errors);
  report.Number(name + ".timed_out", out.timeouts);
  report.Number(name + ".send_wait_p50_ms", wait.p50);
  report.Number(name + ".send_wait_p99_ms", wait.p99);
  report.Number(name + ".send_wait_max_ms", wait.max);
  report.Number(name + ".created_after_timeout",
                static_cast<double>(out.check.created_after_timeout));
  report.Note(name + ".check", out.ok ? "ok" : out.check.Describe());
  extender.Stop();
  api.Stop();
  return out;
}

}  // namespace
}  // namespace capext::bench

int main(int argc, char** argv) {
  using namespace capext;
  using namespace capext::bench;
  const Args args = Args::Parse(argc, argv, kUsage);
  Environment env;
  const std::filesystem::path exe_dir = std::filesystem::canonical("/proc/self/exe").parent_path();
  env.extender_binary =
      args.Str("--extender", (exe_dir / "../extender/capacity-extender").string());
  env.double_script = "tests/apiserver_double/apiserver_double.py";
  if (!std::filesystem::exists(env.double_script))
    env.double_script = (exe_dir / "../../tests/apiserver_double/apiserver_double.py").string();
  env.pods = args.Int("--pods", args.quick ? 1000 : 3000);
  env.delay_ms = args.Int("--delay-ms", 20);
  env.flags = Split(args.Str("--flags", ""));
  const int stall = args.Int("--stall", 16);
  const std::string only = args.Str("--only", "burst,stall");
  if (!std::filesystem::exists(env.extender_binary)) {
    std::fprintf(stderr, "bench_slow_bind_bench: no %s (build capacity-extender, or --extender)\n",
                 env.extender_binary.c_str());
    return 1;
  }
  char work[] = "/tmp/slow-bind-XXXXXX";
  if (mkdtemp(work) == nullptr) return 1;
  env.work_dir = work;

  Report report("slow_bind_bench");
  report.Number("pods", env.pods);
  report.Number("delay_ms", env.delay_ms);
  report.Note("extender", env.extender_binary);
  report.Note("flags", args.Str("--flags", ""));
  bool ok = true;
  if (only.find("burst") != std::string::npos) {
    const ScenarioResult r = RunScenario(env, "burst", 0, report);
    ok &= r.ok;
    report.Target("burst.violations", r.ok ? 0 : 1, "==", 0, "");
    report.Target("burst.timed_out", r.timeouts, "==", 0, "binds");
    report.Target("burst.send_wait_max_ms", r.max_wait_ms, "<=", kDeadline.count(), "ms");
    report.Target("burst.binds_per_s", r.binds_per_s, ">=", 200, "binds/s");
  }
  if (only.find("stall") != std::string::npos) {
    const ScenarioResult r = RunScenario(env, "stall", stall, report);
    ok &= r.ok;
    report.Target("stall.violations", r.ok ? 0 : 1, "==", 0, "");
    report.Target("stall.send_wait_max_ms", r.max_wait_ms, "<=", kDeadline.count(), "ms");
  }
  report.Write(args.Str("--json", ""));
  if (args.Str("--keep", "").empty()) {
    std::error_code ec;
    std::filesystem::remove_all(env.work_dir, ec);
  } else {
    std::printf("logs kept in %s\n", env.work_dir.c_str());
  }
  return ok ? 0 : 1;
}
