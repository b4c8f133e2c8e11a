// The watch path with DRA (docs/devices.md): does reading ResourceClaims cost the pod watch
// anything? One run, interleaved rounds (paired ratios, so machine noise hits both sides alike):
//   A  a pod watch event (ParseWatchEvent, DecodePodJson, ClusterState::UpsertPod) into a cluster
//      with no DRA objects (and as many other pods as B has);
//   B  the same events into a cluster holding DeviceClasses, ResourceClaims and pods naming them:
//      pods without claims must pay nothing for them (target: median B/A <= 1.05);
// and, for scale, C a pod that names a claim (decoded by the DOM path, its claim settled) and D a
// ResourceClaim watch event (DOM decode, UpsertResourceClaim re-filing its pods).
//
// Usage: bench_dra_watch_bench [--json FILE] [--quick] [--events N] [--rounds N] [--claims N]
#include <cstdio>
#include <string>
#include <vector>

#include "bench/micro/bench_support.h"
#include "config/json_pull_reader.h"
#include "config/object_codec.h"
#include "config/object_stream_decoder.h"
#include "core/cluster_state.h"
#include "extender/kube/api_envelopes.h"

namespace capext::bench {
namespace {

std::string PodLine(int i, const std::string& claims) {
  const std::string n = std::to_string(i);
  return R"({"type":"MODIFIED","object":{"kind":"Pod","apiVersion":"v1","metadata":{"name":"p-)" +
         n + R"(","namespace":"team-a","uid":"uid-p-)" + n + R"(","resourceVersion":"1)" + n +
         R"(","creationTimestamp":"2026-11-21T22:17:36Z","labels":{"app":"demo"}},"spec":{"containers":[{"name":"c","image":"registry.k8s.io/pause:3.9","resources":{"requests":{"cpu":"100m","memory":"64Mi"}}}],"restartPolicy":"Never","nodeName":"n1","schedulerName":"capacity-scheduler","priority":0,"tolerations":[{"key":"node.kubernetes.io/not-ready","operator":"Exists","effect":"NoExecute","tolerationSeconds":300}])" +
         claims +
         R"(},"status":{"phase":"Running","conditions":[{"type":"PodScheduled","status":"True"}],"startTime":"2026-11-21T22:17:37Z","qosClass":"Burstable"}}})";
}

std::string ClaimLine(int i) {
  const std::string n = std::to_string(i);
  return R"({"type":"MODIFIED","object":{"kind":"ResourceClaim","apiVersion":"resource.k8s.io/v1","metadata":{"name":"c-)" +
         n + R"(","namespace":"team-a","uid":"uid-c-)" + n + R"(","resourceVersion":"2)" + n +
         R"("},"spec":{"devices":{"requests":[{"name":"gpu","exactly":{"deviceClassName":"gpu.nvidia.com","allocationMode":"ExactCount","count":1}}]}},"status":{"allocation":{"devices":{"results":[{"request":"gpu","driver":"gpu.nvidia.com","pool":"n1","device":"gpu-0"}]}},"reservedFor":[{"resource":"pods","name":"q-)" +
         n + R"(","uid":"uid-q-)" + n + R"("}]}}})";
}

// One pod watch event through decode and apply.
void ApplyPod(ClusterState& state, const std::string& line) {
  kube::WatchEventEnvelope event;
  if (!kube::ParseWatchEvent(line, &event).ok()) std::abort();
  Pod pod;
  std::string kind;
  if (!DecodePodJson(event.object, {}, &pod, &kind).ok()) std::abort();
  json::JsonPullReader::ForgetSource();
  state.UpsertPod(std::move(pod));
}

void ApplyClaim(ClusterState& state, const std::string& line) {
  kube::WatchEventEnvelope event;
  if (!kube::ParseWatchEvent(line, &event).ok()) std::abort();
  json::JsonPullReader::ForgetSource();
  std::string object(event.object);
  rapidjson::Document doc;
  doc.Parse(object.data(), object.size());
  KubeObject decoded;
  bool skipped = false;
  std::string kind;
  if (!DecodeKubeObject(doc, {}, "ResourceClaim", &decoded, &skipped, &kind).ok()) std::abort();
  state.UpsertResourceClaim(std::get<ResourceClaim>(std::move(decoded)));
}

// Events per second of `apply` over `lines`, `events` times.
template <class F>
double Rate(const std::vector<std::string>& lines, int events, F&& apply) {
  const auto start = Clock::now();
  for (int i = 0; i < events; ++i)
    apply(lines[static_cast<std::size_t>(i) % lines.size()]);
  return events / (MicrosSince(start) / 1e6);
}

int Main(int argc, char** argv) {
  const Args args =
      Args::Parse(argc, argv,
                  "Usage: bench_dra_watch_bench [--json FILE] [--quick] [--events N] [--rounds N] "
                  "[--claims N]");
  const int events = args.Int("--events", args.quick ? 20000 : 100000);
  const int rounds = args.Int("--rounds", args.quick ? 3 : 7);
  const int claims = args.Int("--claims", 2000);

  auto make_state = [&](bool with_dra) {
    ClusterState state;
    Node n1;
    n1.name = "n1";
    n1.allocatable =
        ResourceList{{"cpu", 1'000'000}, {"memory", int64_t{1} << 50}, {"pods", 1'000'000}};
    state.UpsertNode(n1);
    ElasticQuota q;
    q.ns = q.name = "team-a";
    q.max = ResourceList{{"cpu", 1'000'000}, {"nvidia.com/gpu", 1'000'000}};
    state.UpsertQuota(q);
    if (!with_dra) {
      // The same number of pods, naming no claim: A and B differ by the DRA objects alone.
      for (int i = 0; i < claims; ++i) {
        std::string line = PodLine(i, "");
        line.replace(line.find("\"p-"), 3, "\"q-");
        line.replace(line.find("uid-p-"), 6, "uid-q-");
        ApplyPod(state, line);
      }
      return state;
    }
    state.SetDeviceClassMappings({DeviceClassMapping{"nvidia.com/gpu", {"gpu.nvidia.com"}, {}}});
    state.UpsertDeviceClass(DeviceClass{"gpu.nvidia.com", ""});
    for (int i = 0; i < claims; ++i) {
      ApplyClaim(state, ClaimLine(i));
      const std::string ref = R"(,"resourceClaims":[{"name":"gpu","resourceClaimName":"c-)" +
                              std::to_string(i) + R"("}])";
      std::string line = PodLine(i, ref);
      // q-<i>: the claim's holder.
      line.replace(line.find("\"p-"), 3, "\"q-");
      line.replace(line.find("uid-p-"), 6, "uid-q-");
      ApplyPod(state, line);
    }
    return state;
  };
  std::vector<std::string> plain, named, claim_lines;
  for (int i = 0; i < 256; ++i) {
    plain.push_back(PodLine(i, ""));
    named.push_back(
        PodLine(100000 + i, R"(,"resourceClaims":[{"name":"gpu","resourceClaimName":"c-)" +
                                std::to_string(i % claims) + R"("}])"));
    claim_lines.push_back(ClaimLine(i % claims));
  }
  ClusterState without = make_state(false);
  ClusterState with = make_state(true);
  std::printf("pod watch events of %zu bytes; DRA cluster: %d claims, %d pods naming them\n",
              plain[0].size(), claims, claims);
  std::vector<double> a, b, ratio;
  for (int r = 0; r < rounds; ++r) {
    const double ra = Rate(plain, events, [&](const std::string& l) { ApplyPod(without, l); });
    const double rb = Rate(plain, events, [&](const std::string& l) { ApplyPod(with, l); });
    a.push_back(ra);
    b.push_back(rb);
    ratio.push_back(ra / rb);  // time per event, B over A
    std::printf("  round %d: A %.0f/s  B %.0f/s  B/A time %.3f\n", r, ra, rb, ra / rb);
  }
  const double c = Rate(named, events / 4, [&](const std::string& l) { ApplyPod(with, l); });
  const double d =
      Rate(claim_lines, events / 4, [&](const std::string& l) { ApplyClaim(with, l); });
  std::printf("  C pod naming a claim: %.0f events/s; D ResourceClaim event: %.0f events/s\n", c,
              d);
  if (with.Used("team-a").Get("nvidia.com/gpu") != claims) {
    std::fprintf(stderr, "the DRA cluster does not count its claims\n");
    return 1;
  }
  Report report("dra_watch_bench");
  report.Series("pod_events_per_second.without_dra", a);
  report.Series("pod_events_per_second.with_dra", b);
  report.Series("time_ratio.with_over_without", ratio);
  report.Number("pod_naming_claim.events_per_second", c);
  report.Number("resource_claim.events_per_second", d);
  report.Target("pod watch time, DRA cluster / plain (median)", Median(ratio), "<=", 1.05, "x");
  std::printf("report: %s\n", report.Write(args.Str("--json", "")).c_str());
  return 0;
}

}  // namespace
}  // namespace capext::bench

int main(int argc, char** argv) {
  return capext::bench::Main(argc, argv);
}
