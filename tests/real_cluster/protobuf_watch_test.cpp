// Watching in protobuf against a real kube-apiserver 1.26
// (docs/architecture.md#watching-in-protobuf): two informers follow the same pods and nodes, one
// asking for protobuf and one for JSON, each decoding what it gets into the core's records. While
// pods and nodes of every shape the decoders read are created, bound, given a status, made
// terminating and deleted, both must end with the same records, field by field, and the protobuf
// one must really have been answered in protobuf.
#include <catch2/catch.hpp>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "config/object_protobuf_decoder.h"
#include "config/object_stream_decoder.h"
#include "extender/kube/informer.h"
#include "tests/real_cluster/cluster_polling.h"
#include "tests/support/object_decoding.h"
#include "tests/support/real_control_plane.h"

namespace capext::test {
namespace protobuf_watch_test {
namespace {

using namespace std::chrono_literals;
using kube::ObjectEncoding;
using kube::WatchEventType;

// Decodes every object it is given into the core's records, as the cache's sink does, and keeps
// their text forms by namespace/name: what the cache would hold.
class DecodingSink : public kube::InformerSink {
 public:
  void Replace(const std::string& resource, std::vector<std::string> objects_json) override {
    std::lock_guard lock(mutex_);
    auto& held = held_[resource];
    held.clear();
    for (const std::string& json : objects_json)
      Keep(resource, WatchEventType::kAdded, ObjectEncoding::kJson, json);
  }
  void Apply(const std::string& resource, WatchEventType type, ObjectEncoding encoding,
             std::string_view object) override {
    std::lock_guard lock(mutex_);
    ++events_[encoding];
    Keep(resource, type, encoding, object);
  }
  std::map<std::string, std::string> Held(const std::string& resource) {
    std::lock_guard lock(mutex_);
    return held_[resource];
  }
  int Events(ObjectEncoding encoding) {
    std::lock_guard lock(mutex_);
    return events_[encoding];
  }
  std::vector<std::string> Failures() {
    std::lock_guard lock(mutex_);
    return failures_;
  }

 private:
  void Keep(const std::string& resource, WatchEventType type, ObjectEncoding encoding,
            std::string_view object) {
    std::string key, text;
    Status s;
    if (resource == "pods") {
      Pod pod;
      std::string kind;
      s = encoding == ObjectEncoding::kProtobuf ? DecodePodProtobuf(object, {}, &pod)
                                                : DecodePodJson(object, {}, &pod, &kind);
      key = pod.ns + "/" + pod.name;
      text = testing::Text(pod);
    } else {
      Node node;
      std::string kind;
      s = encoding == ObjectEncoding::kProtobuf ? DecodeNodeProtobuf(object, &node)
                                                : DecodeNodeJson(object, &node, &kind);
      key = node.name;
      text = testing::Text(node);
    }
    if (!s.ok()) {
      failures_.push_back(resource + ": " + s.message());
      return;
    }
    if (type == WatchEventType::kDeleted) {
      held_[resource].erase(key);
    } else {
      held_[resource][key] = text;
    }
  }

  std::mutex mutex_;
  std::map<std::string, std::map<std::string, std::string>> held_;
  std::map<ObjectEncoding, int> events_;
  std::vector<std::string> failures_;
};

kube::InformerOptions Options(const std::string& resource, bool protobuf) {
  kube::InformerOptions options;
  options.resource = resource;
  options.path = "/api/v1/" + resource;
  options.protobuf_watch = protobuf;
  options.seed = 1;
  return options;
}

TEST_CASE("a protobuf watch and a JSON watch of the same pods and nodes hold the same records",
          "[real-cluster]") {
  ControlPlaneOptions plane_options;
  plane_options.feature_gates = "PodSchedulingReadiness=true";  // spec.schedulingGates
  RealControlPlane cluster(plane_options);
  Status started = cluster.Start();
  INFO(started.message());
  REQUIRE(started.ok());
  REQUIRE(cluster.CreateNamespace("team").ok());
  REQUIRE(cluster
              .Apply("apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata:\n"
                     "  name: high\nvalue: 1000\npreemptionPolicy: Never\n")
              .ok());

  DecodingSink protobuf_sink, json_sink;
  std::vector<std::unique_ptr<kube::Informer>> informers;
  for (const char* resource : {"pods", "nodes"}) {
    informers.push_back(
        std::make_unique<kube::Informer>(&cluster.api(), Options(resource, true), &protobuf_sink));
    informers.push_back(
        std::make_unique<kube::Informer>(&cluster.api(), Options(resource, false), &json_sink));
  }
  for (auto& informer : informers)
    informer->Start();
  REQUIRE(Eventually(
      [&] {
        for (auto& informer : informers)
          if (!informer->HasSynced()) return false;
        return true;
      },
      30s));

  // Nodes: labels, taints, unschedulable, extended resources (status through the harness).
  FakeNode gpu;
  gpu.name = "gpu-0";
  gpu.cpu = "16";
  gpu.memory = "64Gi";
  gpu.extended = {{"nvidia.com/gpu", "4"}};
  gpu.labels = {{"zone", "a"}, {"accelerator", "a100"}};
  gpu.taints_json = R"([{"key":"dedicated","value":"gpu","effect":"NoSchedule"}])";
  REQUIRE(cluster.CreateFakeNode(gpu).ok());
  REQUIRE(cluster.CreateFakeNodes(2, "4", "8Gi", "110").ok());
  REQUIRE(cluster.Kubectl("cordon", "node-1").ok());

  // Pods of every shape the decoders read.
  const std::string pods[] = {
      // requests and limits in several containers, init containers, annotations the decoder
      // reads, labels, a controller owner, tolerations, node selector, required affinity.
      R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"full","namespace":"team",
        "labels":{"app":"train","scheduling.x-k8s.io/pod-group":"g1"},
        "annotations":{"scheduling.capacity-extender.io/reclaim":"node-0@2026-11-29T10:00:00Z",
          "scheduling.capacity-extender.io/min-member":"3","unrelated":"x"},
        "ownerReferences":[{"apiVersion":"batch/v1","kind":"Job","name":"j","uid":"u-1",
          "controller":true}]},
        "spec":{"priorityClassName":"high","nodeSelector":{"zone":"a"},
        "tolerations":[{"key":"dedicated","operator":"Equal","value":"gpu","effect":"NoSchedule"},
          {"operator":"Exists"}],
        "affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{
          "nodeSelectorTerms":[{"matchExpressions":[{"key":"accelerator","operator":"In",
            "values":["a100","h100"]}]},{"matchFields":[{"key":"metadata.name",
            "operator":"In","values":["gpu-0"]}]}]}}},
        "initContainers":[{"name":"i","image":"x","resources":{"requests":{"cpu":"3",
          "memory":"100Mi"}}}],
        "containers":[{"name":"a","image":"x","resources":{"requests":{"cpu":"500m",
          "memory":"1Gi","nvidia.com/gpu":"2"},"limits":{"nvidia.com/gpu":"2"}}},
          {"name":"b","image":"x","resources":{"limits":{"cpu":"1.5","memory":"2G"}}}]}})",
      // gated, with our gate second; preemption policy Never by spec.
      R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"gated","namespace":"team",
        "annotations":{}},
        "spec":{"schedulingGates":[{"name":"example.com/other"},
          {"name":"scheduling.capacity-extender.io/quota"}],
        "containers":[{"name":"c","image":"x","resources":{"requests":{"cpu":"1"}}}]}})",
      // to be bound, given a status and then deleted.
      R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"runner","namespace":"team"},
        "spec":{"terminationGracePeriodSeconds":0,
        "containers":[{"name":"c","image":"x","resources":{"requests":{"cpu":"2"}}}]}})",
      // to be made terminating by a finalizer and a delete.
      R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"held","namespace":"team",
        "finalizers":["example.com/hold"]},
        "spec":{"containers":[{"name":"c","image":"x"}]}})",
      // to be deleted at once.
      R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"gone","namespace":"team"},
        "spec":{"terminationGracePeriodSeconds":0,"containers":[{"name":"c","image":"x"}]}})",
  };
  for (const std::string& pod : pods) {
    kube::RestResponse created = cluster.api().Post("/api/v1/namespaces/team/pods", pod);
    INFO(created.body);
    REQUIRE(created.status == 201);
  }
  REQUIRE(cluster.api()
              .Post("/api/v1/namespaces/team/pods/runner/binding",
                    R"({"apiVersion":"v1","kind":"Binding","metadata":{"name":"runner"},)"
                    R"("target":{"apiVersion":"v1","kind":"Node","name":"node-0"}})")
              .ok());
  REQUIRE(cluster.MarkPodRunning("team", "runner").ok());
  kube::RestResponse status = cluster.api().Patch(
      "/api/v1/namespaces/team/pods/gated/status",
      R"({"status":{"nominatedNodeName":"node-0","conditions":[{"type":"PodScheduled",)"
      R"("status":"False","reason":"Unschedulable","message":"m"}]}})",
      "application/strategic-merge-patch+json");
  INFO(status.body);
  REQUIRE(status.ok());
  REQUIRE(cluster.api().Delete("/api/v1/namespaces/team/pods/held").ok());
  REQUIRE(cluster.api().Delete("/api/v1/namespaces/team/pods/gone").ok());

  // Both sinks end with the same records: four pods (one terminating) and three nodes.
  auto same = [&] {
    return protobuf_sink.Held("pods").size() == 4 && json_sink.Held("pods").size() == 4 &&
           protobuf_sink.Held("nodes").size() == 3 &&
           protobuf_sink.Held("pods") == json_sink.Held("pods") &&
           protobuf_sink.Held("nodes") == json_sink.Held("nodes") &&
           protobuf_sink.Held("pods").count("team/held") == 1 &&
           protobuf_sink.Held("pods").at("team/held").find("terminating=true") != std::string::npos;
  };
  const bool converged = Eventually(same, 30s);
  for (const char* resource : {"pods", "nodes"}) {
    for (const auto& [key, text] : protobuf_sink.Held(resource)) {
      INFO(resource << " " << key << " protobuf: " << text);
      const auto json = json_sink.Held(resource);
      CHECK((json.count(key) ? json.at(key) : "(absent)") == text);
    }
  }
  CHECK(converged);
  CHECK(protobuf_sink.Failures().empty());
  CHECK(json_sink.Failures().empty());
  // The protobuf informers were answered in protobuf, every event; the JSON ones in JSON.
  CHECK(protobuf_sink.Events(ObjectEncoding::kProtobuf) >= 12);
  CHECK(protobuf_sink.Events(ObjectEncoding::kJson) == 0);
  CHECK(json_sink.Events(ObjectEncoding::kProtobuf) == 0);
  for (auto& informer : informers)
    informer->Stop();
}

}  // namespace
}  // namespace protobuf_watch_test
}  // namespace capext::test
