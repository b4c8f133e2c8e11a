// What POST /mutate (the pod-gating webhook, docs/workloads-live.md) costs per pod creation, in
// the server: the whole router (path, method, the cache's read lock for one namespace lookup, the
// AdmissionReview parse, the decision, the JSONPatch response with its base64) on a cache of 300
// ElasticQuotas, for an AdmissionReview of a Deployment-made pod of realistic size (~3 KB:
// managedFields, labels, env, probes, volumes). Half the reviews are gated (a quota namespace),
// half pass (a namespace without a quota). TLS and the network are the API server's side and are
// not counted (the API server keeps its webhook connections alive).
// Then the same for single pods (no group label, no min-member) with admission at creation
// (docs/workloads-live.md#admission-at-creation): the pod decoded and normalised, the quota checked
// and a creation hold made under the cache's write lock, the admitted-at patch written. The
// creation holds are dropped every 100 requests, outside the timing, so that most pods are
// admitted (as when the watch shows them).
// Target (issue 20): p99 under 1 ms per creation, on both paths. Usage: see kUsage (--help).
#include <cstdio>
#include <string>
#include <vector>

#include "bench/micro/bench_support.h"
#include "extender/admission/admission_loop.h"
#include "extender/embedded/embedded_binder.h"
#include "extender/log.h"
#include "extender/routes.h"

namespace capext::bench {
namespace {

constexpr char kUsage[] =
    "bench_mutate_bench [--quotas N] [--iterations N] [--quick] [--json FILE]";

// A pod as a ReplicaSet creates it, in an AdmissionReview (the shape kube-apiserver sends): a gang
// member (pod-group label, min-member annotation), or with `single` none of the two.
std::string Review(int i, const std::string& ns, bool single = false) {
  const std::string group_label =
      single ? "" : fmt::format(R"(,"scheduling.x-k8s.io/pod-group":"train-{}")", i % 50);
  const std::string min_member =
      single ? "" : R"("scheduling.capacity-extender.io/min-member":"4",)";
  return fmt::format(
      R"({{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{{"uid":"{}",)"
      R"("kind":{{"group":"","version":"v1","kind":"Pod"}},"resource":{{"group":"","version":"v1","resource":"pods"}},)"
      R"("requestKind":{{"group":"","version":"v1","kind":"Pod"}},"requestResource":{{"group":"","version":"v1","resource":"pods"}},)"
      R"("namespace":"{}","operation":"CREATE","userInfo":{{"username":"system:serviceaccount:kube-system:replicaset-controller","uid":"5d1c","groups":["system:serviceaccounts","system:serviceaccounts:kube-system","system:authenticated"]}},)"
      R"("object":{{"kind":"Pod","apiVersion":"v1","metadata":{{"generateName":"trainer-7d9f8c6b5-","namespace":"{}",)"
      R"("creationTimestamp":null,"labels":{{"app":"trainer","pod-template-hash":"7d9f8c6b5"{}}},)"
      R"("annotations":{{{}"kubectl.kubernetes.io/restartedAt":"2026-01-01T00:00:00Z"}},)"
      R"("ownerReferences":[{{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"trainer-7d9f8c6b5","uid":"0b6f","controller":true,"blockOwnerDeletion":true}}],)"
      R"("managedFields":[{{"manager":"kube-controller-manager","operation":"Update","apiVersion":"v1","time":"2026-01-01T00:00:00Z","fieldsType":"FieldsV1","fieldsV1":{{"f:metadata":{{"f:generateName":{{}},"f:labels":{{".":{{}},"f:app":{{}},"f:pod-template-hash":{{}}}},"f:ownerReferences":{{".":{{}},"k:{{\"uid\":\"0b6f\"}}":{{}}}}}},"f:spec":{{"f:containers":{{"k:{{\"name\":\"trainer\"}}":{{".":{{}},"f:image":{{}},"f:name":{{}},"f:resources":{{".":{{}},"f:limits":{{".":{{}},"f:cpu":{{}},"f:memory":{{}}}},"f:requests":{{".":{{}},"f:cpu":{{}},"f:memory":{{}}}}}}}}}}}}}}}}]}},)"
      R"("spec":{{"volumes":[{{"name":"kube-api-access-abcde","projected":{{"sources":[{{"serviceAccountToken":{{"expirationSeconds":3607,"path":"token"}}}},{{"configMap":{{"name":"kube-root-ca.crt","items":[{{"key":"ca.crt","path":"ca.crt"}}]}}}}],"defaultMode":420}}}}],)"
      R"("containers":[{{"name":"trainer","image":"registry.example.com/ml/trainer:1.4.2","args":["--epochs","40","--batch","256"],)"
      R"("env":[{{"name":"WORLD_SIZE","value":"4"}},{{"name":"MASTER_ADDR","value":"trainer-0"}},{{"name":"NCCL_DEBUG","value":"WARN"}}],)"
      R"("resources":{{"limits":{{"cpu":"4","memory":"16Gi","nvidia.com/gpu":"1"}},"requests":{{"cpu":"4","memory":"16Gi","nvidia.com/gpu":"1"}}}},)"
      R"("volumeMounts":[{{"name":"kube-api-access-abcde","readOnly":true,"mountPath":"/var/run/secrets/kubernetes.io/serviceaccount"}}],)"
      R"("livenessProbe":{{"httpGet":{{"path":"/healthz","port":8080,"scheme":"HTTP"}},"timeoutSeconds":1,"periodSeconds":10,"successThreshold":1,"failureThreshold":3}},)"
      R"("terminationMessagePath":"/dev/termination-log","terminationMessagePolicy":"File","imagePullPolicy":"IfNotPresent"}}],)"
      R"("restartPolicy":"Always","terminationGracePeriodSeconds":30,"dnsPolicy":"ClusterFirst","serviceAccountName":"default","serviceAccount":"default",)"
      R"("securityContext":{{}},"schedulerName":"capacity-scheduler","tolerations":[{{"key":"node.kubernetes.io/not-ready","operator":"Exists","effect":"NoExecute","tolerationSeconds":300}}],)"
      R"("priority":0,"enableServiceLinks":true,"preemptionPolicy":"PreemptLowerPriority"}},"status":{{}}}},"oldObject":null,"dryRun":false,)"
      R"("options":{{"kind":"CreateOptions","apiVersion":"meta.k8s.io/v1"}}}}}})",
      Uid(9, static_cast<uint64_t>(i)), ns, ns, group_label, min_member);
}

// The router's POST /mutate over `bodies` in turn, after 200 warm-up requests: each request's
// wall time, how many answers carried a patch (`mark` in the body), and how many were not 200.
// `between(i)` runs before request i, outside the timing.
struct Measured {
  std::vector<double> us;
  int marked = 0;
  int bad = 0;
};
template <typename Between>
Measured MeasureMutate(http::Handler& router, const std::vector<std::string>& bodies,
                       int iterations, Between&& between) {
  Measured m;
  m.us.reserve(static_cast<std::size_t>(iterations));
  for (int i = 0; i < iterations + 200; ++i) {
    between(i);
    http::Request request;
    request.method = "POST";
    request.target = "/mutate";
    request.tls = true;
    request.body = bodies[static_cast<std::size_t>(i) % bodies.size()];
    bool patched = false;
    int status = 0;
    const Stopwatch w;
    router(std::move(request), [&](http::Response r) {
      status = r.status;
      patched = r.body.find("\"patch\"") != std::string::npos;
    });
    const double t = w.WallMicros();
    if (i < 200) continue;  // warm-up
    m.us.push_back(t);
    m.marked += patched ? 1 : 0;
    m.bad += status == 200 ? 0 : 1;
  }
  return m;
}

}  // namespace
}  // namespace capext::bench

int main(int argc, char** argv) {
  using namespace capext;
  using namespace capext::bench;
  const Args args = Args::Parse(argc, argv, kUsage);
  ConfigureLog("logfmt", args.Str("--log-level", "warn"));
  const int quotas = args.Int("--quotas", 300);
  const int iterations = args.quick ? 2000 : args.Int("--iterations", 20000);
  const int64_t now_ms = 1'767'225'600'000;
  Report report("mutate_bench");

  ClusterShape shape;
  shape.quotas = quotas;
  Metrics metrics;
  SchedulerCache cache(QuotaSemantics::kCapacityExtender, {}, [&] { return now_ms; });
  cache.Write([&](ClusterState& state) {
    for (int k = 0; k < quotas; ++k)
      state.UpsertQuota(MakeTeamQuota(k, shape));
    return 0;
  });
  cache.set_ready(true);
  EmbeddedBinder binder(&cache);
  ExtenderService service(&cache, &metrics, NodeScoring::kLeastAllocated,
                          PriorityThenStartTimeOrder(), &binder, ServiceOptions{});
  const std::atomic<bool> gating{true};
  RouterOptions options{"", Listener::kWebhook, nullptr, nullptr, {"capacity-scheduler"}, &gating};
  http::Handler router = MakeRouter(&service, &metrics, options);

  std::vector<std::string> bodies;
  for (int i = 0; i < 64; ++i)
    bodies.push_back(
        Review(i, i % 2 == 0 ? TeamNamespace(i % quotas) : "no-quota-" + std::to_string(i)));
  const Measured gate = MeasureMutate(router, bodies, iterations, [](int) {});
  const Summary s = Summarize(gate.us);
  std::printf("%d quotas, review %zu bytes, %d requests (%d gated, %d not 200)\n", quotas,
              bodies[0].size(), iterations, gate.marked, gate.bad);
  PrintSummary("router POST /mutate", s);

  // Admission at creation: single pods of the quota namespaces, the real AdmissionLoop's check
  // (never started: no round runs, nothing is patched).
  AdmissionLoop loop(&cache, &metrics, nullptr, nullptr, AdmissionLoopOptions{});
  RouterOptions admitting = options;
  int admitted = 0;  // after the warm-up's: counted with the timing's requests below
  admitting.admit_at_creation = [&loop, &admitted](Pod pod) {
    CreationAdmission a = loop.AdmitAtCreation(std::move(pod));
    if (a.verdict == CreationAdmission::Verdict::kAdmit) ++admitted;
    return a;
  };
  http::Handler admitting_router = MakeRouter(&service, &metrics, admitting);
  std::vector<std::string> singles;
  for (int i = 0; i < 64; ++i)
    singles.push_back(Review(i, TeamNamespace(i % quotas), /*single=*/true));
  const Measured created = MeasureMutate(admitting_router, singles, iterations, [&](int i) {
    if (i == 200) admitted = 0;  // the warm-up's admissions are not counted
    if (i % 100 == 0) {
      cache.Write([&](ClusterState& state) { return state.Expire(now_ms + 3'600'000).size(); });
    }
  });
  const Summary c = Summarize(created.us);
  std::printf("single pods: %d requests (%d admitted at creation, %d not 200)\n", iterations,
              admitted, created.bad);
  PrintSummary("router POST /mutate, admission at creation", c);

  report.Number("quotas", quotas);
  report.Number("review_bytes", static_cast<double>(bodies[0].size()));
  report.Number("gated_share", iterations > 0 ? double(gate.marked) / iterations : 0);
  report.Number("non_200", gate.bad + created.bad);
  report.Latency("mutate_route", s);
  report.Target("mutate_p99_ms", s.p99 / 1000.0, "<=", 1.0, "ms");
  report.Number("admitted_at_creation_share", iterations > 0 ? double(admitted) / iterations : 0);
  report.Latency("mutate_route_admission_at_creation", c);
  report.Target("mutate_admission_at_creation_p99_ms", c.p99 / 1000.0, "<=", 1.0, "ms");
  report.Write(args.Str("--json", ""));
  const int bad = gate.bad + created.bad;
  return bad == 0 ? 0 : 1;
}
