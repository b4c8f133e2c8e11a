// The object codec: Kubernetes JSON (or YAML converted to the same DOM) into the core model, with
// errors that name the field path.
#include "config/object_codec.h"

#include <rapidjson/document.h>

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "tests/support/builders.h"

namespace capext {
namespace object_codec_test {
namespace {

using testing::kGi;

constexpr int64_t kMi = int64_t{1} << 20;
constexpr int64_t kJan1 = 1767225600000;  // 2026-01-01T00:00:00Z in Unix milliseconds

rapidjson::Document Parse(const std::string& json) {
  rapidjson::Document d;
  d.Parse(json.c_str());
  INFO(json);
  REQUIRE_FALSE(d.HasParseError());
  return d;
}

Status DecodePodJson(const std::string& json, Pod* pod, DecodeOptions options = {}) {
  rapidjson::Document d = Parse(json);
  return DecodePod(d, options, pod);
}

const char* const kFullPod = R"({
  "apiVersion": "v1", "kind": "Pod",
  "metadata": {
    "name": "train", "namespace": "ml", "uid": "u-train",
    "creationTimestamp": "2026-01-01T00:00:00Z", "deletionTimestamp": "2026-01-01T00:05:00Z",
    "labels": {"app": "train"}, "annotations": {"example.com/gpu-model": "V100",
                    "scheduling.capacity-extender.io/reclaim": "n2@2026-01-01T00:00:05.000Z"},
    "managedFields": [{"manager": "kubectl"}]
  },
  "spec": {
    "nodeName": "n1", "schedulerName": "default-scheduler",
    "priority": 100, "priorityClassName": "high", "preemptionPolicy": "Never",
    "nodeSelector": {"zone": "a"},
    "tolerations": [
      {"key": "dedicated", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"},
      {"operator": "Exists", "tolerationSeconds": 30}
    ],
    "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
      "nodeSelectorTerms": [
        {"matchExpressions": [{"key": "gpu", "operator": "In", "values": ["v100", "a100"]}]},
        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]}
      ]}},
      "podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": []}},
    "initContainers": [
      {"name": "sidecar", "restartPolicy": "Always",
       "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}}},
      {"name": "init", "resources": {"requests": {"cpu": "3", "memory": "1Gi"}}}
    ],
    "containers": [
      {"name": "main", "image": "trainer",
       "resources": {"requests": {"cpu": "1500m", "memory": "2Gi", "nvidia.com/gpu": "1"},
                     "limits": {"cpu": "99", "nvidia.com/gpu": "1"}}},
      {"name": "logger", "resources": {"requests": {"cpu": 0.25}}}
    ],
    "overhead": {"cpu": "50m"}
  },
  "status": {
    "phase": "Running", "nominatedNodeName": "n2", "startTime": "2026-01-01T00:00:10Z",
    "conditions": [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable"}]
  }
})";

TEST_CASE("DecodePod reads everything decisions need", "[object_codec]") {
  Pod pod;
  DecodeOptions options;
  options.accelerator_model_annotation = "example.com/gpu-model";
  Status s = DecodePodJson(kFullPod, &pod, options);
  INFO(s.message());
  REQUIRE(s.ok());
  CHECK(pod.ns == "ml");
  CHECK(pod.name == "train");
  CHECK(pod.uid == "u-train");
  CHECK(pod.creation_ms == kJan1);
  CHECK(pod.start_ms == kJan1 + 10000);
  CHECK(pod.terminating);
  CHECK(pod.labels == Labels{{"app", "train"}});
  CHECK(pod.accelerator_model == "V100");
  CHECK(pod.reclaim_record == "n2@2026-01-01T00:00:05.000Z");
  CHECK(pod.node_name == "n1");
  CHECK(pod.nominated_node_name == "n2");
  CHECK(pod.scheduler_name == "default-scheduler");
  CHECK(pod.spec_priority == 100);
  CHECK(pod.priority_class_name == "high");
  CHECK(pod.spec_preemption_policy == PreemptionPolicy::kNever);
  CHECK(pod.phase == PodPhase::kRunning);
  CHECK(pod.unschedulable_condition);
  CHECK(pod.node_selector == Labels{{"zone", "a"}});

  REQUIRE(pod.tolerations.size() == 2);
  CHECK(pod.tolerations[0].key == "dedicated");
  CHECK(pod.tolerations[0].op == "Equal");
  CHECK(pod.tolerations[0].value == "gpu");
  CHECK(pod.tolerations[0].effect == "NoSchedule");
  CHECK(pod.tolerations[1].key.empty());
  CHECK(pod.tolerations[1].op == "Exists");
  CHECK(pod.tolerations[1].effect.empty());

  REQUIRE(pod.required_affinity.size() == 2);
  REQUIRE(pod.required_affinity[0].match_expressions.size() == 1);
  CHECK(pod.required_affinity[0].match_expressions[0].key == "gpu");
  CHECK(pod.required_affinity[0].match_expressions[0].op == "In");
  CHECK(pod.required_affinity[0].match_expressions[0].values ==
        std::vector<std::string>{"v100", "a100"});
  REQUIRE(pod.required_affinity[1].match_fields.size() == 1);
  CHECK(pod.required_affinity[1].match_fields[0].key == "metadata.name");

  // containers 1500m + 250m + sidecar 100m = 1850m; the init container runs next to the sidecar:
  // 3 + 100m = 3100m, the larger; plus 50m overhead. Memory: 2Gi + 64Mi (sidecar) beats
  // 1Gi + 64Mi. Limits are ignored.
  CHECK(pod.requests ==
        ResourceList({{"cpu", 3150}, {"memory", 2 * kGi + 64 * kMi}, {"nvidia.com/gpu", 1}}));
}

TEST_CASE("DecodePod defaults", "[object_codec]") {
  Pod pod;
  REQUIRE(DecodePodJson(R"({"metadata": {"name": "p"}})", &pod).ok());
  CHECK(pod.ns == "default");
  CHECK(pod.phase == PodPhase::kPending);
  CHECK_FALSE(pod.terminating);
  CHECK_FALSE(pod.spec_priority.has_value());
  CHECK_FALSE(pod.spec_preemption_policy.has_value());
  CHECK(pod.requests.empty());
  CHECK(pod.accelerator_model.empty());
}

TEST_CASE("DecodePod: the accelerator annotation is read only when configured", "[object_codec]") {
  Pod pod;
  REQUIRE(DecodePodJson(kFullPod, &pod).ok());
  CHECK(pod.accelerator_model.empty());
  CHECK(pod.reclaim_record == "n2@2026-01-01T00:00:05.000Z");  // always read
}

TEST_CASE("DecodePod phases", "[object_codec]") {
  struct Case {
    std::string phase;
    PodPhase want;
  };
  const std::vector<Case> cases = {{"Pending", PodPhase::kPending},
                                   {"Running", PodPhase::kRunning},
                                   {"Succeeded", PodPhase::kSucceeded},
                                   {"Failed", PodPhase::kFailed},
                                   {"Unknown", PodPhase::kUnknown}};
  for (const auto& c : cases) {
    INFO(c.phase);
    Pod pod;
    REQUIRE(DecodePodJson(
                R"({"metadata": {"name": "p"}, "status": {"phase": ")" + c.phase + R"("}})", &pod)
                .ok());
    CHECK(pod.phase == c.want);
  }
}

struct ErrorCase {
  std::string description;
  std::string json;
  std::string want_error;
};

TEST_CASE("DecodePod errors name the field path", "[object_codec]") {
  const std::vector<ErrorCase> cases = {
      {"metadata missing", R"({"spec": {}})", "metadata: missing"},
      {"metadata of the wrong type", R"({"metadata": []})", "metadata: expected object, got array"},
      {"name of the wrong type", R"({"metadata": {"name": 5}})",
       "metadata.name: expected string, got number"},
      {"label value of the wrong type", R"({"metadata": {"name": "p", "labels": {"app": 1}}})",
       "metadata.labels.app: expected string"},
      {"bad creation time", R"({"metadata": {"name": "p", "creationTimestamp": "yesterday"}})",
       "metadata.creationTimestamp: invalid RFC 3339 time \"yesterday\""},
      {"priority of the wrong type", R"({"metadata": {"name": "p"}, "spec": {"priority": "high"}})",
       "spec.priority: expected integer, got string"},
      {"priority out of range", R"({"metadata": {"name": "p"}, "spec": {"priority": 3000000000}})",
       "spec.priority: number out of the int32 range"},
      {"unknown preemption policy",
       R"({"metadata": {"name": "p"}, "spec": {"preemptionPolicy": "Sometimes"}})",
       "spec.preemptionPolicy: unknown preemption policy \"Sometimes\""},
      {"containers not a list", R"({"metadata": {"name": "p"}, "spec": {"containers": {}}})",
       "spec.containers: expected array, got object"},
      {"a bad quantity",
       R"({"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c",
           "resources": {"requests": {"memory": "1Gi", "cpu": "two"}}}]}})",
       "spec.containers[0].resources.requests.cpu: quantity \"two\""},
      {"a quantity of the wrong type",
       R"({"metadata": {"name": "p"}, "spec": {"containers": [{"name": "a"}, {"name": "c",
           "resources": {"requests": {"cpu": true}}}]}})",
       "spec.containers[1].resources.requests.cpu: expected quantity (string or number), got "
       "boolean"},
      {"a negative request",
       R"({"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c",
           "resources": {"requests": {"cpu": "-1"}}}]}})",
       "spec.containers[0].resources.requests.cpu: negative quantity \"-1\""},
      {"a negative init container request",
       R"({"metadata": {"name": "p"}, "spec": {"initContainers": [{"name": "c",
           "resources": {"requests": {"memory": "-1Gi"}}}]}})",
       "spec.initContainers[0].resources.requests.memory: negative quantity \"-1Gi\""},
      {"a negative overhead",
       R"({"metadata": {"name": "p"}, "spec": {"overhead": {"cpu": "-10m"}}})",
       "spec.overhead.cpu: negative quantity \"-10m\""},
      {"tolerations not a list", R"({"metadata": {"name": "p"}, "spec": {"tolerations": {}}})",
       "spec.tolerations: expected array, got object"},
      {"a toleration field of the wrong type",
       R"({"metadata": {"name": "p"}, "spec": {"tolerations": [{"key": "a"}, {"effect": 3}]}})",
       "spec.tolerations[1].effect: expected string, got number"},
      {"an affinity values list of the wrong type",
       R"({"metadata": {"name": "p"}, "spec": {"affinity": {"nodeAffinity": {
           "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
             {"matchExpressions": [{"key": "k", "operator": "In", "values": [1]}]}]}}}}})",
       "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution."
       "nodeSelectorTerms[0].matchExpressions[0].values[0]: expected string"},
      {"nodeSelector not a map", R"({"metadata": {"name": "p"}, "spec": {"nodeSelector": []}})",
       "spec.nodeSelector: expected object, got array"},
      {"a condition field of the wrong type",
       R"({"metadata": {"name": "p"}, "status": {"conditions": [{"type": "Ready"},
           {"type": 7}]}})",
       "status.conditions[1].type: expected string, got number"},
  };
  for (const auto& c : cases) {
    INFO(c.description);
    Pod pod;
    pod.name = "unchanged";
    Status s = DecodePodJson(c.json, &pod);
    REQUIRE_FALSE(s.ok());
    CHECK_THAT(s.message(), Catch::StartsWith(c.want_error));
    CHECK(pod.name == "unchanged");  // nothing written on failure
  }
}

TEST_CASE("DecodePod ignores unknown fields and nulls", "[object_codec]") {
  Pod pod;
  Status s = DecodePodJson(R"({
    "metadata": {"name": "p", "namespace": null, "futureField": {"x": [1, 2]}},
    "spec": {"frobnicate": true, "containers": [{"name": "c", "resizePolicy": [],
             "resources": {"requests": {"cpu": "1", "example.com/foo": null}, "claims": []}}],
             "tolerations": null},
    "somethingElse": 1
  })",
                           &pod);
  INFO(s.message());
  REQUIRE(s.ok());
  CHECK(pod.ns == "default");
  CHECK(pod.requests == ResourceList({{"cpu", 1000}}));
}

TEST_CASE("DecodePod matches member names case-insensitively, exact match first",
          "[object_codec]") {
  Pod pod;
  Status s = DecodePodJson(R"({
    "Metadata": {"NAME": "other", "name": "exact", "NameSpace": "ns"},
    "SPEC": {"Containers": [{"Resources": {"Requests": {"cpu": "2"}}}]}
  })",
                           &pod);
  INFO(s.message());
  REQUIRE(s.ok());
  CHECK(pod.name == "exact");
  CHECK(pod.ns == "ns");
  CHECK(pod.requests.Get("cpu") == 2000);
}

TEST_CASE("DecodePod quantities: strings and numbers, rounded up to decision units",
          "[object_codec]") {
  Pod pod;
  REQUIRE(DecodePodJson(R"({"metadata": {"name": "p"}, "spec": {"containers": [
      {"resources": {"requests": {"cpu": "0.0001", "memory": 1000, "nvidia.com/gpu": 2,
                                  "ephemeral-storage": "1.5"}}}]}})",
                        &pod)
              .ok());
  CHECK(pod.requests.Get("cpu") == 1);  // 0.1m rounds up to 1m
  CHECK(pod.requests.Get("memory") == 1000);
  CHECK(pod.requests.Get("nvidia.com/gpu") == 2);
  CHECK(pod.requests.Get("ephemeral-storage") == 2);
}

// --- other kinds ---------------------------------------------------------------------------------

TEST_CASE("DecodeNode", "[object_codec]") {
  rapidjson::Document d = Parse(R"({
    "kind": "Node", "metadata": {"name": "n1", "labels": {"zone": "a"}},
    "spec": {"unschedulable": true, "taints": [{"key": "k", "value": "v", "effect": "NoExecute"}]},
    "status": {"allocatable": {"cpu": "7900m", "memory": "31Gi", "pods": "110"},
               "capacity": {"cpu": "8", "memory": "32Gi", "pods": "110"}}
  })");
  Node node;
  REQUIRE(DecodeNode(d, &node).ok());
  CHECK(node.name == "n1");
  CHECK(node.labels == Labels{{"zone", "a"}});
  CHECK(node.unschedulable);
  REQUIRE(node.taints.size() == 1);
  CHECK(node.taints[0].effect == "NoExecute");
  CHECK(node.allocatable == ResourceList({{"cpu", 7900}, {"memory", 31 * kGi}, {"pods", 110}}));

  SECTION("capacity when allocatable is absent") {
    rapidjson::Document c =
        Parse(R"({"metadata": {"name": "n2"}, "status": {"capacity": {"cpu": "8"}}})");
    Node n2;
    REQUIRE(DecodeNode(c, &n2).ok());
    CHECK(n2.allocatable == ResourceList({{"cpu", 8000}}));
  }
  SECTION("a wrong type names the field") {
    rapidjson::Document bad =
        Parse(R"({"metadata": {"name": "n3"}, "spec": {"unschedulable": "maybe"}})");
    Node n3;
    Status s = DecodeNode(bad, &n3);
    REQUIRE_FALSE(s.ok());
    CHECK(s.message() == "spec.unschedulable: expected boolean, got string");
  }
}

TEST_CASE("DecodeElasticQuota", "[object_codec]") {
  rapidjson::Document d = Parse(R"({
    "apiVersion": "scheduling.sigs.k8s.io/v1alpha1", "kind": "ElasticQuota",
    "metadata": {"name": "q", "namespace": "eq1", "uid": "u-q", "resourceVersion": "42",
                 "creationTimestamp": "2026-01-01T00:00:00Z",
                 "annotations": {"scheduling.capacity-extender.io/parent": "root/q"}},
    "spec": {"min": {"cpu": "6", "nvidia.com/gpu": 2}, "max": {}}
  })");
  ElasticQuota eq;
  REQUIRE(DecodeElasticQuota(d, &eq).ok());
  CHECK(eq.ns == "eq1");
  CHECK(eq.name == "q");
  CHECK(eq.uid == "u-q");
  CHECK(eq.resource_version == "42");
  CHECK(eq.creation_ms == kJan1);
  CHECK(eq.api_group == "scheduling.sigs.k8s.io");
  CHECK(eq.parent == "root/q");
  REQUIRE(eq.min.has_value());
  CHECK(*eq.min == ResourceList({{"cpu", 6000}, {"nvidia.com/gpu", 2}}));
  // A present but empty max differs from an absent one.
  REQUIRE(eq.max.has_value());
  CHECK(eq.max->empty());

  rapidjson::Document absent = Parse(R"({"metadata": {"name": "q", "namespace": "eq1"}})");
  ElasticQuota bare;
  REQUIRE(DecodeElasticQuota(absent, &bare).ok());
  CHECK_FALSE(bare.min.has_value());
  CHECK_FALSE(bare.max.has_value());

  rapidjson::Document bad =
      Parse(R"({"metadata": {"name": "q"}, "spec": {"max": {"memory": "lots"}}})");
  Status s = DecodeElasticQuota(bad, &bare);
  REQUIRE_FALSE(s.ok());
  CHECK_THAT(s.message(), Catch::StartsWith("spec.max.memory: quantity \"lots\""));
}

TEST_CASE("DecodeElasticQuota: the fair-share weight; an invalid one reads as 1 with its reason",
          "[object_codec][fair]") {
  ElasticQuota eq;
  rapidjson::Document weighted = Parse(R"({"metadata": {"name": "q", "namespace": "eq1",
      "annotations": {"scheduling.capacity-extender.io/fair-share-weight": "2.5"}}})");
  REQUIRE(DecodeElasticQuota(weighted, &eq).ok());
  CHECK(eq.weight_milli == 2500);
  CHECK(eq.weight_problem.empty());
  rapidjson::Document bad = Parse(R"({"metadata": {"name": "q", "namespace": "eq1",
      "annotations": {"scheduling.capacity-extender.io/fair-share-weight": "heavy"}}})");
  ElasticQuota invalid;
  REQUIRE(DecodeElasticQuota(bad, &invalid).ok());
  CHECK(invalid.weight_milli == 1000);
  CHECK(invalid.weight_problem ==
        "annotation scheduling.capacity-extender.io/fair-share-weight \"heavy\" is not a "
        "weight: a decimal from 0 to 1000 with at most 3 decimals");
  rapidjson::Document absent = Parse(R"({"metadata": {"name": "q", "namespace": "eq1"}})");
  ElasticQuota plain;
  REQUIRE(DecodeElasticQuota(absent, &plain).ok());
  CHECK(plain.weight_milli == 1000);
}

TEST_CASE("DecodePriorityClass", "[object_codec]") {
  rapidjson::Document d = Parse(R"({"kind": "PriorityClass", "metadata": {"name": "nb"},
      "value": 1000000, "globalDefault": false, "preemptionPolicy": "Never"})");
  PriorityClass pc;
  REQUIRE(DecodePriorityClass(d, &pc).ok());
  CHECK(pc.name == "nb");
  CHECK(pc.value == 1000000);
  CHECK_FALSE(pc.global_default);
  CHECK(pc.preemption_policy == PreemptionPolicy::kNever);

  rapidjson::Document defaults = Parse(R"({"metadata": {"name": "d"}, "value": -5,
      "globalDefault": true})");
  REQUIRE(DecodePriorityClass(defaults, &pc).ok());
  CHECK(pc.value == -5);
  CHECK(pc.global_default);
  CHECK(pc.preemption_policy == PreemptionPolicy::kPreemptLowerPriority);

  rapidjson::Document bad = Parse(R"({"metadata": {"name": "x"}, "preemptionPolicy": "Always"})");
  Status s = DecodePriorityClass(bad, &pc);
  REQUIRE_FALSE(s.ok());
  CHECK(s.message() == "preemptionPolicy: unknown preemption policy \"Always\"");
}

TEST_CASE("DecodePodDisruptionBudget", "[object_codec]") {
  rapidjson::Document d = Parse(R"({"kind": "PodDisruptionBudget",
      "metadata": {"name": "db", "namespace": "eq1"},
      "spec": {"minAvailable": 2, "selector": {"matchLabels": {"app": "db"},
               "matchExpressions": [{"key": "tier", "operator": "In", "values": ["a"]}]}},
      "status": {"disruptionsAllowed": 1, "disruptedPods": {"db-0": "2026-01-01T00:00:00Z"}}})");
  PodDisruptionBudget pdb;
  REQUIRE(DecodePodDisruptionBudget(d, &pdb).ok());
  CHECK(pdb.ns == "eq1");
  CHECK(pdb.name == "db");
  REQUIRE(pdb.selector.has_value());
  CHECK(pdb.selector->match_labels == Labels{{"app", "db"}});
  REQUIRE(pdb.selector->match_expressions.size() == 1);
  CHECK(pdb.selector->match_expressions[0].op == "In");
  CHECK(pdb.disruptions_allowed == 1);
  CHECK(pdb.disrupted_pods == std::vector<std::string>{"db-0"});

  rapidjson::Document no_selector = Parse(R"({"metadata": {"name": "x", "namespace": "eq1"}})");
  PodDisruptionBudget none;
  REQUIRE(DecodePodDisruptionBudget(no_selector, &none).ok());
  CHECK_FALSE(none.selector.has_value());
  CHECK(none.disruptions_allowed == 0);
}

TEST_CASE("DecodeKubeObject dispatches by kind and skips the rest", "[object_codec]") {
  struct Case {
    std::string json;
    bool skipped;
    std::size_t variant_index;  // into KubeObject when not skipped
  };
  const std::vector<Case> cases = {
      {R"({"kind": "Pod", "metadata": {"name": "p"}})", false, 0},
      {R"({"kind": "Node", "metadata": {"name": "n"}})", false, 1},
      {R"({"apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "ElasticQuota",
           "metadata": {"name": "q"}})",
       false, 2},
      {R"({"apiVersion": "scheduling.sigs.k8s.io/v1alpha1", "kind": "ElasticQuota",
           "metadata": {"name": "q"}})",
       false, 2},
      {R"({"apiVersion": "example.com/v1", "kind": "ElasticQuota", "metadata": {"name": "q"}})",
       true, 0},
      {R"({"kind": "PriorityClass", "metadata": {"name": "pc"}})", false, 3},
      {R"({"kind": "PodDisruptionBudget", "metadata": {"name": "b"}})", false, 4},
      {R"({"kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"a": "b"}})", true, 0},
  };
  for (const auto& c : cases) {
    INFO(c.json);
    rapidjson::Document d = Parse(c.json);
    KubeObject obj;
    bool skipped = true;
    std::string kind;
    REQUIRE(DecodeKubeObject(d, {}, "", &obj, &skipped, &kind).ok());
    CHECK(skipped == c.skipped);
    if (!c.skipped) CHECK(obj.index() == c.variant_index);
  }

  SECTION("the default kind applies when the object has none") {
    rapidjson::Document d = Parse(R"({"metadata": {"name": "n"}})");
    KubeObject obj;
    bool skipped = true;
    std::string kind;
    REQUIRE(DecodeKubeObject(d, {}, "Node", &obj, &skipped, &kind).ok());
    CHECK_FALSE(skipped);
    CHECK(kind == "Node");
    CHECK(std::holds_alternative<Node>(obj));
  }
}

TEST_CASE("DescribeObject", "[object_codec]") {
  CHECK(DescribeObject(Parse(R"({"kind": "Pod", "metadata": {"name": "p", "namespace": "eq1"}})"),
                       "") == "Pod eq1/p");
  CHECK(DescribeObject(Parse(R"({"kind": "Node", "metadata": {"name": "n1"}})"), "") == "Node n1");
  CHECK(DescribeObject(Parse(R"({"metadata": {"name": "n1"}})"), "Node") == "Node n1");
  CHECK(DescribeObject(Parse(R"({"spec": {}})"), "") == "object");
}

}  // namespace
}  // namespace object_codec_test
}  // namespace capext
