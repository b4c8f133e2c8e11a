// What the extender micro-benchmarks decide on: synthetic clusters built straight into a
// ClusterState (nodes, running pods, team quotas) and real-sized request bodies shaped like the
// captured kube-scheduler payloads (tests/fixtures/kube-scheduler: a kubectl-applied pod with
// managedFields, ~2.8 KB; the filter, preempt and bind bodies around it). Header-only; nothing here
// is used by the product.
#pragma once

#include <rapidjson/document.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "core/cluster_state.h"
#include "core/elastic_quota.h"
#include "extender/verbs/extender_service.h"

namespace capext::bench {

// ---------------------------------------------------------------------------------------------
// Synthetic clusters.
struct ClusterShape {
  int nodes = 5000;
  int pods_per_node = 20;
  int quotas = 8;                   // namespaces team-0..team-N-1 with an ElasticQuota
  int64_t node_cpu_milli = 64'000;  // m5.16xlarge-like
  int64_t node_memory = int64_t{256} << 30;
  int64_t pod_cpu_milli = 1000;
  int64_t pod_memory = int64_t{4} << 30;
  int64_t quota_min_cpu_milli = 12'000'000;  // per team; generous: the filter pod passes
  int64_t quota_max_cpu_milli = 20'000'000;
};

// Node names as long as typical cloud names in the captured payloads' size range.
inline std::string NodeName(int i) {
  return fmt::format("worker-pool-a-{:05}", i);
}

inline std::string TeamNamespace(int k) {
  return fmt::format("team-{}", k);
}

// A UUID-shaped uid, unique per (kind, i).
inline std::string Uid(uint32_t kind, uint64_t i) {
  return fmt::format("{:08x}-{:04x}-4{:03x}-8{:03x}-{:012x}", kind, (i >> 32) & 0xffff,
                     (i >> 20) & 0xfff, (i >> 8) & 0xfff, i & 0xffffffffffffULL);
}

inline Node MakeBenchNode(int i, const ClusterShape& shape) {
  Node node;
  node.name = NodeName(i);
  node.allocatable.Set("cpu", shape.node_cpu_milli);
  node.allocatable.Set("memory", shape.node_memory);
  node.allocatable.Set("pods", 110);
  node.allocatable.Set("ephemeral-storage", int64_t{200} << 30);
  node.allocatable.Set("hugepages-1Gi", 0);
  node.allocatable.Set("hugepages-2Mi", 0);
  const char* zones[] = {"us-east-1a", "us-east-1b", "us-east-1c"};
  node.labels = {
      {"beta.kubernetes.io/arch", "amd64"},
      {"beta.kubernetes.io/instance-type", "m5.16xlarge"},
      {"beta.kubernetes.io/os", "linux"},
      {"kubernetes.io/arch", "amd64"},
      {"kubernetes.io/hostname", node.name},
      {"kubernetes.io/os", "linux"},
      {"node.kubernetes.io/instance-type", "m5.16xlarge"},
      {"topology.kubernetes.io/region", "us-east-1"},
      {"topology.kubernetes.io/zone", zones[i % 3]},
      {"eks.amazonaws.com/nodegroup", "pool-a"},
  };
  return node;
}

// The tolerations every pod gets from the DefaultTolerationSeconds admission plugin.
inline std::vector<Toleration> DefaultTolerations() {
  return {{"node.kubernetes.io/not-ready", "Exists", "", "NoExecute"},
          {"node.kubernetes.io/unreachable", "Exists", "", "NoExecute"}};
}

// A running pod as the informer would hold it: three of four in team namespaces, one in
// "monitoring" (no quota, a DaemonSet-like pod).
inline Pod MakeBoundPod(uint64_t index, const std::string& node, const ClusterShape& shape,
                        int32_t priority = 0) {
  Pod pod;
  const bool team = index % 4 != 3;
  pod.ns = team ? TeamNamespace(static_cast<int>(index % static_cast<uint64_t>(shape.quotas)))
                : "monitoring";
  pod.name = fmt::format("{}-job-{:06}-x7k2p", team ? "batch" : "node-exporter", index);
  pod.uid = Uid(0xb0b0b0b0, index);
  pod.node_name = node;
  pod.phase = PodPhase::kRunning;
  pod.spec_priority = priority;
  pod.priority = priority;
  pod.scheduler_name = "default-scheduler";
  pod.creation_ms = 1'700'000'000'000 + static_cast<int64_t>(index);
  pod.start_ms = pod.creation_ms + 1000;
  pod.requests.Set("cpu", shape.pod_cpu_milli);
  pod.requests.Set("memory", shape.pod_memory);
  pod.requests.Set("pods", 1);
  pod.labels = {{"app", team ? "batch" : "node-exporter"},
                {"controller-uid", Uid(0xc0c0c0c0, index / 50)},
                {"job-name", fmt::format("batch-job-{:06}", index / 50)}};
  pod.tolerations = DefaultTolerations();
  return pod;
}

inline ElasticQuota MakeTeamQuota(int k, const ClusterShape& shape) {
  ElasticQuota q;
  q.ns = TeamNamespace(k);
  q.name = q.ns;
  q.api_group = "scheduling.x-k8s.io";
  ResourceList min, max;
  min.Set("cpu", shape.quota_min_cpu_milli);
  max.Set("cpu", shape.quota_max_cpu_milli);
  q.min = min;
  q.max = max;
  return q;
}

// Fills `state` with shape.nodes nodes, shape.pods_per_node running pods on each, and the quotas.
inline void BuildCluster(ClusterState& state, const ClusterShape& shape) {
  for (int k = 0; k < shape.quotas; ++k)
    state.UpsertQuota(MakeTeamQuota(k, shape));
  for (int i = 0; i < shape.nodes; ++i)
    state.UpsertNode(MakeBenchNode(i, shape));
  uint64_t index = 0;
  for (int i = 0; i < shape.nodes; ++i) {
    const std::string node = NodeName(i);
    for (int p = 0; p < shape.pods_per_node; ++p)
      state.UpsertPod(MakeBoundPod(index++, node, shape));
  }
}

inline std::vector<std::string> NodeNames(int count, int stride = 1) {
  std::vector<std::string> out;
  out.reserve(static_cast<std::size_t>(count));
  for (int i = 0; i < count; ++i)
    out.push_back(NodeName(i * stride));
  return out;
}

// ---------------------------------------------------------------------------------------------
// Request bodies, shaped like tests/fixtures/kube-scheduler/filter-nodecache-001.request.json
// (a kubectl-applied pod as kube-scheduler sends it: managedFields, the last-applied annotation,
// the service-account volume, default tolerations; ~2.8 KB).
struct PodSpecText {
  std::string ns = "team-0";
  std::string name = "trainer-0";
  std::string uid = "fa240c36-d199-4189-b548-c62723d9b393";
  std::string cpu = "2";
  std::string memory = "4Gi";
  int priority = 0;
  std::string priority_class = "low";
  std::string node_name;            // spec.nodeName (bound pods in NodeNameToVictims)
  std::string nominated_node_name;  // status.nominatedNodeName
};

inline std::string RealPodJson(const PodSpecText& p) {
  const std::string last_applied = fmt::format(
      R"({{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{{\"annotations\":{{}},\"labels\":{{\"app\":\"harness\",\"pc\":\"{0}\"}},\"name\":\"{1}\",\"namespace\":\"{2}\"}},\"spec\":{{\"containers\":[{{\"image\":\"registry.k8s.io/pause:3.9\",\"name\":\"c\",\"resources\":{{\"limits\":{{\"cpu\":\"{3}\",\"memory\":\"{4}\"}},\"requests\":{{\"cpu\":\"{3}\",\"memory\":\"{4}\"}}}}}}],\"priorityClassName\":\"{0}\",\"terminationGracePeriodSeconds\":0}}}}\n)",
      p.priority_class, p.name, p.ns, p.cpu, p.memory);
  std::string out = fmt::format(
      R"({{"metadata":{{"name":"{1}","namespace":"{2}","uid":"{3}","resourceVersion":"205",)"
      R"("creationTimestamp":"2026-11-21T20:33:06Z","labels":{{"app":"harness","pc":"{0}"}},)"
      R"("annotations":{{"kubectl.kubernetes.io/last-applied-configuration":"{7}"}},)"
      R"("managedFields":[{{"manager":"kubectl-client-side-apply","operation":"Update",)"
      R"("apiVersion":"v1","time":"2026-11-21T20:33:06Z","fieldsType":"FieldsV1","fieldsV1":)"
      R"({{"f:metadata":{{"f:annotations":{{".":{{}},"f:kubectl.kubernetes.io/last-applied-configuration":{{}}}},)"
      R"("f:labels":{{".":{{}},"f:app":{{}},"f:pc":{{}}}}}},"f:spec":{{"f:containers":{{"k:{{\"name\":\"c\"}}":)"
      R"({{".":{{}},"f:image":{{}},"f:imagePullPolicy":{{}},"f:name":{{}},"f:resources":{{".":{{}},)"
      R"("f:limits":{{".":{{}},"f:cpu":{{}},"f:memory":{{}}}},"f:requests":{{".":{{}},"f:cpu":{{}},)"
      R"("f:memory":{{}}}}}},"f:terminationMessagePath":{{}},"f:terminationMessagePolicy":{{}}}}}},)"
      R"("f:dnsPolicy":{{}},"f:enableServiceLinks":{{}},"f:priorityClassName":{{}},"f:restartPolicy":{{}},)"
      R"("f:schedulerName":{{}},"f:securityContext":{{}},"f:terminationGracePeriodSeconds":{{}}}}}}}}]}},)"
      R"("spec":{{"volumes":[{{"name":"kube-api-access-xfmqb","projected":{{"sources":[)"
      R"({{"serviceAccountToken":{{"expirationSeconds":3607,"path":"token"}}}},)"
      R"({{"configMap":{{"name":"kube-root-ca.crt","items":[{{"key":"ca.crt","path":"ca.crt"}}]}}}},)"
      R"({{"downwardAPI":{{"items":[{{"path":"namespace","fieldRef":{{"apiVersion":"v1",)"
      R"("fieldPath":"metadata.namespace"}}}}]}}}}],"defaultMode":420}}}}],)"
      R"("containers":[{{"name":"c","image":"registry.k8s.io/pause:3.9","resources":)"
      R"({{"limits":{{"cpu":"{4}","memory":"{5}"}},"requests":{{"cpu":"{4}","memory":"{5}"}}}},)"
      R"("volumeMounts":[{{"name":"kube-api-access-xfmqb","readOnly":true,)"
      R"("mountPath":"/var/run/secrets/kubernetes.io/serviceaccount"}}],)"
      R"("terminationMessagePath":"/dev/termination-log","terminationMessagePolicy":"File",)"
      R"("imagePullPolicy":"IfNotPresent"}}],"restartPolicy":"Always","terminationGracePeriodSeconds":0,)"
      R"("dnsPolicy":"ClusterFirst",{8}"serviceAccountName":"default","serviceAccount":"default",)"
      R"("securityContext":{{}},"schedulerName":"default-scheduler","tolerations":[)"
      R"({{"key":"node.kubernetes.io/not-ready","operator":"Exists","effect":"NoExecute","tolerationSeconds":300}},)"
      R"({{"key":"node.kubernetes.io/unreachable","operator":"Exists","effect":"NoExecute","tolerationSeconds":300}}],)"
      R"("priorityClassName":"{0}","priority":{6},"enableServiceLinks":true,)"
      R"("preemptionPolicy":"PreemptLowerPriority"}},"status":{{"phase":"{9}",{10}"qosClass":"Guaranteed"}}}})",
      p.priority_class, p.name, p.ns, p.uid, p.cpu, p.memory, p.priority, last_applied,
      p.node_name.empty() ? std::string() : fmt::format(R"("nodeName":"{}",)", p.node_name),
      p.node_name.empty() ? "Pending" : "Running",
      p.nominated_node_name.empty()
          ? std::string()
          : fmt::format(R"("nominatedNodeName":"{}",)", p.nominated_node_name));
  return out;
}

inline std::string JsonStringArray(const std::vector<std::string>& names) {
  std::string out = "[";
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i) out += ',';
    out += '"';
    out += names[i];
    out += '"';
  }
  return out + "]";
}

// Passed node count of one Filter answer (-1 on an error answer).
inline int PassedNodes(ExtenderService& service, const std::string& body) {
  std::string copy = body;
  http::Response r = service.Filter(copy);
  rapidjson::Document doc;
  doc.Parse(r.body.c_str());
  if (r.status != 200 || !doc.IsObject() || !doc["NodeNames"].IsArray()) return -1;
  if (std::string(doc["Error"].GetString()) != "") return -1;
  return static_cast<int>(doc["NodeNames"].Size());
}

// ExtenderArgs in nodeCacheCapable mode.
inline std::string FilterBody(const std::string& pod_json, const std::vector<std::string>& names) {
  return R"({"Pod":)" + pod_json + R"(,"Nodes":null,"NodeNames":)" + JsonStringArray(names) + "}";
}

// ExtenderPreemptionArgs in nodeCacheCapable mode: node -> victim uids.
inline std::string PreemptBody(
    const std::string& pod_json,
    const std::vector<std::pair<std::string, std::vector<std::string>>>& victims) {
  std::string out =
      R"({"Pod":)" + pod_json + R"(,"NodeNameToVictims":null,"NodeNameToMetaVictims":{)";
  for (std::size_t i = 0; i < victims.size(); ++i) {
    if (i) out += ',';
    out += '"' + victims[i].first + R"(":{"Pods":[)";
    for (std::size_t v = 0; v < victims[i].second.size(); ++v) {
      if (v) out += ',';
      out += R"({"UID":")" + victims[i].second[v] + R"("})";
    }
    out += R"(],"NumPDBViolations":0})";
  }
  return out + "}}";
}

inline std::string BindBody(const Pod& pod, const std::string& node) {
  return fmt::format(R"({{"PodName":"{}","PodNamespace":"{}","PodUID":"{}","Node":"{}"}})",
                     pod.name, pod.ns, pod.uid, node);
}

}  // namespace capext::bench
