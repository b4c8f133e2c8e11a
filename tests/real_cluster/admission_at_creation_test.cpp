// Gate mode's admission at creation (docs/workloads-live.md#admission-at-creation) on a real
// kube-apiserver and kube-scheduler 1.26 with scheduling gates (PodSchedulingReadiness=true):
// the real `capacity-extender serve --admission-mode gate` answers kube-apiserver's calls to its
// pod-gating webhook, registered as deploy/ registers it (a MutatingWebhookConfiguration scoped
// to labelled namespaces) but with a URL on 127.0.0.1 and a certificate made for it.
//   - a pod its quota admits while nothing waits is created admitted (admitted-at, no gate),
//     a generateName pod included, and kube-scheduler binds it with no write of ours to the pod;
//   - a pod the quota does not admit is created gated; while it waits, a pod of another quota
//     that would fit is gated too (nothing passes a pod that waits);
//   - once room is freed the admission loop lifts both gates, and the next new pod is again
//     admitted at its creation;
//   - a dry run is gated and holds nothing; no creation hold is left once the pods are seen.
// No kubelet: "runs" means bound.
#include <rapidjson/document.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <fstream>
#include <sstream>
#include <string>

#include "config/base64.h"
#include "core/pod.h"
#include "tests/real_cluster/cluster_polling.h"
#include "tests/support/extender_process.h"
#include "tests/support/free_port.h"
#include "tests/support/http_client.h"
#include "tests/support/real_control_plane.h"
#include "tests/support/test_certificates.h"

namespace capext::test {
namespace admission_at_creation_test {
namespace {

using namespace std::chrono_literals;

// A file's bytes in base64 (the webhook's caBundle).
std::string Base64OfFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  return Base64(bytes.str());
}

// A pod of `cpu` in `ns`: named, or with generateName when `name` ends in '-'. No gate: the
// webhook decides.
std::string NewPod(const std::string& name, const std::string& cpu) {
  const std::string id =
      name.back() == '-' ? R"("generateName":")" + name + R"(")" : R"("name":")" + name + R"(")";
  return R"({"apiVersion":"v1","kind":"Pod","metadata":{)" + id +
         R"(},"spec":{"terminationGracePeriodSeconds":0,"containers":[{"name":"c","image":"x",)"
         R"("resources":{"requests":{"cpu":")" +
         cpu + R"("}}}]}})";
}

struct Created {
  std::string name;
  bool gated = false;     // carries our gate
  bool admitted = false;  // carries admitted-at
  std::string node;
};

Created Parse(const std::string& body) {
  Created out;
  rapidjson::Document d;
  d.Parse(body.data(), body.size());
  if (d.HasParseError() || !d.IsObject() || !d.HasMember("metadata")) return out;
  const auto& meta = d["metadata"];
  if (meta.HasMember("name")) out.name = meta["name"].GetString();
  out.admitted = meta.HasMember("annotations") && meta["annotations"].IsObject() &&
                 meta["annotations"].HasMember(kAdmittedAtAnnotation);
  const auto& spec = d["spec"];
  if (spec.HasMember("nodeName") && spec["nodeName"].IsString())
    out.node = spec["nodeName"].GetString();
  if (spec.HasMember("schedulingGates") && spec["schedulingGates"].IsArray()) {
    for (const auto& g : spec["schedulingGates"].GetArray())
      out.gated |= std::string(g["name"].GetString()) == kQuotaGate;
  }
  return out;
}

Created Create(RealControlPlane& cluster, const std::string& ns, const std::string& name,
               const std::string& cpu, const std::string& query = "") {
  const kube::RestResponse r =
      cluster.api().Post("/api/v1/namespaces/" + ns + "/pods" + query, NewPod(name, cpu));
  INFO("create " << ns << "/" << name << ": " << r.status << " " << r.error << r.body);
  REQUIRE(r.ok());
  return Parse(r.body);
}

Created Get(RealControlPlane& cluster, const std::string& ns, const std::string& name) {
  return Parse(cluster.api().Get("/api/v1/namespaces/" + ns + "/pods/" + name).body);
}

// The value of an unlabelled metric line "name value", or -1.
double Metric(const std::string& text, const std::string& name) {
  const std::size_t at = text.find("\n" + name + " ");
  if (at == std::string::npos) return -1;
  return std::stod(text.substr(at + name.size() + 2));
}

TEST_CASE("gate mode: pods the quota admits are created admitted, without a gate",
          "[real-cluster]") {
  ControlPlaneOptions plane_options;
  plane_options.feature_gates = "PodSchedulingReadiness=true";
  RealControlPlane cluster(plane_options);
  std::string kubeconfig;
  Status started = cluster.StartForExtender(&kubeconfig);
  INFO(started.message());
  REQUIRE(started.ok());
  REQUIRE(cluster.CreateNamespace("default").ok());  // the gate probe's dry run goes there
  for (const char* ns : {"aq", "bq"}) {
    REQUIRE(cluster.CreateNamespace(ns).ok());
    REQUIRE(cluster.Kubectl("label", "namespace", ns, "capacity-extender.io/quota=true").ok());
  }
  REQUIRE(cluster.CreateFakeNodes(1, "8", "32Gi", "110", "n").ok());
  REQUIRE(cluster
              .Apply(R"(
apiVersion: scheduling.x-k8s.io/v1alpha1
kind: ElasticQuota
metadata: {name: aq, namespace: aq}
spec: {min: {cpu: "2"}, max: {cpu: "2"}}
---
apiVersion: scheduling.x-k8s.io/v1alpha1
kind: ElasticQuota
metadata: {name: bq, namespace: bq}
spec: {min: {cpu: "2"}, max: {cpu: "2"}}
)")
              .ok());

  const TestCertificates& certs = SharedTestCertificates();
  const uint16_t webhook_port = FreeLoopbackPort();
  ExtenderProcess extender;
  REQUIRE(extender.Start({"--kubeconfig", kubeconfig, "--admission-mode", "gate", "--webhook-port",
                          std::to_string(webhook_port), "--webhook-tls-cert", certs.server_cert,
                          "--webhook-tls-key", certs.server_key}));
  INFO("extender log:\n" << Tail(extender.Log()));
  REQUIRE(Eventually(
      [&] { return Fetch("127.0.0.1", extender.port(), "GET", "/readyz").status == 200; }, 30s));
  REQUIRE(extender.Log().find("admissionMode gate: scheduling gates are kept") !=
          std::string::npos);
  // deploy/webhook/mutating-webhook.yaml's webhook, reached by URL instead of a Service.
  REQUIRE(cluster
              .Apply(R"(
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata: {name: capacity-extender}
webhooks:
  - name: pods.capacity-extender.io
    admissionReviewVersions: [v1]
    sideEffects: NoneOnDryRun
    failurePolicy: Fail
    reinvocationPolicy: IfNeeded
    timeoutSeconds: 5
    namespaceSelector: {matchLabels: {capacity-extender.io/quota: "true"}}
    clientConfig:
      url: https://127.0.0.1:)" +
                     std::to_string(webhook_port) +
                     R"(/mutate
      caBundle: )" + Base64OfFile(certs.ca) +
                     R"(
    rules:
      - {apiGroups: [""], apiVersions: [v1], resources: [pods], operations: [CREATE], scope: Namespaced}
)")
              .ok());
  // kube-apiserver picks the configuration up from its own watch: until then pods pass
  // untouched. A dry run shows when it is in force, and is gated (it holds nothing).
  REQUIRE(Eventually([&] { return Create(cluster, "aq", "probe", "1", "?dryRun=All").gated; }, 30s,
                     500ms));
  CHECK_FALSE(Create(cluster, "aq", "probe", "1", "?dryRun=All").admitted);

  SchedulerOptions scheduler;
  scheduler.extender_url = "http://127.0.0.1:" + std::to_string(extender.port());
  Status scheduler_started = cluster.StartScheduler(scheduler);
  INFO(scheduler_started.message());
  REQUIRE(scheduler_started.ok());
  INFO("kube-scheduler log:\n" << Tail(cluster.Log(cluster.SchedulerLogPath())));

  // 1. aq {max 2}: two pods of 1 cpu are admitted at creation, a generateName one included.
  const Created a = Create(cluster, "aq", "a-", "1");
  CHECK(a.admitted);
  CHECK_FALSE(a.gated);
  CHECK(a.name.rfind("a-", 0) == 0);
  const Created b = Create(cluster, "aq", "b", "1");
  CHECK(b.admitted);
  CHECK_FALSE(b.gated);
  // 2. The quota is full: c is created gated (its creation holds never let the room look free).
  const Created c = Create(cluster, "aq", "c", "1");
  CHECK(c.gated);
  CHECK_FALSE(c.admitted);
  CHECK(Eventually([&] { return !Get(cluster, "aq", a.name).node.empty(); }, 30s));
  CHECK(Eventually([&] { return !Get(cluster, "aq", "b").node.empty(); }, 30s));
  // 3. c waits: a pod of bq, which its quota would admit, is gated too.
  const Created d = Create(cluster, "bq", "d", "1");
  CHECK(d.gated);
  CHECK_FALSE(d.admitted);
  const std::string metrics = Fetch("127.0.0.1", extender.port(), "GET", "/metrics").body;
  CHECK(Metric(metrics, "capacity_extender_admissions_at_creation_total") == 2);
  // 4. b goes: the loop lifts c's gate; then nothing waits, and e is admitted at creation.
  REQUIRE(cluster.api()
              .Send("DELETE", "/api/v1/namespaces/aq/pods/b", R"({"gracePeriodSeconds":0})",
                    "application/json", {}, {})
              .ok());
  CHECK(Eventually([&] { return !Get(cluster, "aq", "c").node.empty(); }, 30s));
  CHECK(Eventually([&] { return !Get(cluster, "bq", "d").node.empty(); }, 30s));
  const Created c_after = Get(cluster, "aq", "c");
  CHECK(c_after.admitted);
  CHECK_FALSE(c_after.gated);
  const Created e = Create(cluster, "bq", "e-", "1");
  CHECK(e.admitted);
  CHECK_FALSE(e.gated);
  CHECK(Eventually([&] { return !Get(cluster, "bq", e.name).node.empty(); }, 30s));
  // Every creation hold ended when its pod was seen; the lifts were c's and d's only.
  CHECK(Eventually(
      [&] {
        const std::string m = Fetch("127.0.0.1", extender.port(), "GET", "/metrics").body;
        return Metric(m, "capacity_extender_creation_holds") == 0;
      },
      10s));
  const std::string after = Fetch("127.0.0.1", extender.port(), "GET", "/metrics").body;
  CHECK(Metric(after, "capacity_extender_admissions_at_creation_total") == 3);
  CHECK(Metric(after, "capacity_extender_admissions_total") == 2);  // gate removals
  // Every pod event came from a protobuf watch, the default
  // (docs/architecture.md#watching-in-protobuf): as many as all the pod events.
  const double protobuf_events =
      Metric(after, R"(capacity_extender_informer_protobuf_events_total{resource="pods"})");
  CHECK(protobuf_events > 0);
  CHECK(protobuf_events ==
        Metric(after, R"(capacity_extender_informer_events_total{resource="pods"})"));
  // used = a + c in aq, d + e in bq: nothing counted twice, nothing leaked.
  ClientResponse quotas;
  CHECK(Eventually(
      [&] {
        quotas = Fetch("127.0.0.1", extender.port(), "GET", "/quotas");
        std::size_t twos = 0;
        for (std::size_t at = quotas.body.find(R"("used":{"cpu":"2"})"); at != std::string::npos;
             at = quotas.body.find(R"("used":{"cpu":"2"})", at + 1))
          ++twos;
        return twos == 2;
      },
      10s));
  INFO("/quotas: " << quotas.body);
}

}  // namespace
}  // namespace admission_at_creation_test
}  // namespace capext::test
