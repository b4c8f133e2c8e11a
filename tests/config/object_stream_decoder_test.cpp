// The streaming Pod/Node decoder against the DOM path it replaces: every object found in the
// real API-server captures and in our fixtures decodes to the same record both ways, and so do
// malformed, oddly cased, duplicated and mutated inputs (same verdict; same record when ok).
#include "config/object_stream_decoder.h"

#include <rapidjson/reader.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "config/yaml_json.h"
#include "tests/support/object_decoding.h"
#include "tests/support/test_paths.h"

namespace capext {
namespace object_stream_decoder_test {
namespace {

namespace fs = std::filesystem;

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string Serialize(const rapidjson::Value& value) {
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
  value.Accept(writer);
  return std::string(buffer.GetString(), buffer.GetSize());
}

// Every object value anywhere in `value`, as JSON text.
void CollectObjects(const rapidjson::Value& value, std::set<std::string>* out) {
  if (value.IsObject()) {
    out->insert(Serialize(value));
    for (auto m = value.MemberBegin(); m != value.MemberEnd(); ++m)
      CollectObjects(m->value, out);
  } else if (value.IsArray()) {
    for (const auto& v : value.GetArray())
      CollectObjects(v, out);
  }
}

// Every JSON object embedded in a capture (request and response bodies, watch stream lines).
void CollectFromCapture(const std::string& text, std::set<std::string>* out) {
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '{') continue;
    rapidjson::StringStream stream(text.c_str() + i);
    rapidjson::BaseReaderHandler<> ignore;
    rapidjson::Reader reader;
    if (!reader.Parse<rapidjson::kParseStopWhenDoneFlag>(stream, ignore)) continue;
    const size_t length = stream.Tell();
    rapidjson::Document doc;
    doc.Parse(text.c_str() + i, length);
    if (doc.HasParseError()) continue;
    CollectObjects(doc, out);
    i += length - 1;
  }
}

std::set<std::string> FixtureObjects() {
  std::set<std::string> objects;
  const fs::path captures = fs::path(capext::test::SourcePath("tests/fixtures/kube-apiserver"));
  for (const auto& entry : fs::directory_iterator(captures)) {
    if (entry.is_regular_file()) CollectFromCapture(ReadFile(entry.path()), &objects);
  }
  // Our own manifests; the captures are read above (kube-apiserver's) or are extender traffic
  // (kube-scheduler's, whose objects the wire tests cover).
  for (auto it = fs::recursive_directory_iterator(capext::test::SourcePath("tests/fixtures"));
       it != fs::recursive_directory_iterator(); ++it) {
    const fs::directory_entry& entry = *it;
    const std::string name = entry.path().filename().string();
    if (entry.is_directory() && (name == "kube-apiserver" || name == "kube-scheduler")) {
      it.disable_recursion_pending();
      continue;
    }
    if (!entry.is_regular_file()) continue;
    const std::string ext = entry.path().extension().string();
    if (ext != ".yaml" && ext != ".json") continue;
    std::vector<rapidjson::Document> docs;
    if (!ParseYamlDocuments(ReadFile(entry.path()), &docs).ok()) continue;
    for (const auto& doc : docs)
      CollectObjects(doc, &objects);
  }
  return objects;
}

struct Comparison {
  bool same = false;
  bool ok = false;  // both decoded
  std::string detail;
};

template <class Record>
Comparison Compare(const std::string& json, const DecodeOptions& options) {
  Record dom_record, sax_record;
  std::string dom_kind = std::is_same_v<Record, Pod> ? "Pod" : "Node";
  std::string sax_kind;
  Status dom = testing::DomDecode(json, options, &dom_record, &dom_kind);
  Status sax;
  if constexpr (std::is_same_v<Record, Pod>) {
    sax = DecodePodJson(json, options, &sax_record, &sax_kind);
  } else {
    sax = DecodeNodeJson(json, &sax_record, &sax_kind);
  }
  Comparison c;
  c.ok = dom.ok() && sax.ok();
  c.same = dom.ok() == sax.ok() &&
           (!dom.ok() ||
            (testing::Text(dom_record) == testing::Text(sax_record) && dom_kind == sax_kind));
  c.detail = "input: " + json + "\nDOM: " + (dom.ok() ? testing::Text(dom_record) : dom.message()) +
             "\nSAX: " + (sax.ok() ? testing::Text(sax_record) : sax.message());
  return c;
}

// Both kinds, with and without the accelerator annotation option.
void ExpectSame(const std::string& json, int* pods_ok = nullptr, int* nodes_ok = nullptr) {
  DecodeOptions plain, accel;
  accel.accelerator_model_annotation = "ti.cloud.tencent.com/gpu-type";
  for (const DecodeOptions* options : {&plain, &accel}) {
    Comparison pod = Compare<Pod>(json, *options);
    INFO(pod.detail);
    CHECK(pod.same);
    if (pods_ok && pod.ok && options == &plain) ++*pods_ok;
  }
  Comparison node = Compare<Node>(json, {});
  INFO(node.detail);
  CHECK(node.same);
  if (nodes_ok && node.ok) ++*nodes_ok;
}

bool IsKind(const std::string& json, const char* kind) {
  return json.find(std::string("\"kind\":\"") + kind + "\"") != std::string::npos;
}

TEST_CASE("stream decoder: every object of the captures and fixtures decodes as the DOM does",
          "[codec]") {
  const std::set<std::string> objects = FixtureObjects();
  int pods_ok = 0, nodes_ok = 0, real_pods = 0, real_nodes = 0;
  for (const auto& json : objects) {
    ExpectSame(json, &pods_ok, &nodes_ok);
    if (IsKind(json, "Pod")) ++real_pods;
    if (IsKind(json, "Node")) ++real_nodes;
  }
  // The comparison must have covered real pods and nodes, not only rejections.
  CHECK(objects.size() > 500);
  CHECK(real_pods >= 20);
  CHECK(real_nodes >= 1);
  CHECK(pods_ok >= real_pods);
  CHECK(nodes_ok >= real_nodes);
}

TEST_CASE("stream decoder: truncated and corrupted fixture pods give the DOM's verdict",
          "[codec]") {
  std::vector<std::string> pods;
  for (const auto& json : FixtureObjects()) {
    if (IsKind(json, "Pod") && pods.size() < 12) pods.push_back(json);
  }
  REQUIRE(!pods.empty());
  const std::string replacements[] = {"", "1", "null", "\"x\"", "{}", "[]", "-1", "\"-1\""};
  for (const auto& pod : pods) {
    for (size_t at = 0; at < pod.size(); at += 7) {
      ExpectSame(pod.substr(0, at));                                // truncated
      ExpectSame(pod.substr(0, at) + "\x01" + pod.substr(at + 1));  // a stray byte
      // A value replaced: after a ':' swap the next scalar or container for another type.
      if (pod[at] == ':') {
        const std::string& r = replacements[at % std::size(replacements)];
        size_t end = at + 1;
        if (pod[end] == '"') {
          end = pod.find('"', end + 1) + 1;
        } else {
          while (end < pod.size() && pod[end] != ',' && pod[end] != '}')
            ++end;
        }
        ExpectSame(pod.substr(0, at + 1) + r + pod.substr(end));
      }
    }
  }
}

TEST_CASE("stream decoder: member choice, nulls, case, duplicates and NULs as Go and the DOM",
          "[codec]") {
  const char* cases[] = {
      // Minimal and missing pieces.
      R"({"metadata":{"name":"p"}})",
      R"({})",
      R"({"metadata":null})",
      R"({"metadata":[]})",
      R"([])",
      R"("text")",
      R"({"metadata":{"name":"p"}} x)",
      R"({"metadata":{"name":"p"})",
      "\xEF\xBB\xBF{\"metadata\":{\"name\":\"p\"}}",
      // Case-insensitive members; an exact match wins wherever it comes; null is absent.
      R"({"Metadata":{"Name":"a","NAMESPACE":"ns"},"metadata":{"name":"b"}})",
      R"({"metadata":{"name":"b"},"METADATA":{"name":"c"}})",
      R"({"metadata":{"name":"p"},"Spec":{"nodeName":"n1"},"spec":null})",
      R"({"metadata":{"name":"p"},"spec":{"nodeName":"n1"},"spec":{"nodeName":"n2"}})",
      R"({"metadata":{"name":"p"},"spec":{"NodeName":5,"nodeName":"n1"}})",
      R"({"metadata":{"name":"p"},"spec":{"nodeName":"n1","NodeName":5}})",
      R"({"metadata":{"name":"p"},"spec":{"nodeName":5,"nodeName":"n1"}})",
      R"({"kind":"Pod","Kind":7,"metadata":{"name":"p"}})",
      R"({"kind":7,"metadata":{"name":"p"}})",
      R"({"kind":"Node","apiVersion":"v1","metadata":{"name":"n"}})",
      R"({"apiVersion":["v1"],"metadata":{"name":"p"}})",
      // Labels: every member read, null skipped, last duplicate wins, keys cut at a NUL.
      R"({"metadata":{"name":"p","labels":{"a":"1","a":"2","b":null,"c\u0000d":"x\u0000y"}}})",
      R"({"metadata":{"name":"p","labels":{"a":1}}})",
      R"({"metadata":{"name":"p","labels":"a"}})",
      R"({"metadata":{"name":"p","Labels":{"x":"1"},"labels":{"y":"2"}}})",
      // managedFields is never read, even malformed-looking or oddly cased.
      R"({"metadata":{"name":"p","managedFields":[{"manager":"k","fieldsV1":{"f:spec":{}}}],"uid":"u"}})",
      R"({"metadata":{"name":"p","ManagedFields":7,"labels":{"managedFields":"kept"}}})",
      R"({"spec":{"metadata":{"managedFields":1}},"metadata":{"name":"p"}})",
      // Times, numbers, quantities.
      R"({"metadata":{"name":"p","creationTimestamp":"2026-01-01T00:00:00Z"}})",
      R"({"metadata":{"name":"p","creationTimestamp":"yesterday"}})",
      R"({"metadata":{"name":"p","creationTimestamp":""}})",
      R"({"metadata":{"name":"p","deletionTimestamp":"2026-01-01T00:00:00.5+01:00"}})",
      R"({"metadata":{"name":"p"},"spec":{"priority":2147483647}})",
      R"({"metadata":{"name":"p"},"spec":{"priority":2147483648}})",
      R"({"metadata":{"name":"p"},"spec":{"priority":-2147483648}})",
      R"({"metadata":{"name":"p"},"spec":{"priority":1.0}})",
      R"({"metadata":{"name":"p"},"spec":{"priority":"12"}})",
      R"({"metadata":{"name":"p"},"spec":{"priority":"12x"}})",
      R"({"metadata":{"name":"p"},"spec":{"priority":true}})",
      R"({"metadata":{"name":"p"},"spec":{"containers":[{"resources":{"requests":{"cpu":"500m","memory":1073741824,"x":1.5,"y":18446744073709551615,"z":-0,"w":null}}}]}})",
      R"({"metadata":{"name":"p"},"spec":{"containers":[{"resources":{"requests":{"cpu":"-1"}}}]}})",
      R"({"metadata":{"name":"p"},"spec":{"containers":[{"resources":{"requests":{"cpu":"abc"}}}]}})",
      R"({"metadata":{"name":"p"},"spec":{"containers":[{"resources":{"requests":{"cpu":true}}}]}})",
      R"({"metadata":{"name":"p"},"spec":{"containers":[{"resources":{"requests":{"cpu":1e308}}}]}})",
      R"({"metadata":{"name":"p"},"spec":{"containers":[null]}})",
      R"({"metadata":{"name":"p"},"spec":{"containers":{}}})",
      R"({"metadata":{"name":"p"},"spec":{"containers":[{"resources":[]}]}})",
      R"({"metadata":{"name":"p"},"spec":{"containers":[{"resources":{"requests":{"cpu":"1"}},"Resources":{"requests":{"cpu":"2"}}}]}})",
      R"({"metadata":{"name":"p"},"spec":{"initContainers":[{"restartPolicy":"Always","resources":{"requests":{"cpu":"1"}}},{"resources":{"requests":{"cpu":"3"}}}],"containers":[{"resources":{"requests":{"cpu":"1"}}}],"overhead":{"cpu":"100m"}}})",
      R"({"metadata":{"name":"p"},"spec":{"overhead":{"cpu":"-1"}}})",
      // Scheduling constraints.
      R"({"metadata":{"name":"p"},"spec":{"preemptionPolicy":"Never"}})",
      R"({"metadata":{"name":"p"},"spec":{"preemptionPolicy":"Sometimes"}})",
      R"({"metadata":{"name":"p"},"spec":{"preemptionPolicy":""}})",
      R"({"metadata":{"name":"p"},"spec":{"tolerations":[{"key":"k","operator":"Exists","effect":"NoSchedule"},{"Key":"a","key":"b"}]}})",
      R"({"metadata":{"name":"p"},"spec":{"tolerations":[1]}})",
      R"({"metadata":{"name":"p"},"spec":{"tolerations":[{"value":1}]}})",
      R"({"metadata":{"name":"p"},"spec":{"affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[{"matchExpressions":[{"key":"zone","operator":"In","values":["a","b"]}],"matchFields":[{"key":"metadata.name","operator":"In","values":["n1"]}]},{}]}}}}})",
      R"({"metadata":{"name":"p"},"spec":{"affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[{"matchExpressions":[{"key":"zone","operator":"In","values":["a"]}]}]},"RequiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[{}]}}}}})",
      R"({"metadata":{"name":"p"},"spec":{"affinity":{"NodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[{}]}},"nodeAffinity":null}}})",
      R"({"metadata":{"name":"p"},"spec":{"affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[{"matchExpressions":[{"values":[1]}]}]}}}}})",
      R"({"metadata":{"name":"p"},"spec":{"affinity":{"nodeAffinity":[]}}})",
      R"({"metadata":{"name":"p"},"spec":{"affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":{}}}}}})",
      R"({"metadata":{"name":"p"},"spec":{"nodeSelector":{"disk":"ssd","x":null}}})",
      // Status.
      R"({"metadata":{"name":"p"},"status":{"phase":"Running","startTime":"2026-01-01T00:00:01Z","nominatedNodeName":"n2"}})",
      R"({"metadata":{"name":"p"},"status":{"conditions":[1,{"type":"PodScheduled","status":"False","reason":"Unschedulable"}]}})",
      R"({"metadata":{"name":"p"},"status":{"conditions":[{"type":"PodScheduled","status":"False","reason":"Unschedulable","Reason":"x"}]}})",
      R"({"metadata":{"name":"p"},"status":{"conditions":[{"type":"PodScheduled","status":"False","reason":5}]}})",
      R"({"metadata":{"name":"p"},"status":{"conditions":{}}})",
      R"({"metadata":{"name":"p"},"status":[]})",
      R"({"metadata":{"name":"p","annotations":{"ti.cloud.tencent.com/gpu-type":"V100"}}})",
      R"({"metadata":{"name":"p","annotations":{"ti.cloud.tencent.com/gpu-type":7}}})",
      R"({"metadata":{"name":"p","annotations":{"TI.cloud.tencent.com/GPU-type":"A100"}}})",
      R"({"metadata":{"name":"p","annotations":[]}})",
      R"({"metadata":{"name":"p","annotations":{"scheduling.capacity-extender.io/reclaim":"n2@t"}}})",
      R"({"metadata":{"name":"p","annotations":{"scheduling.capacity-extender.io/reclaim":null}}})",
      R"({"metadata":{"name":"p","annotations":{"scheduling.capacity-extender.io/reclaim":1}}})",
      R"({"metadata":{"name":"p","annotations":{"a":"b","scheduling.capacity-extender.io/reclaim":"x","ti.cloud.tencent.com/gpu-type":"V100"}}})",
      // Nodes.
      R"({"kind":"Node","metadata":{"name":"n","namespace":7,"uid":[]},"spec":{"unschedulable":"true","taints":[{"key":"k","effect":"NoSchedule"}]},"status":{"capacity":{"cpu":"8"},"allocatable":{"cpu":"7"}}})",
      R"({"kind":"Node","metadata":{"name":"n"},"status":{"capacity":{"cpu":"8"},"allocatable":{}}})",
      R"({"kind":"Node","metadata":{"name":"n"},"status":{"capacity":{"cpu":"8"}}})",
      R"({"kind":"Node","metadata":{"name":"n"},"spec":{"unschedulable":1}})",
      R"({"kind":"Node","metadata":{"name":"n"},"spec":{"taints":[{"key":1}]}})",
      R"({"kind":"Node","metadata":{"name":"n"},"status":{"allocatable":{"cpu":"-1"}}})",
  };
  for (const char* json : cases)
    ExpectSame(json);
}

TEST_CASE("stream decoder: what it reads, spelled out", "[codec]") {
  Pod pod;
  std::string kind;
  REQUIRE(DecodePodJson(
              R"({"kind":"Pod","metadata":{"name":"p","namespace":"ns","uid":"u1",)"
              R"("managedFields":[{"manager":"kubectl"}],"labels":{"app":"a"}},)"
              R"("spec":{"schedulerName":"capacity-scheduler","containers":[{"resources":)"
              R"({"requests":{"cpu":"1500m","memory":"1Gi"}}}]},"status":{"phase":"Pending"}})",
              {}, &pod, &kind)
              .ok());
  CHECK(kind == "Pod");
  CHECK(pod.Key() == "ns/p");
  CHECK(pod.uid == "u1");
  CHECK(pod.requests.Get("cpu") == 1500);
  CHECK(pod.scheduler_name == "capacity-scheduler");
  CHECK(pod.labels.count("app") == 1);

  Status bad = DecodePodJson(R"({"metadata":{"name":"p"},"spec":{"containers":[{"resources":)"
                             R"({"requests":{"cpu":"abc"}}}]}})",
                             {}, &pod, &kind);
  REQUIRE(!bad.ok());
  CHECK(bad.message().find("spec.containers[0].resources.requests.cpu") != std::string::npos);
  CHECK(!DecodePodJson("{\"metadata\":", {}, &pod, &kind).ok());
  CHECK(pod.Key() == "ns/p");  // unchanged by failures
}

}  // namespace
}  // namespace object_stream_decoder_test
}  // namespace capext
