// Snapshot files: multi-document YAML, kind: List (and typed lists), JSON; skipped kinds noted;
// errors naming the document and kind/namespace/name; applying a snapshot to a ClusterState.
#include "config/snapshot.h"

#include <catch2/catch.hpp>
#include <fstream>
#include <string>
#include <vector>

#include "core/quota_admission.h"
#include "tests/support/test_paths.h"

namespace capext {
namespace snapshot_test {
namespace {

Snapshot MustParse(const std::string& text, const std::string& source = "snap.yaml") {
  Snapshot snapshot;
  Status s = ParseSnapshot(text, source, DecodeOptions{}, &snapshot);
  INFO(s.message());
  REQUIRE(s.ok());
  return snapshot;
}

std::string ParseError(const std::string& text, const std::string& source = "snap.yaml") {
  Snapshot snapshot;
  Status s = ParseSnapshot(text, source, DecodeOptions{}, &snapshot);
  REQUIRE_FALSE(s.ok());
  return s.message();
}

const char* const kMultiDocument = R"(apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: high}
value: 1000
---
apiVersion: v1
kind: Node
metadata:
  name: n1
status:
  allocatable: {cpu: 8, memory: 32Gi, pods: "110"}
---
apiVersion: scheduling.sigs.k8s.io/v1alpha1
kind: ElasticQuota
metadata: {name: eq1, namespace: eq1}
spec:
  min: {cpu: "6"}
  max: {cpu: 10}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: eq1}
data: {a: b}
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: db, namespace: eq1}
spec: {selector: {matchLabels: {app: db}}}
status: {disruptionsAllowed: 0}
---
apiVersion: v1
kind: Pod
metadata: {name: job-a, namespace: eq1, uid: u-job-a}
spec:
  nodeName: n1
  priorityClassName: high
  containers:
  - name: c
    resources: {requests: {cpu: 500m}}
status: {phase: Running}
)";

TEST_CASE("multi-document YAML", "[snapshot]") {
  Snapshot s = MustParse(kMultiDocument);
  REQUIRE(s.nodes.size() == 1);
  CHECK(s.nodes[0].allocatable ==
        ResourceList({{"cpu", 8000}, {"memory", int64_t{32} << 30}, {"pods", 110}}));
  REQUIRE(s.quotas.size() == 1);
  CHECK(s.quotas[0].api_group == "scheduling.sigs.k8s.io");
  CHECK(*s.quotas[0].max == ResourceList({{"cpu", 10000}}));
  REQUIRE(s.priority_classes.size() == 1);
  REQUIRE(s.pdbs.size() == 1);
  REQUIRE(s.pods.size() == 1);
  CHECK(s.pods[0].requests == ResourceList({{"cpu", 500}}));
  CHECK(s.notes == std::vector<std::string>{"snap.yaml: document 4: skipped kind ConfigMap"});
}

TEST_CASE("ApplySnapshot resolves priorities whatever the document order", "[snapshot]") {
  // The PriorityClass comes after the Pod in the file.
  Snapshot s = MustParse(R"(kind: Pod
metadata: {name: p, namespace: eq1, uid: u-p}
spec: {nodeName: n1, priorityClassName: late, containers: [{resources: {requests: {cpu: "2"}}}]}
---
kind: PriorityClass
metadata: {name: late}
value: 77
---
kind: ElasticQuota
apiVersion: scheduling.x-k8s.io/v1alpha1
metadata: {name: eq1, namespace: eq1}
spec: {max: {cpu: "2"}}
)");
  ClusterState state;
  ApplySnapshot(s, &state);
  REQUIRE(state.FindPod("u-p") != nullptr);
  CHECK(state.FindPod("u-p")->priority == 77);
  CHECK(state.Used("eq1").Get("cpu") == 2000);
  Pod another;
  another.ns = "eq1";
  another.name = "another";
  another.requests.Set("cpu", 1);
  CHECK_FALSE(CheckQuota(state, state.Normalize(another)).ok());
}

TEST_CASE("kind: List and typed lists", "[snapshot]") {
  SECTION("List items carry their kinds; unknown kinds are noted with their index") {
    Snapshot s = MustParse(R"(apiVersion: v1
kind: List
items:
- {apiVersion: v1, kind: Node, metadata: {name: n1}}
- {apiVersion: v1, kind: Service, metadata: {name: svc}}
- {apiVersion: v1, kind: Pod, metadata: {name: p, namespace: ns}}
)");
    CHECK(s.nodes.size() == 1);
    CHECK(s.pods.size() == 1);
    CHECK(s.notes ==
          std::vector<std::string>{"snap.yaml: document 1, items[1]: skipped kind Service"});
  }
  SECTION("typed list items without kind take the list's item kind") {
    Snapshot s = MustParse(R"(apiVersion: v1
kind: NodeList
items:
- metadata: {name: n1}
- metadata: {name: n2}
)");
    REQUIRE(s.nodes.size() == 2);
    CHECK(s.nodes[1].name == "n2");
  }
  SECTION("an ElasticQuotaList from kubectl") {
    Snapshot s = MustParse(R"(apiVersion: scheduling.x-k8s.io/v1alpha1
kind: ElasticQuotaList
items:
- metadata: {name: eq1, namespace: eq1}
  spec: {min: {cpu: 1}}
)");
    REQUIRE(s.quotas.size() == 1);
    CHECK(s.quotas[0].min->Get("cpu") == 1000);
  }
}

TEST_CASE("JSON snapshots", "[snapshot]") {
  SECTION("one object") {
    Snapshot s = MustParse(R"({"kind": "Node", "metadata": {"name": "n1"}})", "snap.json");
    CHECK(s.nodes.size() == 1);
  }
  SECTION("a List") {
    Snapshot s = MustParse(R"({"kind": "List", "items": [
        {"kind": "Node", "metadata": {"name": "n1"}},
        {"kind": "Pod", "metadata": {"name": "p", "namespace": "ns"}}]})",
                           "snap.json");
    CHECK(s.nodes.size() == 1);
    CHECK(s.pods.size() == 1);
  }
  SECTION("an array of objects") {
    Snapshot s = MustParse(R"([{"kind": "Node", "metadata": {"name": "n1"}},
                                {"kind": "Secret", "metadata": {"name": "s"}}])",
                           "snap.json");
    CHECK(s.nodes.size() == 1);
    CHECK(s.notes == std::vector<std::string>{"snap.json: element 1: skipped kind Secret"});
  }
  SECTION("invalid JSON names the offset") {
    CHECK_THAT(ParseError(R"({"kind": "Node", )", "snap.json"),
               Catch::StartsWith("snap.json: invalid JSON at offset"));
  }
}

TEST_CASE("errors name the document and the object", "[snapshot]") {
  SECTION("a bad field in the second document") {
    CHECK(ParseError(R"(kind: Node
metadata: {name: n1}
---
kind: Pod
metadata: {name: bad, namespace: eq1}
spec:
  containers:
  - resources: {requests: {cpu: "-2"}}
)") == "snap.yaml: document 2 (Pod eq1/bad): spec.containers[0].resources.requests.cpu: "
       "negative quantity \"-2\"");
  }
  SECTION("a bad item of a List") {
    CHECK_THAT(ParseError(R"(kind: List
items:
- {kind: Node, metadata: {name: n1}}
- {kind: Node, metadata: {name: n2}, status: {allocatable: {cpu: many}}}
)"),
               Catch::StartsWith("snap.yaml: document 1, items[1] (Node n2): "
                                 "status.allocatable.cpu: quantity \"many\""));
  }
  SECTION("a bad item of a typed List without kind") {
    CHECK_THAT(ParseError(R"(kind: PodList
items:
- metadata: {name: p, namespace: ns}
  spec: {priority: high}
)"),
               Catch::StartsWith("snap.yaml: document 1, items[0] (Pod ns/p): spec.priority: "
                                 "expected integer"));
  }
  SECTION("a document that is not an object") {
    CHECK(ParseError("- a\n- b\n") == "snap.yaml: document 1: expected an object");
  }
  SECTION("invalid YAML names the line") {
    CHECK_THAT(ParseError("kind: Node\nmetadata: {name: [\n"),
               Catch::StartsWith("snap.yaml: line"));
  }
}

TEST_CASE("empty input and empty documents", "[snapshot]") {
  Snapshot s = MustParse("");
  CHECK(s.nodes.empty());
  Snapshot t = MustParse("---\n---\nkind: Node\nmetadata: {name: n1}\n---\n");
  CHECK(t.nodes.size() == 1);
  // Documents are numbered as they appear in the file, empty ones included.
  CHECK_THAT(ParseError("kind: Node\nmetadata: {name: n1}\n---\n---\nkind: Pod\n"
                        "metadata: {name: p, namespace: ns}\nspec: {priority: x}\n"),
             Catch::StartsWith("snap.yaml: document 3 (Pod ns/p)"));
  // A leading "---" starts the first document; it is not a document of its own.
  CHECK_THAT(
      ParseError("---\nkind: Pod\nmetadata: {name: p, namespace: ns}\nspec: {priority: x}\n"),
      Catch::StartsWith("snap.yaml: document 1 (Pod ns/p)"));
}

TEST_CASE("LoadSnapshotFile", "[snapshot]") {
  const std::string path = capext::test::BinaryDir() + "/snapshot_test_input.yaml";
  {
    std::ofstream out(path);
    out << kMultiDocument;
  }
  Snapshot s;
  Status st = LoadSnapshotFile(path, DecodeOptions{}, &s);
  INFO(st.message());
  REQUIRE(st.ok());
  CHECK(s.pods.size() == 1);
  REQUIRE(s.notes.size() == 1);
  CHECK(s.notes[0] == path + ": document 4: skipped kind ConfigMap");

  Snapshot missing;
  Status m = LoadSnapshotFile(path + ".missing", DecodeOptions{}, &missing);
  REQUIRE_FALSE(m.ok());
  CHECK(m.message() == path + ".missing: cannot open");
}

}  // namespace
}  // namespace snapshot_test
}  // namespace capext
