// The protobuf Pod/Node decoder (config/object_protobuf_decoder.h) against the JSON decoder: every
// pod and node captured from a real kube-apiserver 1.26.1 in both encodings
// (tests/fixtures/kube-apiserver-protobuf/) decodes to the same record; hand-built messages give
// the fields 1.26 lacks and the JSON equivalents; malformed data is an error naming a field.
#include "config/object_protobuf_decoder.h"

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "config/object_stream_decoder.h"
#include "config/protobuf_wire.h"
#include "tests/support/object_decoding.h"
#include "tests/support/protobuf_writer.h"
#include "tests/support/test_paths.h"

namespace capext {
namespace object_protobuf_decoder_test {
namespace {

namespace fs = std::filesystem;
using testing::ProtoWriter;

const std::string kFixtures = capext::test::SourcePath("tests/fixtures/kube-apiserver-protobuf/");
constexpr std::string_view kAccel = "ti.cloud.tencent.com/gpu-type";

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// The raw of a "k8s\0" + runtime.Unknown envelope (runtime.Unknown.raw = 2).
std::string RawOf(const std::string& bytes) {
  REQUIRE(bytes.substr(0, 4) == std::string("k8s\0", 4));
  protobuf::WireReader reader(std::string_view(bytes).substr(4));
  protobuf::Field f;
  std::string raw;
  while (reader.Next(&f)) {
    if (f.number == 2) raw.assign(f.bytes);
  }
  REQUIRE(reader.ok());
  return raw;
}

struct Fixture {
  std::string name, json, raw;
};

// Every <name>.json / <name>.pb pair of a fixture folder ("pods", "nodes").
std::vector<Fixture> Fixtures(const std::string& folder) {
  std::vector<Fixture> out;
  std::set<std::string> names;
  for (const auto& entry : fs::directory_iterator(kFixtures + folder)) {
    if (entry.path().extension() == ".pb") names.insert(entry.path().stem().string());
  }
  for (const auto& name : names) {
    const fs::path base = fs::path(kFixtures + folder) / name;
    out.push_back(
        {name, ReadFile(base.string() + ".json"), RawOf(ReadFile(base.string() + ".pb"))});
  }
  return out;
}

DecodeOptions Options(bool accel) {
  DecodeOptions options;
  if (accel) options.accelerator_model_annotation = std::string(kAccel);
  return options;
}

// JSON and protobuf give the same verdict, message and record; returns the protobuf record.
Pod ExpectSamePod(const std::string& json, const std::string& raw, const DecodeOptions& options) {
  Pod from_json, from_proto;
  std::string kind;
  const Status j = DecodePodJson(json, options, &from_json, &kind);
  const Status p = DecodePodProtobuf(raw, options, &from_proto);
  INFO("JSON: " << (j.ok() ? testing::Text(from_json) : j.message()));
  INFO("protobuf: " << (p.ok() ? testing::Text(from_proto) : p.message()));
  CHECK(j.ok() == p.ok());
  if (j.ok() && p.ok()) CHECK(testing::Text(from_json) == testing::Text(from_proto));
  if (!j.ok() && !p.ok()) CHECK(j.message() == p.message());
  return from_proto;
}

Node ExpectSameNode(const std::string& json, const std::string& raw) {
  Node from_json, from_proto;
  std::string kind;
  const Status j = DecodeNodeJson(json, &from_json, &kind);
  const Status p = DecodeNodeProtobuf(raw, &from_proto);
  INFO("JSON: " << (j.ok() ? testing::Text(from_json) : j.message()));
  INFO("protobuf: " << (p.ok() ? testing::Text(from_proto) : p.message()));
  CHECK(j.ok() == p.ok());
  if (j.ok() && p.ok()) CHECK(testing::Text(from_json) == testing::Text(from_proto));
  if (!j.ok() && !p.ok()) CHECK(j.message() == p.message());
  return from_proto;
}

TEST_CASE("protobuf decoder: every captured pod decodes as its JSON does", "[protobuf]") {
  const std::vector<Fixture> pods = Fixtures("pods");
  REQUIRE(pods.size() >= 6);
  std::map<std::string, Pod> decoded;
  for (const auto& f : pods) {
    INFO(f.name);
    ExpectSamePod(f.json, f.raw, Options(false));
    decoded[f.name] = ExpectSamePod(f.json, f.raw, Options(true));
  }
  // The captures hold what the comparison is about (a decoder that dropped a field in both
  // paths alike would pass the comparison, not these).
  const Pod& multi = decoded.at("multi");
  CHECK(multi.ns == "capture");
  CHECK(multi.spec_priority == 1000);
  CHECK(multi.spec_preemption_policy == PreemptionPolicy::kNever);
  CHECK(multi.priority_class_name.str() == "capture-high");
  CHECK(multi.scheduler_name.str() == "capacity-scheduler");
  // max(init 2 cpu, 1.5 + 0.1) + overhead 250m; memory max(1Gi, 2G + 128Mi) + 64Mi.
  CHECK(multi.requests.Get("cpu") == 2250);
  CHECK(multi.requests.Get("memory") == int64_t{2000000000} + 134217728 + 67108864);
  CHECK(multi.requests.Get("nvidia.com/gpu") == 2);
  CHECK(multi.requests.Get("ephemeral-storage") == 536870912);
  CHECK(multi.tolerations.size() == 3);
  REQUIRE(multi.required_affinity.size() == 2);
  CHECK(multi.required_affinity[0].match_expressions.size() == 2);
  CHECK(multi.required_affinity[0].match_fields.size() == 1);
  CHECK(multi.node_selector.size() == 2);
  CHECK(multi.has_controller);
  CHECK(multi.group->name == "group-a");
  CHECK(multi.min_member_annotation == 3);
  CHECK(multi.admitted_ms == 1767323045000);
  CHECK(multi.reclaim_record.str() == "node-a@2026-01-02T03:04:05Z");
  CHECK(multi.accelerator_model.str() == "A100");
  CHECK(multi.patch_basis.has_annotations);
  CHECK(!multi.patch_basis.resource_version.empty());
  CHECK(multi.creation_ms > 0);
  const Pod& gated = decoded.at("gated");
  CHECK(gated.quota_gated);
  CHECK(gated.other_gates);
  CHECK(gated.patch_basis.quota_gate_index == 1);
  CHECK(gated.spec_priority == -5);
  CHECK(gated.min_member_annotation == 2);  // "Min-Member": the case-insensitive choice
  CHECK(gated.reclaim_record.str() == "node-b@2026-02-03T04:05:06Z");
  const Pod& bound = decoded.at("bound");
  CHECK(bound.node_name == "node-a");
  CHECK(bound.phase == PodPhase::kRunning);
  CHECK(bound.start_ms == 1767323045000);
  CHECK(bound.spec_preemption_policy == PreemptionPolicy::kPreemptLowerPriority);
  CHECK_FALSE(bound.unschedulable_condition);
  const Pod& unschedulable = decoded.at("unschedulable");
  CHECK(unschedulable.unschedulable_condition);
  CHECK(unschedulable.nominated_node_name.str() == "node-b");
  CHECK(decoded.at("terminating").terminating);
  CHECK_FALSE(multi.terminating);
  CHECK(decoded.at("plain").ns == "default");
}

TEST_CASE("protobuf decoder: every captured node decodes as its JSON does", "[protobuf]") {
  const std::vector<Fixture> nodes = Fixtures("nodes");
  REQUIRE(nodes.size() >= 2);
  std::map<std::string, Node> decoded;
  for (const auto& f : nodes) {
    INFO(f.name);
    decoded[f.name] = ExpectSameNode(f.json, f.raw);
  }
  const Node& a = decoded.at("node-a");
  CHECK(a.unschedulable);
  CHECK(a.taints.size() >= 2);
  CHECK(a.allocatable.Get("cpu") == 15500);
  CHECK(a.labels.size() == 4);
  const Node& b = decoded.at("node-b");
  CHECK_FALSE(b.unschedulable);
  CHECK(b.allocatable.Get("cpu") == 4000);  // capacity: no allocatable
}

// A Pod message: metadata {name = 1, namespace = 3}, then `spec` and `status` when not empty.
std::string PodMessage(const ProtoWriter& spec, const ProtoWriter& status = ProtoWriter()) {
  ProtoWriter pod;
  pod.Message(1, ProtoWriter().Bytes(1, "p").Bytes(3, "ns"));
  if (!spec.str().empty()) pod.Message(2, spec);
  if (!status.str().empty()) pod.Message(3, status);
  return pod.str();
}

ProtoWriter Container(std::string_view cpu) {
  return ProtoWriter().Bytes(1, "c").Message(8, ProtoWriter().QuantityEntry(2, "cpu", cpu));
}

TEST_CASE("protobuf decoder: fields newer than 1.26 read as their JSON", "[protobuf]") {
  // A sidecar (restartPolicy = 24 of an init container) and spec.workloadRef = 42.
  const std::string sidecars =
      PodMessage(ProtoWriter()
                     .Message(20, Container("1").Bytes(24, "Always"))
                     .Message(20, Container("3"))
                     .Message(2, Container("500m"))
                     .Message(42, ProtoWriter().Bytes(1, "w").Bytes(2, "workers").Bytes(3, "r1")));
  const std::string sidecars_json = R"({"metadata":{"name":"p","namespace":"ns"},"spec":{
      "initContainers":[{"name":"c","resources":{"requests":{"cpu":"1"}},"restartPolicy":"Always"},
                        {"name":"c","resources":{"requests":{"cpu":"3"}}}],
      "containers":[{"name":"c","resources":{"requests":{"cpu":"500m"}}}],
      "workloadRef":{"name":"w","podGroup":"workers","podGroupReplicaKey":"r1"}}})";
  const Pod pod = ExpectSamePod(sidecars_json, sidecars, Options(false));
  CHECK(pod.requests.Get("cpu") == 4000);  // max(1 + 0.5, 1 + 3)
  CHECK(pod.group->api_group == "scheduling.k8s.io");
  CHECK(pod.group->name == "w");
  CHECK(pod.group->pod_group == "workers");
  CHECK(pod.group->replica_key == "r1");

  // spec.resourceClaims (1.31 shape: name = 1, resourceClaimName = 3, template = 4; 1.26's
  // source = 2 is not read by either path) joined with status.resourceClaimStatuses = 15.
  const std::string claims = PodMessage(
      ProtoWriter()
          .Message(39, ProtoWriter().Bytes(1, "a").Bytes(3, "claim-a"))
          .Message(39, ProtoWriter().Bytes(1, "b").Bytes(4, "tmpl-b"))
          .Message(39, ProtoWriter().Bytes(1, "c").Bytes(4, "tmpl-c"))
          .Message(39, ProtoWriter().Bytes(1, "old").Message(2, ProtoWriter().Bytes(1, "x"))),
      ProtoWriter()
          .Message(15, ProtoWriter().Bytes(1, "b").Bytes(2, "b-generated"))
          .Message(15, ProtoWriter().Bytes(1, "c"))
          .Message(15, ProtoWriter().Bytes(1, "a").Bytes(2, "ignored")));
  const std::string claims_json = R"({"metadata":{"name":"p","namespace":"ns"},"spec":{
      "resourceClaims":[{"name":"a","resourceClaimName":"claim-a"},
                        {"name":"b","resourceClaimTemplateName":"tmpl-b"},
                        {"name":"c","resourceClaimTemplateName":"tmpl-c"},
                        {"name":"old","source":{"resourceClaimName":"x"}}]},
      "status":{"resourceClaimStatuses":[{"name":"b","resourceClaimName":"b-generated"},
                                         {"name":"c"},{"name":"a","resourceClaimName":"ignored"}]}})";
  const Pod with_claims = ExpectSamePod(claims_json, claims, Options(false));
  REQUIRE(with_claims.resource_claims.size() == 4);
  CHECK(with_claims.resource_claims[0].claim_name == "claim-a");
  CHECK(with_claims.resource_claims[1].claim_name == "b-generated");
  CHECK(with_claims.resource_claims[2].no_claim_needed);
  CHECK(with_claims.resource_claims[3].claim_name.empty());
}

TEST_CASE("protobuf decoder: times, maps, merges and annotation choice as the JSON path",
          "[protobuf]") {
  // Nanos are not in the JSON text; an empty Time is JSON's null; labels cut at a NUL.
  ProtoWriter meta;
  meta.Bytes(1, "p")
      .Message(8, ProtoWriter().Varint(1, 1767323045).Varint(2, 999000000))
      .Bytes(9, "")
      .Entry(11, std::string("a\0b", 3), std::string("x\0y", 3))
      .Entry(11, "k", "1")
      .Entry(11, "k", "2")
      .Entry(12, "SCHEDULING.capacity-extender.io/min-member", "4")
      .Entry(12, "scheduling.capacity-extender.io/MIN-member", "5");
  const std::string pod = ProtoWriter()
                              .Message(1, meta)
                              .Message(2, ProtoWriter().Bytes(10, "n1"))
                              .Message(2, ProtoWriter().Bytes(19, "s").Varint(25, 3))
                              .str();
  const std::string json = R"({"metadata":{"name":"p","creationTimestamp":"2026-01-02T03:04:05Z",
      "deletionTimestamp":null,"labels":{"a":"x","k":"2"},
      "annotations":{"SCHEDULING.capacity-extender.io/min-member":"4",
                     "scheduling.capacity-extender.io/MIN-member":"5"}},
      "spec":{"nodeName":"n1","schedulerName":"s","priority":3}})";
  const Pod decoded = ExpectSamePod(json, pod, Options(false));
  CHECK(decoded.creation_ms == 1767323045000);
  CHECK_FALSE(decoded.terminating);
  CHECK(decoded.min_member_annotation == 4);
  CHECK(decoded.node_name == "n1");
  CHECK(decoded.spec_priority == 3);
  CHECK(decoded.ns == "default");
  // A negative int32 (10-byte varint) and an absent quantity value (Go's zero: "0").
  const std::string negative = PodMessage(ProtoWriter()
                                              .Varint(25, static_cast<uint64_t>(int64_t{-7}))
                                              .Message(32, ProtoWriter().Bytes(1, "cpu")));
  const Pod n = ExpectSamePod(
      R"({"metadata":{"name":"p","namespace":"ns"},"spec":{"priority":-7,"overhead":{"cpu":"0"}}})",
      negative, Options(false));
  CHECK(n.spec_priority == -7);
}

TEST_CASE("protobuf decoder: content errors name the field as the JSON path does", "[protobuf]") {
  struct Case {
    std::string proto, json;
  };
  const Case cases[] = {
      {PodMessage(ProtoWriter().Message(2, Container("abc"))),
       R"({"metadata":{"name":"p","namespace":"ns"},"spec":{"containers":[{"name":"c","resources":{"requests":{"cpu":"abc"}}}]}})"},
      {PodMessage(ProtoWriter().Message(2, Container("1")).Message(2, Container("-1"))),
       R"({"metadata":{"name":"p","namespace":"ns"},"spec":{"containers":[{"name":"c","resources":{"requests":{"cpu":"1"}}},{"name":"c","resources":{"requests":{"cpu":"-1"}}}]}})"},
      {PodMessage(ProtoWriter().Message(20, Container("1x"))),
       R"({"metadata":{"name":"p","namespace":"ns"},"spec":{"initContainers":[{"name":"c","resources":{"requests":{"cpu":"1x"}}}]}})"},
      {PodMessage(ProtoWriter().QuantityEntry(32, "memory", "")),
       R"({"metadata":{"name":"p","namespace":"ns"},"spec":{"overhead":{"memory":""}}})"},
      {PodMessage(ProtoWriter().Bytes(31, "Sometimes")),
       R"({"metadata":{"name":"p","namespace":"ns"},"spec":{"preemptionPolicy":"Sometimes"}})"},
      // Both faults: the JSON path names the preemption policy first, whatever the order.
      {PodMessage(ProtoWriter().Message(2, Container("abc")).Bytes(31, "Sometimes")),
       R"({"metadata":{"name":"p","namespace":"ns"},"spec":{"containers":[{"name":"c","resources":{"requests":{"cpu":"abc"}}}],"preemptionPolicy":"Sometimes"}})"},
      {ProtoWriter().Message(2, ProtoWriter().Bytes(10, "n")).str(),
       R"({"spec":{"nodeName":"n"}})"},
      {"", "{}"},
  };
  for (const auto& c : cases) {
    INFO(c.json);
    Pod sentinel;
    sentinel.name = "unchanged";
    Pod from_proto = sentinel;
    std::string kind;
    Pod from_json;
    const Status j = DecodePodJson(c.json, {}, &from_json, &kind);
    const Status p = DecodePodProtobuf(c.proto, {}, &from_proto);
    REQUIRE_FALSE(j.ok());
    REQUIRE_FALSE(p.ok());
    CHECK(p.message() == j.message());
    CHECK(testing::Text(from_proto) == testing::Text(sentinel));
  }
  // Nodes: allocatable is checked before capacity, though capacity comes first on the wire.
  const std::string node =
      ProtoWriter()
          .Message(1, ProtoWriter().Bytes(1, "n"))
          .Message(3, ProtoWriter().QuantityEntry(1, "cpu", "-1").QuantityEntry(2, "cpu", "zz"))
          .str();
  Node from_json, from_proto;
  std::string kind;
  const Status j = DecodeNodeJson(
      R"({"metadata":{"name":"n"},"status":{"capacity":{"cpu":"-1"},"allocatable":{"cpu":"zz"}}})",
      &from_json, &kind);
  const Status p = DecodeNodeProtobuf(node, &from_proto);
  REQUIRE_FALSE(p.ok());
  CHECK(p.message() == j.message());
  CHECK(p.message().rfind("status.allocatable.cpu: ", 0) == 0);
}

TEST_CASE("protobuf decoder: malformed wire data is an error naming the field", "[protobuf]") {
  struct Case {
    std::string bytes;
    std::string prefix;  // the error message starts with it
  };
  const std::string meta = ProtoWriter().Message(1, ProtoWriter().Bytes(1, "p")).str();
  const Case cases[] = {
      {ProtoWriter().Varint(1, 5).str(), "metadata: protobuf wire type 0"},
      {meta + ProtoWriter().Message(2, ProtoWriter().Varint(10, 1)).str(), "spec.nodeName: "},
      {meta + ProtoWriter()
                  .Message(2, ProtoWriter().Message(
                                  2, ProtoWriter().Message(8, ProtoWriter().Varint(2, 1))))
                  .str(),
       "spec.containers[0].resources.requests: "},
      {meta + ProtoWriter()
                  .Message(2, ProtoWriter()
                                  .Message(2, ProtoWriter())
                                  .Message(2, ProtoWriter().Message(
                                                  8, ProtoWriter().Message(
                                                         2, ProtoWriter().Bytes(1, "cpu").Varint(
                                                                2, 1)))))
                  .str(),
       "spec.containers[1].resources.requests: "},
      {meta + ProtoWriter().Message(2, ProtoWriter().Bytes(25, "x")).str(), "spec.priority: "},
      {meta + ProtoWriter().Message(3, ProtoWriter().Message(7, ProtoWriter().Bytes(1, "x"))).str(),
       "status.startTime.seconds: "},
      {meta + ProtoWriter().Message(2, ProtoWriter().Message(22, ProtoWriter().Varint(4, 1))).str(),
       "spec.tolerations[0].effect: "},
      {meta + ProtoWriter().Message(2, ProtoWriter().Raw(ProtoWriter::Tag(18, 2) + "\x7f")).str(),
       "spec: truncated"},
      {meta + ProtoWriter::Tag(2, 2) + ProtoWriter::VarintBytes(uint64_t{1} << 62),
       "Pod: truncated"},
      {meta + ProtoWriter::Tag(5, 3), "Pod: protobuf group"},
      {meta + ProtoWriter::Tag(0, 0) + "\x01", "Pod: protobuf field number 0"},
      {meta + std::string(11, '\xff'), "Pod: "},
      {ProtoWriter().Message(1, ProtoWriter().Raw(ProtoWriter::Tag(12, 2) + "\x02\x0a")).str(),
       "metadata: truncated"},
      {ProtoWriter()
           .Message(1, ProtoWriter().Message(12, ProtoWriter().Raw("\x0a\x05"
                                                                   "ab")))
           .str(),
       "metadata.annotations: truncated"},
  };
  for (const auto& c : cases) {
    INFO(c.prefix);
    Pod pod;
    const Status s = DecodePodProtobuf(c.bytes, {}, &pod);
    REQUIRE_FALSE(s.ok());
    CHECK(s.message().rfind(c.prefix, 0) == 0);
    CHECK((s.message().find(" at byte ") != std::string::npos ||
           s.message().find("wire type") != std::string::npos));
  }
  Node node;
  const Status s = DecodeNodeProtobuf(
      meta + ProtoWriter().Message(2, ProtoWriter().Bytes(4, "yes")).str(), &node);
  REQUIRE_FALSE(s.ok());
  CHECK(s.message().rfind("spec.unschedulable: ", 0) == 0);
}

// The offsets at which a message's top-level fields start (and its end).
std::set<size_t> FieldStarts(std::string_view message) {
  std::set<size_t> starts = {0, message.size()};
  protobuf::WireReader reader(message);
  protobuf::Field f;
  while (reader.Next(&f))
    starts.insert(reader.offset());
  return starts;
}

TEST_CASE("protobuf decoder: captured objects cut at every byte fail cleanly", "[protobuf]") {
  const DecodeOptions options = Options(true);
  int errors = 0;
  for (const auto& f : Fixtures("pods")) {
    const std::set<size_t> starts = FieldStarts(f.raw);
    for (size_t cut = 0; cut < f.raw.size(); ++cut) {
      Pod pod;
      pod.name = "unchanged";
      const Status s = DecodePodProtobuf(std::string_view(f.raw).substr(0, cut), options, &pod);
      // A cut between two top-level fields leaves a valid (smaller) Pod; any other is malformed.
      if (cut == 0 || !starts.count(cut)) {
        INFO(f.name << " cut at " << cut);
        REQUIRE_FALSE(s.ok());
        CHECK_FALSE(s.message().empty());
        CHECK(pod.name == "unchanged");
        ++errors;
      }
      // A flipped byte: any verdict, never a crash.
      std::string flipped = f.raw;
      flipped[cut] = static_cast<char>(flipped[cut] ^ 0x5A);
      Pod other;
      (void)DecodePodProtobuf(flipped, options, &other);
    }
  }
  for (const auto& f : Fixtures("nodes")) {
    const std::set<size_t> starts = FieldStarts(f.raw);
    for (size_t cut = 0; cut < f.raw.size(); ++cut) {
      Node node;
      node.name = "unchanged";
      const Status s = DecodeNodeProtobuf(std::string_view(f.raw).substr(0, cut), &node);
      if (cut == 0 || !starts.count(cut)) {
        INFO(f.name << " cut at " << cut);
        REQUIRE_FALSE(s.ok());
        CHECK(node.name == "unchanged");
        ++errors;
      }
    }
  }
  CHECK(errors > 5000);
}

}  // namespace
}  // namespace object_protobuf_decoder_test
}  // namespace capext
