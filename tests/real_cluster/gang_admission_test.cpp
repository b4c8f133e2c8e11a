// Issue 20's acceptance on a real kube-apiserver and kube-scheduler 1.26 with scheduling gates
// (FEATURE_GATES=PodSchedulingReadiness=true) and the real `capacity-extender serve` in live
// mode, admissionMode gate, under deploy/'s ServiceAccount and RBAC (docs/workloads-live.md):
//   1. two 4-pod gangs with quota room for 6: one is admitted and bound whole, the other stays
//      gated with its reason (/pending and a Gated Event, /filter's words with the numbers),
//      never 3 + 3;
//   2. an elastic 3-6 job running 6 beside two single ("online") pods started after it, all
//      borrowing: a pod of another quota within its min reclaims the room, and the victims are
//      the job's 3 surplus members, never an online pod nor the job's core (docs/workloads.md,
//      "Victim units").
// Between the two, the gate removals' requests: one patch per pod, no read, and GateLifter's
// stale path against kube-apiserver itself (a refused `test`, one read, one patch).
// The pods are created already carrying our gate, as /mutate would add it (its webhook is
// tested over HTTPS in e2e); no kubelet exists, so "runs" means bound. One control plane for
// both cases.
#include <rapidjson/document.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <functional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "config/object_stream_decoder.h"
#include "core/pod.h"
#include "extender/kube/gate_writes.h"
#include "tests/real_cluster/cluster_polling.h"
#include "tests/support/extender_process.h"
#include "tests/support/http_client.h"
#include "tests/support/real_control_plane.h"

namespace capext::test {
namespace gang_admission_test {
namespace {

using namespace std::chrono_literals;

// A gated pod (our gate, as /mutate adds it) of 1 cpu pinned to `node`; `group` and `min_member`
// make it a member of a coscheduling group sized by the pod annotation.
std::string GatedPod(const std::string& ns, const std::string& name, const std::string& node,
                     const std::string& cpu, const std::string& group = "", int min_member = 0) {
  std::string labels =
      group.empty() ? "{}" : R"({")" + std::string(kPodGroupLabel) + R"(":")" + group + R"("})";
  std::string annotations = min_member == 0 ? "{}"
                                            : R"({")" + std::string(kMinMemberAnnotation) +
                                                  R"(":")" + std::to_string(min_member) + R"("})";
  return R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":")" + name + R"(","namespace":")" +
         ns + R"(","labels":)" + labels + R"(,"annotations":)" + annotations +
         R"(},"spec":{"terminationGracePeriodSeconds":0,"schedulingGates":[{"name":")" +
         kQuotaGate + R"("}],"nodeSelector":{"kubernetes.io/hostname":")" + node +
         R"("},"containers":[{"name":"c","image":"x","resources":{"requests":{"cpu":")" + cpu +
         R"("}}}]}})";
}

struct PodState {
  bool exists = false;
  std::string node;
  bool gated = false;     // carries our gate
  bool admitted = false;  // carries admitted-at
};

PodState GetPod(RealControlPlane& cluster, const std::string& ns, const std::string& name) {
  PodState out;
  const kube::RestResponse r = cluster.api().Get("/api/v1/namespaces/" + ns + "/pods/" + name);
  if (!r.ok()) return out;
  rapidjson::Document d;
  d.Parse(r.body.data(), r.body.size());
  if (d.HasParseError() || !d.IsObject()) return out;
  out.exists = true;
  const auto& spec = d["spec"];
  if (spec.HasMember("nodeName") && spec["nodeName"].IsString())
    out.node = spec["nodeName"].GetString();
  if (spec.HasMember("schedulingGates") && spec["schedulingGates"].IsArray()) {
    for (const auto& g : spec["schedulingGates"].GetArray())
      out.gated |= std::string(g["name"].GetString()) == kQuotaGate;
  }
  const auto& meta = d["metadata"];
  out.admitted = meta.HasMember("annotations") && meta["annotations"].IsObject() &&
                 meta["annotations"].HasMember(kAdmittedAtAnnotation);
  return out;
}

// GateLifter against kube-apiserver itself (docs/workloads-live.md#the-gate-removal), on pods of
// `default` that also carry another gate, so that the admission loop leaves them alone: from a
// fresh basis, one patch; from a stale one (an annotation added since), the refused `test` (422
// or 409, nothing written), one read and a second patch that keeps the annotation and the other
// gate.
void CheckGateLifterOnRealServer(RealControlPlane& cluster) {
  const std::string gates =
      R"([{"name":"example.com/hold"},{"name":")" + std::string(kQuotaGate) + R"("}])";
  auto cached = [&](const std::string& name) {
    Pod pod;
    std::string kind;
    const kube::RestResponse r = cluster.api().Get("/api/v1/namespaces/default/pods/" + name);
    REQUIRE(DecodePodJson(r.body, {}, &pod, &kind).ok());
    return pod;
  };
  for (const char* name : {"lift-fresh", "lift-stale"}) {
    const kube::RestResponse r = cluster.api().Post(
        "/api/v1/namespaces/default/pods",
        R"({"metadata":{"name":")" + std::string(name) +
            R"("},"spec":{"terminationGracePeriodSeconds":0,"schedulingGates":)" + gates +
            R"(,"containers":[{"name":"c","image":"x"}]}})");
    INFO(r.status << " " << r.body);
    REQUIRE(r.ok());
  }
  kube::GateLifter lifter(&cluster.api());
  const auto when = std::chrono::system_clock::now();
  const Pod fresh = cached("lift-fresh");
  const kube::GateLift first =
      lifter.Lift("default", fresh.name, fresh.uid, fresh.patch_basis, when);
  INFO(first.write.http_status << " " << first.write.message);
  CHECK(first.write.ok);
  CHECK_FALSE(first.read);

  const Pod stale = cached("lift-stale");
  REQUIRE(stale.patch_basis.quota_gate_index == 1);
  const kube::RestResponse annotated =
      cluster.api().Send("PATCH", "/api/v1/namespaces/default/pods/lift-stale",
                         R"([{"op":"add","path":"/metadata/annotations","value":{"team":"x"}}])",
                         "application/json-patch+json", {}, {});
  REQUIRE(annotated.ok());
  const kube::GateLift second =
      lifter.Lift("default", stale.name, stale.uid, stale.patch_basis, when);
  INFO(second.write.http_status << " " << second.write.message);
  CHECK(second.write.ok);
  CHECK(second.read);
  const Pod after = cached("lift-stale");
  CHECK(after.patch_basis.quota_gate_index == -1);
  CHECK(after.other_gates);
  CHECK(after.admitted_ms != 0);
  const kube::RestResponse body = cluster.api().Get("/api/v1/namespaces/default/pods/lift-stale");
  CHECK(body.body.find(R"("team":"x")") != std::string::npos);
  for (const char* name : {"lift-fresh", "lift-stale"})
    cluster.api().Send("DELETE", std::string("/api/v1/namespaces/default/pods/") + name, "", "", {},
                       {});
}

std::string Names(const std::string& prefix, int n) {
  std::string out;
  for (int i = 0; i < n; ++i)
    out += (i ? " " : "") + prefix + std::to_string(i);
  return out;
}

TEST_CASE("gate mode: gangs admitted whole, never 3 + 3; an elastic job's surplus reclaimed first",
          "[real-cluster]") {
  ControlPlaneOptions plane_options;
  plane_options.feature_gates = "PodSchedulingReadiness=true";
  RealControlPlane cluster(plane_options);
  std::string kubeconfig;
  Status started = cluster.StartForExtender(&kubeconfig);
  INFO(started.message());
  REQUIRE(started.ok());
  // `default` gets its ServiceAccount (no controller-manager here): the gate probe's dry-run
  // pod is created there.
  for (const char* ns : {"default", "ga", "el", "rq"})
    REQUIRE(cluster.CreateNamespace(ns).ok());
  REQUIRE(cluster.CreateFakeNodes(2, "8", "32Gi", "110", "n").ok());  // n0, n1
  // Mins 6 + 3 + 6 = 15 of the cluster's 16 cpu: room in the sum of all mins for rq's 3 cpu
  // beside ga's 4 and el's 8 (4 + 8 + 3 <= 15), so only the nodes stand in rq's way.
  REQUIRE(cluster
              .Apply(R"(
apiVersion: scheduling.x-k8s.io/v1alpha1
kind: ElasticQuota
metadata: {name: ga, namespace: ga}
spec: {min: {cpu: "6"}, max: {cpu: "6"}}
---
apiVersion: scheduling.x-k8s.io/v1alpha1
kind: ElasticQuota
metadata: {name: el, namespace: el}
spec: {min: {cpu: "3"}, max: {cpu: "8"}}
---
apiVersion: scheduling.x-k8s.io/v1alpha1
kind: ElasticQuota
metadata: {name: rq, namespace: rq}
spec: {min: {cpu: "6"}, max: {cpu: "6"}}
)")
              .ok());

  ExtenderProcess extender;
  REQUIRE(extender.Start({"--kubeconfig", kubeconfig, "--admission-mode", "gate"}));
  INFO("extender log:\n" << Tail(extender.Log()));
  REQUIRE(Eventually(
      [&] { return Fetch("127.0.0.1", extender.port(), "GET", "/readyz").status == 200; }, 30s));
  REQUIRE(extender.Log().find("admissionMode gate: scheduling gates are kept") !=
          std::string::npos);
  SchedulerOptions scheduler;
  scheduler.extender_url = "http://127.0.0.1:" + std::to_string(extender.port());
  Status scheduler_started = cluster.StartScheduler(scheduler);
  INFO(scheduler_started.message());
  REQUIRE(scheduler_started.ok());
  INFO("kube-scheduler log:\n" << Tail(cluster.Log(cluster.SchedulerLogPath())));

  auto create = [&](const std::string& json) {
    const kube::RestResponse r =
        cluster.api().Post("/api/v1/namespaces/" +
                               json.substr(json.find("\"namespace\":\"") + 13,
                                           json.find('"', json.find("\"namespace\":\"") + 13) -
                                               json.find("\"namespace\":\"") - 13) +
                               "/pods",
                           json);
    INFO(r.status << " " << r.error << r.body);
    REQUIRE(r.ok());
  };

  SECTION("two 4-pod gangs, room for 6; then an elastic job gives up its surplus") {
    // --- 1. Two gangs, a older than b, 4 x 1 cpu each, eq ga max 6, on n0.
    for (const char* g : {"a", "b"}) {
      for (int i = 0; i < 4; ++i)
        create(GatedPod("ga", std::string(g) + "-" + std::to_string(i), "n0", "1", g, 4));
      std::this_thread::sleep_for(1100ms);  // creationTimestamp has whole seconds: a is older
    }
    auto count = [&](const std::string& ns, const std::string& prefix, int n,
                     const std::function<bool(const PodState&)>& pred) {
      int c = 0;
      for (int i = 0; i < n; ++i)
        c += pred(GetPod(cluster, ns, prefix + std::to_string(i))) ? 1 : 0;
      return c;
    };
    const auto bound = [](const PodState& p) { return p.exists && !p.node.empty(); };
    const auto gated = [](const PodState& p) { return p.exists && p.gated && p.node.empty(); };
    CHECK(Eventually([&] { return count("ga", "a-", 4, bound) == 4; }, 30s));
    // b waits whole: every pod still gated, none bound, now and a while later (never 3 + 3).
    for (int round = 0; round < 3; ++round) {
      INFO("round " << round << ": " << Names("b-", 4));
      CHECK(count("ga", "b-", 4, gated) == 4);
      CHECK(count("ga", "b-", 4, bound) == 0);
      CHECK(count("ga", "a-", 4, [](const PodState& p) { return p.admitted; }) == 4);
      std::this_thread::sleep_for(1s);
    }
    // Its reason on /pending, in /filter's words with the numbers, and as a Gated Event.
    const std::string why =
        "gang ga/b: 4 pods need cpu 4: ElasticQuota ga/ga would exceed max: cpu used 4 + request "
        "4 > max 6";
    // The API server's JSON escapes '>' (\u003e): the Event is matched up to it.
    const std::string why_event = why.substr(0, why.find(" >"));
    const ClientResponse pending = Fetch("127.0.0.1", extender.port(), "GET", "/pending");
    INFO(pending.body.substr(0, 4000));
    CHECK(pending.body.find(R"("name":"b-0")") != std::string::npos);
    CHECK(pending.body.find(R"("reason":"Gated")") != std::string::npos);
    CHECK(pending.body.find(R"("gate":"QuotaExceeded")") != std::string::npos);
    CHECK(pending.body.find(why) != std::string::npos);
    // Listed once, by the admission loop: the reclaim controller leaves gated pods alone.
    CHECK(pending.body.find(R"("name":"b-0")") == pending.body.rfind(R"("name":"b-0")"));
    CHECK(pending.body.find("AwaitingScheduler") == std::string::npos);
    CHECK(Eventually(
        [&] {
          const kube::RestResponse events =
              cluster.api().Get("/apis/events.k8s.io/v1/namespaces/ga/events");
          return events.ok() && events.body.find(why_event) != std::string::npos &&
                 events.body.find(R"("reason":"Gated")") != std::string::npos;
        },
        10s));

    // The gate removals were each one patch from the cache: kube-apiserver accepted the
    // resourceVersion `test` (docs/workloads-live.md#the-gate-removal), and no pod was read.
    const std::string metrics = Fetch("127.0.0.1", extender.port(), "GET", "/metrics").body;
    CHECK(metrics.find("capacity_extender_admissions_total 4\n") != std::string::npos);
    CHECK((metrics.find("capacity_extender_gate_rereads_total") == std::string::npos ||
           metrics.find("capacity_extender_gate_rereads_total 0\n") != std::string::npos));
    CheckGateLifterOnRealServer(cluster);

    // --- 2. The elastic job el (minMember 3, 6 pods) and two online single pods on n1: 8 of 8
    // cpu, eq el borrowing 5 above its min 3. The online pods start last (the most recent).
    for (int i = 0; i < 6; ++i)
      create(GatedPod("el", "el-" + std::to_string(i), "n1", "1", "el", 3));
    REQUIRE(Eventually([&] { return count("el", "el-", 6, bound) == 6; }, 30s));
    for (int i = 0; i < 6; ++i)
      REQUIRE(cluster.MarkPodRunning("el", "el-" + std::to_string(i)).ok());
    for (int i = 0; i < 2; ++i)
      create(GatedPod("el", "web-" + std::to_string(i), "n1", "1"));
    REQUIRE(Eventually([&] { return count("el", "web-", 2, bound) == 2; }, 30s));
    std::this_thread::sleep_for(1100ms);  // startTime has whole seconds
    for (int i = 0; i < 2; ++i)
      REQUIRE(cluster.MarkPodRunning("el", "web-" + std::to_string(i)).ok());
    // rq (within its min 6) asks for 3 cpu on the full n1: the reclaim takes el's surplus.
    create(GatedPod("rq", "job", "n1", "3"));
    CHECK(Eventually([&] { return !GetPod(cluster, "rq", "job").node.empty(); }, 45s));
    CHECK(count("el", "web-", 2, bound) == 2);  // no online pod moved
    CHECK(count("el", "el-", 6, bound) == 3);   // the job keeps its minMember
    std::istringstream log(extender.Log());
    int reclaims = 0;
    for (std::string line; std::getline(log, line);) {
      if (line.find("reclaim started") == std::string::npos) continue;
      ++reclaims;
      INFO(line);
      CHECK(line.find("web-") == std::string::npos);
    }
    CHECK(reclaims >= 1);
  }
}

}  // namespace
}  // namespace gang_admission_test
}  // namespace capext::test
