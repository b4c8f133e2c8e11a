// The cluster bench_throughput_bench schedules on a real control plane
// (tests/support/real_control_plane.h): fake nodes, namespaces each with an ElasticQuota big
// enough to admit all of its pods, and the pending pods, created before kube-scheduler starts
// ("prequeued"), deleted after each run so the next one starts from the same state.
//  * Nodes: worker-pool-a-00000..., 32 CPU, 128Gi, 110 pods, with the labels of a cloud node
//    (bench_support.h's MakeBenchNode), Ready and untainted.
//  * Namespaces tp-0 ... tp-(N-1), each with its `default` ServiceAccount and an ElasticQuota
//    (scheduling.x-k8s.io/v1alpha1) whose min and max are twice what its pods request: every pod
//    is admitted, and no quota is near a limit. Each is labelled capacity-extender.io/quota=true,
//    as deploy/webhook/mutating-webhook.yaml asks of every quota namespace: its /mutate webhook,
//    when a configuration registers it (throughput_webhook.h), sees their pods and no other.
//  * Pods p-00000 ... spread over the namespaces in turn: one container requesting and limited
//    to 100m CPU and 128Mi, labelled, schedulerName default-scheduler; admission adds the
//    service-account token volume and the default tolerations, as in any cluster. For gate
//    mode's lift path they also carry our scheduling gate (the control plane then runs with the
//    feature gate PodSchedulingReadiness, for every configuration alike). They are created
//    concurrently over the admin client's connections (4), as a controller creates a burst of
//    pods, and the create responses are kept: they show what a webhook did to each pod.
// Thread-safety: one thread at a time (the control plane's).
#pragma once

#include <rapidjson/document.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "bench/micro/bench_support.h"
#include "core/pod.h"
#include "core/status.h"
#include "tests/support/real_control_plane.h"

namespace capext::bench {

struct ThroughputShape {
  int nodes = 500;
  int pods = 3000;
  int namespaces = 10;
  int pod_cpu_milli = 100;
  int pod_memory_mi = 128;
};

inline std::string ThroughputNamespace(int k) {
  return fmt::format("tp-{}", k);
}

// deploy/'s mark of a quota namespace: the /mutate webhook's namespaceSelector.
inline constexpr const char* kQuotaNamespaceLabel = "capacity-extender.io/quota";

inline int PodsInNamespace(const ThroughputShape& shape, int k) {
  return shape.pods / shape.namespaces + (k < shape.pods % shape.namespaces ? 1 : 0);
}

inline std::string ThroughputQuotaJson(const ThroughputShape& shape, int k) {
  const int pods = PodsInNamespace(shape, k);
  const std::string cpu = fmt::format("{}m", 2 * pods * shape.pod_cpu_milli);
  const std::string memory = fmt::format("{}Mi", 2 * pods * shape.pod_memory_mi);
  return fmt::format(
      R"({{"apiVersion":"scheduling.x-k8s.io/v1alpha1","kind":"ElasticQuota",)"
      R"("metadata":{{"name":"{0}","namespace":"{0}"}},)"
      R"("spec":{{"min":{{"cpu":"{1}","memory":"{2}"}},"max":{{"cpu":"{1}","memory":"{2}"}}}}}})",
      ThroughputNamespace(k), cpu, memory);
}

// `gated`: the pod carries our scheduling gate, as /mutate creates it in gate mode.
inline std::string ThroughputPodJson(const ThroughputShape& shape, int index, bool gated = false) {
  const std::string ns = ThroughputNamespace(index % shape.namespaces);
  const std::string cpu = fmt::format("{}m", shape.pod_cpu_milli);
  const std::string memory = fmt::format("{}Mi", shape.pod_memory_mi);
  return fmt::format(
      R"({{"apiVersion":"v1","kind":"Pod","metadata":{{"name":"p-{0:05}","namespace":"{1}",)"
      R"("labels":{{"app":"throughput","job-name":"tp-job-{2:03}","team":"{1}"}}}},)"
      R"("spec":{{"schedulerName":"default-scheduler","terminationGracePeriodSeconds":0,{5})"
      R"("containers":[{{"name":"main","image":"registry.k8s.io/pause:3.9",)"
      R"("resources":{{"requests":{{"cpu":"{3}","memory":"{4}"}},)"
      R"("limits":{{"cpu":"{3}","memory":"{4}"}}}}}}]}}}})",
      index, ns, index / 50, cpu, memory,
      gated ? fmt::format(R"("schedulingGates":[{{"name":"{}"}}],)", kQuotaGate) : "");
}

// Namespaces, their quotas and the nodes. Needs the ElasticQuota CRD (InstallExtenderRbac).
inline Status SetUpThroughputCluster(test::RealControlPlane& cluster,
                                     const ThroughputShape& shape) {
  // `default` with its ServiceAccount (no controller-manager here): gate mode's probe of
  // spec.schedulingGates creates a dry-run pod there.
  if (Status s = cluster.CreateNamespace("default"); !s.ok()) return s;
  for (int k = 0; k < shape.namespaces; ++k) {
    const std::string ns = ThroughputNamespace(k);
    if (Status s = cluster.CreateNamespace(ns); !s.ok()) return s;
    const kube::RestResponse labelled = cluster.api().Patch(
        "/api/v1/namespaces/" + ns,
        fmt::format(R"({{"metadata":{{"labels":{{"{}":"true"}}}}}})", kQuotaNamespaceLabel),
        "application/merge-patch+json");
    if (!labelled.ok()) {
      return Status::Unavailable("labelling namespace " + ns + ": " +
                                 std::to_string(labelled.status) + " " + labelled.error +
                                 labelled.body);
    }
    const kube::RestResponse quota =
        cluster.api().Post("/apis/scheduling.x-k8s.io/v1alpha1/namespaces/" + ns + "/elasticquotas",
                           ThroughputQuotaJson(shape, k));
    if (!quota.ok()) {
      return Status::Unavailable("ElasticQuota " + ns + ": " + std::to_string(quota.status) + " " +
                                 quota.error + quota.body);
    }
  }
  ClusterShape labels_of;
  std::vector<test::FakeNode> nodes(static_cast<std::size_t>(shape.nodes));
  for (int i = 0; i < shape.nodes; ++i) {
    test::FakeNode& node = nodes[static_cast<std::size_t>(i)];
    const Node like = MakeBenchNode(i, labels_of);
    node.name = like.name;
    node.labels.insert(like.labels.begin(), like.labels.end());
    node.cpu = "32";
    node.memory = "128Gi";
    node.pods = "110";
  }
  return cluster.CreateFakeNodes(nodes);
}

// Creates the pods concurrently (in slices the admin client's queue holds, as SendAll does) and
// returns once every create has been answered; `responses`, when given, receives every answer's
// body (the pod as stored) in the pods' order. An error names the failed creates (at most 10).
inline Status CreateThroughputPods(test::RealControlPlane& cluster, const ThroughputShape& shape,
                                   bool gated = false,
                                   std::vector<std::string>* responses = nullptr) {
  constexpr std::size_t kSlice = 1024;  // RestClientOptions::max_queued is 4,096
  const auto pods = static_cast<std::size_t>(shape.pods);
  if (responses) responses->assign(pods, std::string());
  std::mutex mutex;
  std::condition_variable done;
  std::string failures;
  int failed = 0;
  for (std::size_t first = 0; first < pods; first += kSlice) {
    const std::size_t end = std::min(pods, first + kSlice);
    std::size_t left = end - first;
    for (std::size_t i = first; i < end; ++i) {
      const int index = static_cast<int>(i);
      const std::string path =
          "/api/v1/namespaces/" + ThroughputNamespace(index % shape.namespaces) + "/pods";
      cluster.api().SendAsync(
          "POST", path, ThroughputPodJson(shape, index, gated), "application/json",
          [&, i, path](kube::RestResponse response) {
            std::lock_guard<std::mutex> lock(mutex);
            if (!response.ok() && ++failed <= 10) {
              failures += "POST " + path + ": " + std::to_string(response.status) + " " +
                          response.error + " " + response.body.substr(0, 500) + "\n";
            }
            if (responses) (*responses)[i] = std::move(response.body);
            if (--left == 0) done.notify_all();
          });
    }
    std::unique_lock<std::mutex> lock(mutex);
    done.wait(lock, [&] { return left == 0; });
  }
  if (failed > 0) {
    return Status::Unavailable(fmt::format("{} of {} creates failed:\n{}", failed, pods, failures));
  }
  return {};
}

// The number of the benchmark's pods (app=throughput) in kube-apiserver's watch cache, or with
// `unbound_only` those without spec.nodeName; -1 when the list fails.
inline int CountThroughputPods(test::RealControlPlane& cluster, bool unbound_only) {
  std::string path = "/api/v1/pods?resourceVersion=0&labelSelector=app%3Dthroughput";
  if (unbound_only) path += "&fieldSelector=spec.nodeName%3D";
  const kube::RestResponse listed = cluster.api().Get(path);
  if (!listed.ok()) return -1;
  rapidjson::Document doc;
  doc.Parse(listed.body.c_str(), listed.body.size());
  if (doc.HasParseError() || !doc.IsObject() || !doc.HasMember("items") || !doc["items"].IsArray())
    return -1;
  return static_cast<int>(doc["items"].Size());
}

// Deletes every pod and Event of the namespaces (at once: grace period 0; no kubelet would
// confirm a graceful one) and waits until the watch cache has none of the pods left.
inline Status DeleteThroughputPods(test::RealControlPlane& cluster, const ThroughputShape& shape) {
  std::vector<test::RealControlPlane::ApiRequest> deletes;
  for (int k = 0; k < shape.namespaces; ++k) {
    const std::string ns = "/api/v1/namespaces/" + ThroughputNamespace(k);
    deletes.push_back({"DELETE", ns + "/pods?gracePeriodSeconds=0", "", ""});
    deletes.push_back({"DELETE", ns + "/events", "", ""});
  }
  if (Status s = cluster.SendAll(deletes); !s.ok()) return s;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(2);
  int left = -1;
  while ((left = CountThroughputPods(cluster, false)) != 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      return Status::Unavailable(fmt::format("{} pods left 2 minutes after their deletion", left));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  return {};
}

}  // namespace capext::bench
