// ParseProtobufObject / ParseProtobufWatchEvent / ParseApiStatus (protobuf bodies) against what a
// real kube-apiserver 1.26.1 sent (tests/fixtures/kube-apiserver-protobuf/), and hand-built or
// damaged envelopes.
#include "extender/kube/protobuf_envelopes.h"

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "config/object_protobuf_decoder.h"
#include "config/object_stream_decoder.h"
#include "extender/kube/api_envelopes.h"
#include "tests/support/object_decoding.h"
#include "tests/support/protobuf_writer.h"
#include "tests/support/test_paths.h"

namespace capext::kube {
namespace protobuf_envelopes_test {
namespace {

namespace fs = std::filesystem;
using capext::testing::ProtoWriter;

const std::string kFixtures = capext::test::SourcePath("tests/fixtures/kube-apiserver-protobuf/");

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// The frames of a protobuf watch stream: each a 4-byte big-endian length and that many bytes.
std::vector<std::string> Frames(const std::string& stream) {
  std::vector<std::string> frames;
  size_t pos = 0;
  while (pos + 4 <= stream.size()) {
    const auto byte = [&](size_t i) {
      return static_cast<uint32_t>(static_cast<uint8_t>(stream[pos + i]));
    };
    const uint32_t length = byte(0) << 24 | byte(1) << 16 | byte(2) << 8 | byte(3);
    REQUIRE(pos + 4 + length <= stream.size());
    frames.push_back(stream.substr(pos + 4, length));
    pos += 4 + length;
  }
  REQUIRE(pos == stream.size());
  return frames;
}

// "k8s\0" + runtime.Unknown {typeMeta = 1 {apiVersion = 1, kind = 2}, raw = 2}.
std::string Envelope(std::string_view kind, const std::string& raw) {
  return std::string(kProtobufMagic) + ProtoWriter()
                                           .Message(1, ProtoWriter().Bytes(1, "v1").Bytes(2, kind))
                                           .Bytes(2, raw)
                                           .Bytes(3, "")
                                           .Bytes(4, "")
                                           .str();
}

TEST_CASE("protobuf envelopes: every captured object is a v1 object in its envelope",
          "[protobuf]") {
  int objects = 0;
  for (const char* folder : {"pods", "nodes"}) {
    for (const auto& entry : fs::directory_iterator(kFixtures + folder)) {
      if (entry.path().extension() != ".pb") continue;
      INFO(entry.path().string());
      const std::string bytes = ReadFile(entry.path().string());
      ProtobufObject object;
      REQUIRE(ParseProtobufObject(bytes, &object).ok());
      CHECK(object.api_version == "v1");
      CHECK(object.kind == (std::string_view(folder) == "pods" ? "Pod" : "Node"));
      CHECK(!object.raw.empty());
      CHECK(object.raw.data() >= bytes.data());  // a view into the input
      CHECK(object.raw.data() + object.raw.size() <= bytes.data() + bytes.size());
      ++objects;
    }
  }
  CHECK(objects >= 8);
}

TEST_CASE("protobuf envelopes: the captured watch stream, frame by frame", "[protobuf]") {
  const std::string headers = ReadFile(kFixtures + "watch-pods.headers.txt");
  CHECK(headers.find("application/vnd.kubernetes.protobuf;stream=watch") != std::string::npos);
  const std::vector<std::string> frames = Frames(ReadFile(kFixtures + "watch-pods.pb"));
  REQUIRE(frames.size() >= 3);
  std::vector<std::string> types;
  uint64_t last_version = 0;
  for (const auto& frame : frames) {
    // A frame is a bare WatchEvent (no magic); its object is enveloped.
    CHECK(frame.substr(0, 4) != std::string(kProtobufMagic));
    ProtobufWatchEvent event;
    const Status s = ParseProtobufWatchEvent(frame, &event);
    INFO(s.message());
    REQUIRE(s.ok());
    ProtobufObject object;
    REQUIRE(ParseProtobufObject(event.object, &object).ok());
    CHECK(object.kind == "Pod");
    // The event carries its object's envelope parsed: the same kind and message.
    CHECK(event.contents.kind == object.kind);
    CHECK(event.contents.raw == object.raw);
    CHECK(!event.resource_version.empty());
    // A bookmark may repeat the last event's version (captured: it does).
    const uint64_t version = std::stoull(event.resource_version);
    CHECK((event.type == "BOOKMARK" ? version >= last_version : version > last_version));
    last_version = version;
    if (event.type == "BOOKMARK") continue;
    types.push_back(event.type);
    Pod pod;
    REQUIRE(DecodePodProtobuf(object.raw, {}, &pod).ok());
    CHECK(pod.name == "watched");
    CHECK(pod.patch_basis.resource_version == event.resource_version);
    CHECK(pod.requests.Get("cpu") == 300);
  }
  // Created, labelled, then force-deleted (which kube-apiserver 1.26 sends as a MODIFIED setting
  // deletionTimestamp, then DELETED).
  REQUIRE(types.size() >= 3);
  CHECK(types.front() == "ADDED");
  CHECK(types[1] == "MODIFIED");
  CHECK(types.back() == "DELETED");
}

TEST_CASE("protobuf envelopes: a captured LIST page holds the JSON page's pods", "[protobuf]") {
  ListPage json;
  REQUIRE(ParseListPage(ReadFile(kFixtures + "list-pods-limit2.json"), &json).ok());
  const std::string bytes = ReadFile(kFixtures + "list-pods-limit2.pb");
  ProtobufObject object;
  REQUIRE(ParseProtobufObject(bytes, &object).ok());
  CHECK(object.kind == "PodList");
  ProtobufListPage page;
  REQUIRE(ParseProtobufListPage(object.raw, &page).ok());
  CHECK(page.resource_version == json.resource_version);
  CHECK(!page.continue_token.empty());
  CHECK(page.continue_token == json.continue_token);
  REQUIRE(page.items.size() == 2);
  REQUIRE(json.items.size() == 2);
  for (size_t i = 0; i < 2; ++i) {
    Pod from_json, from_proto;
    std::string kind;
    REQUIRE(DecodePodJson(json.items[i], {}, &from_json, &kind).ok());
    REQUIRE(DecodePodProtobuf(page.items[i], {}, &from_proto).ok());
    CHECK(capext::testing::Text(from_json) == capext::testing::Text(from_proto));
  }
  // Malformed lists.
  CHECK_FALSE(ParseProtobufListPage(ProtoWriter().Varint(2, 1).str(), &page).ok());
  CHECK_FALSE(
      ParseProtobufListPage(ProtoWriter().Message(1, ProtoWriter().Varint(2, 1)).str(), &page)
          .ok());
  CHECK_FALSE(ParseProtobufListPage(object.raw.substr(0, object.raw.size() - 1), &page).ok());
}

TEST_CASE("protobuf envelopes: a watch from a compacted version gets one ERROR 410 Status",
          "[protobuf]") {
  const std::vector<std::string> frames = Frames(ReadFile(kFixtures + "watch-too-old.pb"));
  REQUIRE(frames.size() == 1);
  ProtobufWatchEvent event;
  REQUIRE(ParseProtobufWatchEvent(frames[0], &event).ok());
  CHECK(event.type == "ERROR");
  CHECK(event.resource_version.empty());
  ProtobufObject object;
  REQUIRE(ParseProtobufObject(event.object, &object).ok());
  CHECK(object.kind == "Status");
  ApiStatus status;
  REQUIRE(ParseApiStatus(event.object, &status));
  CHECK(status.code == 410);
  CHECK(status.status == "Failure");
  CHECK(status.reason == "Expired");
  CHECK(status.message.find("too old resource version") != std::string::npos);
}

TEST_CASE("protobuf envelopes: a 404 body in protobuf is a Status", "[protobuf]") {
  const std::string body = ReadFile(kFixtures + "get-missing-pod-404.pb");
  CHECK(ReadFile(kFixtures + "get-missing-pod-404.headers.txt").find("404") != std::string::npos);
  ApiStatus status;
  REQUIRE(ParseApiStatus(body, &status));
  CHECK(status.code == 404);
  CHECK(status.reason == "NotFound");
  CHECK(status.status == "Failure");
  CHECK(status.message.find("missing") != std::string::npos);
}

TEST_CASE("protobuf envelopes: a Status with causes and retryAfterSeconds", "[protobuf]") {
  const std::string status_message =
      ProtoWriter()
          .Message(1, ProtoWriter().Bytes(2, "12"))
          .Bytes(2, "Failure")
          .Bytes(3, "Timeout: Too large resource version")
          .Bytes(4, "Timeout")
          .Message(5, ProtoWriter()
                          .Message(4, ProtoWriter()
                                          .Bytes(1, "ResourceVersionTooLarge")
                                          .Bytes(2, "Too large resource version")
                                          .Bytes(3, "field"))
                          .Message(4, ProtoWriter().Bytes(2, "second"))
                          .Varint(5, 1)
                          .Bytes(6, "uid"))
          .Varint(6, 504)
          .str();
  ApiStatus status;
  REQUIRE(ParseApiStatus(Envelope("Status", status_message), &status));
  CHECK(status.code == 504);
  CHECK(status.status == "Failure");
  CHECK(status.reason == "Timeout");
  CHECK(status.message == "Timeout: Too large resource version");
  REQUIRE(status.causes.size() == 2);
  CHECK(status.causes[0].first == "ResourceVersionTooLarge");
  CHECK(status.causes[0].second == "Too large resource version");
  CHECK(status.causes[1].first.empty());
  CHECK(status.causes[1].second == "second");
  CHECK(status.retry_after_seconds == 1);
  // Another kind, a missing magic, malformed data: not a Status; *out untouched.
  ApiStatus untouched;
  untouched.code = 7;
  CHECK_FALSE(ParseApiStatus(Envelope("Pod", status_message), &untouched));
  CHECK_FALSE(ParseApiStatus(Envelope("Status", status_message).substr(4), &untouched));
  const std::string whole = Envelope("Status", status_message);
  for (size_t cut = 4; cut < whole.size(); ++cut) {
    ApiStatus partial;
    (void)ParseApiStatus(std::string_view(whole).substr(0, cut), &partial);  // never a crash
  }
  CHECK_FALSE(ParseApiStatus(Envelope("Status", ProtoWriter().Varint(2, 1).str()), &untouched));
  CHECK(untouched.code == 7);
  // JSON bodies still parse.
  CHECK(ParseApiStatus(R"({"kind":"Status","code":410,"reason":"Expired"})", &untouched));
  CHECK(untouched.code == 410);
}

TEST_CASE("protobuf envelopes: malformed envelopes and frames are errors", "[protobuf]") {
  const std::string pod =
      ProtoWriter().Message(1, ProtoWriter().Bytes(1, "p").Bytes(6, "42")).str();
  const std::string event = ProtoWriter()
                                .Bytes(1, "ADDED")
                                .Message(2, ProtoWriter().Bytes(1, Envelope("Pod", pod)))
                                .str();
  ProtobufWatchEvent parsed;
  REQUIRE(ParseProtobufWatchEvent(event, &parsed).ok());
  CHECK(parsed.type == "ADDED");
  CHECK(parsed.resource_version == "42");
  ProtobufObject object;
  REQUIRE(ParseProtobufObject(parsed.object, &object).ok());
  CHECK(object.raw == pod);

  struct Case {
    std::string bytes;
    const char* what;
  };
  const Case frames[] = {
      {ProtoWriter().Message(2, ProtoWriter().Bytes(1, Envelope("Pod", pod))).str(), "no type"},
      {ProtoWriter().Bytes(1, "ADDED").str(), "no object"},
      {ProtoWriter().Bytes(1, "ADDED").Message(2, ProtoWriter().Bytes(1, pod)).str(),
       "object without its envelope"},
      {ProtoWriter().Varint(1, 3).str(), "type of the wrong wire type"},
      {ProtoWriter().Bytes(1, "ADDED").Varint(2, 3).str(), "object of the wrong wire type"},
      {ProtoWriter()
           .Bytes(1, "ADDED")
           .Message(2, ProtoWriter().Bytes(1, Envelope("Pod", ProtoWriter().Varint(1, 1).str())))
           .str(),
       "metadata of the wrong wire type"},
      {std::string(kProtobufMagic) + event, "an enveloped frame (the server sends bare ones)"},
  };
  for (const auto& c : frames) {
    INFO(c.what);
    ProtobufWatchEvent out;
    out.type = "unchanged";
    const Status s = ParseProtobufWatchEvent(c.bytes, &out);
    CHECK_FALSE(s.ok());
    CHECK_FALSE(s.message().empty());
    CHECK(out.type == "unchanged");
  }
  for (size_t cut = 0; cut < event.size(); ++cut) {
    ProtobufWatchEvent out;
    CHECK_FALSE(ParseProtobufWatchEvent(std::string_view(event).substr(0, cut), &out).ok());
  }
  CHECK_FALSE(ParseProtobufObject(pod, &object).ok());  // no magic
  CHECK_FALSE(
      ParseProtobufObject(std::string(kProtobufMagic) + ProtoWriter().Varint(2, 1).str(), &object)
          .ok());
  CHECK_FALSE(
      ParseProtobufObject(
          std::string(kProtobufMagic) + ProtoWriter().Bytes(2, pod).Bytes(3, "gzip").str(), &object)
          .ok());
  // An envelope without typeMeta parses; its kind is empty.
  REQUIRE(
      ParseProtobufObject(std::string(kProtobufMagic) + ProtoWriter().Bytes(2, pod).str(), &object)
          .ok());
  CHECK(object.kind.empty());
}

}  // namespace
}  // namespace protobuf_envelopes_test
}  // namespace capext::kube
