// fair_admission_bench: admission decisions with fair sharing on (issue 22, docs/fair-sharing.md):
// 1,000 quotas (half of them idle lenders, half borrowing with weights 1 to 4) and 20,000 gated
// 1-cpu pods waiting in the borrowers (40 each), every borrower already at its min.
//   (a) one decision: what one step of gate mode's fair round does per unit — FairAdmissionOrder's
//       next pick (the lowest share after admission, from the cached per-quota keys), the quota
//       check of that unit on the what-if, and admitting it into the what-if (its hold) — timed
//       for each of the first --decisions units, p50/p99;
//   (b) a whole round: PlanAdmissions with fair sharing on over all 20,000 (it admits the 10,000
//       cpu the lenders leave idle, meets the barrier, and says why the rest waits).
// Target: one decision within 1 ms at p99. Usage: see kUsage (--help).
#include <cstdio>
#include <string>
#include <vector>

#include "bench/micro/bench_support.h"
#include "core/admission_queue.h"
#include "core/fair_admission_order.h"
#include "core/fair_share.h"
#include "core/quota_admission.h"

namespace capext::bench {
namespace {

constexpr char kUsage[] =
    "bench_fair_admission_bench [--quotas N] [--waiting N] [--decisions N] [--quick] "
    "[--json FILE]";

std::string Tenant(int i) {
  return fmt::format("tenant-{:04}", i);
}

Pod OneCpuPod(const std::string& ns, const std::string& name, int64_t created) {
  Pod pod;
  pod.ns = ns;
  pod.name = name;
  pod.uid = ns + "/" + name;
  pod.phase = PodPhase::kPending;
  pod.scheduler_name = "default-scheduler";
  pod.creation_ms = created;
  pod.requests.Set("cpu", 1000);
  pod.requests.Set("memory", int64_t{1} << 30);
  return pod;
}

void Build(ClusterState& state, int quotas, int waiting) {
  for (int i = 0; i < quotas / 16 + 1; ++i) {
    Node node;
    node.name = fmt::format("node-{:04}", i);
    node.allocatable.Set("cpu", 1'000'000);
    node.allocatable.Set("memory", int64_t{4096} << 30);
    node.allocatable.Set("pods", 10'000);
    state.UpsertNode(node);
  }
  const int borrowers = quotas / 2;
  for (int q = 0; q < quotas; ++q) {
    ElasticQuota eq;
    eq.ns = eq.name = Tenant(q);
    eq.api_group = "scheduling.x-k8s.io";
    eq.min = ResourceList{{"cpu", 20'000}};
    eq.max = ResourceList{{"cpu", 200'000}};
    eq.weight_milli = 1000 * (1 + q % 4);
    state.UpsertQuota(eq);
  }
  int64_t created = 1'700'000'000'000;
  for (int q = 0; q < borrowers; ++q) {  // each borrower runs its min
    for (int p = 0; p < 20; ++p) {
      Pod pod = OneCpuPod(Tenant(q), fmt::format("run-{}", p), created++);
      pod.node_name = fmt::format("node-{:04}", q % (quotas / 16 + 1));
      pod.phase = PodPhase::kRunning;
      pod.start_ms = pod.creation_ms;
      state.UpsertPod(pod);
    }
  }
  for (int i = 0; i < waiting; ++i) {
    Pod pod = OneCpuPod(Tenant(i % borrowers), fmt::format("wait-{}", i), created++);
    pod.quota_gated = true;
    state.UpsertPod(pod);
  }
}

}  // namespace
}  // namespace capext::bench

int main(int argc, char** argv) {
  using namespace capext;
  using namespace capext::bench;
  const Args args = Args::Parse(argc, argv, kUsage);
  const int quotas = args.Int("--quotas", 1000);
  const int waiting = args.Int("--waiting", 20'000);
  const int decisions = args.Int("--decisions", args.quick ? 500 : 5000);
  Report report("fair_admission_bench");
  ClusterState state;
  Build(state, quotas, waiting);
  std::printf("fair_admission_bench: %d quotas, %d waiting pods\n", quotas, waiting);

  // (a) one decision at a time, as PlanFairly takes them.
  ClusterState what_if(state);
  const FairShareModel model(what_if);
  const QuotaTree& tree = what_if.ledger().tree();
  std::vector<FairCandidate> candidates;
  std::vector<std::string> keys;
  for (const auto& [key, pod] : what_if.pods()) {
    if (!pod.quota_gated) continue;
    candidates.push_back(FairCandidate{keys.size(), tree.LeafOf(pod.ns), pod.quota_request(),
                                       pod.priority, pod.creation_ms, pod.store_key()});
    keys.push_back(pod.store_key());
  }
  std::sort(candidates.begin(), candidates.end(), [](const auto& a, const auto& b) {
    return std::tie(a.creation_ms, a.first_key) < std::tie(b.creation_ms, b.first_key);
  });
  FairAdmissionOrder order(tree, model, std::move(candidates));
  std::vector<double> decision_us;
  int admitted = 0;
  const int64_t now_ms = 1'800'000'000'000;
  for (int i = 0; i < decisions; ++i) {
    const Stopwatch w;
    auto pick = order.Next(what_if);
    if (!pick) break;
    const std::string& key = order.candidate(pick->candidate).first_key;
    const NormalizedPod& pod = *what_if.FindPod(key);
    if (CheckQuota(what_if, pod).ok()) {
      NormalizedPod admit = pod;
      admit.quota_gated = false;
      admit.admitted_ms = now_ms;
      what_if.UpsertPod(std::move(admit));
      ++admitted;
    }
    decision_us.push_back(w.WallMicros());
  }
  const Summary decision_s = Summarize(decision_us);
  PrintSummary("one fair admission decision", decision_s);
  std::printf("  admitted %d of %zu decided\n", admitted, decision_us.size());

  // (b) a whole round.
  AdmissionOptions options;
  options.fair_sharing = true;
  const Stopwatch round_w;
  const AdmissionRound round = PlanAdmissions(state, options, now_ms);
  const double round_ms = round_w.WallMicros() / 1000;
  std::size_t admitted_pods = 0;
  for (const auto& u : round.admit)
    admitted_pods += u.pods.size();
  std::printf("  PlanAdmissions (fair): %.1f ms, %zu admitted, %zu waiting\n", round_ms,
              admitted_pods, round.waiting.size());

  report.Number("quotas", quotas);
  report.Number("waiting", waiting);
  report.Latency("fair_decision", decision_s);
  report.Number("fair_round_ms", round_ms);
  report.Number("fair_round_admitted", static_cast<double>(admitted_pods));
  report.Target("fair_decision_p99_ms", decision_s.p99 / 1000.0, "<=", 1.0, "ms");
  report.Write(args.Str("--json", ""));
  return 0;
}
