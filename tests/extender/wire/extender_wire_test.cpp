// extender/wire/extender_wire.h: request parsing (UTF-8 checked up front, recursive or iterative
// parsing chosen by the body, errors with the byte offset) and ExtenderArgs decoding.
#include "extender/wire/extender_wire.h"

#include <catch2/catch.hpp>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "tests/support/test_paths.h"

namespace capext {
namespace extender_wire_test {
namespace {

const std::string kPod =
    R"({"metadata":{"name":"p","namespace":"ns","uid":"u1"},"spec":{"containers":[]}})";

TEST_CASE("ParseRequestBody accepts well-formed UTF-8 and rejects every ill-formed sequence",
          "[wire]") {
  for (const std::string& ok :
       {std::string(R"({"a":"caf\u00e9"})"), std::string("{\"a\":\"caf\xc3\xa9 \xe2\x82\xac\"}"),
        std::string("{\"a\":\"\xf0\x9f\x98\x80\"}"), std::string("{\"a\":\"\xef\xbf\xbf\"}")}) {
    std::string body = ok;
    rapidjson::Document doc;
    INFO(ok);
    CHECK(ParseRequestBody(body, &doc).ok());
  }
  const std::vector<std::string> bad = {
      "{\"a\":\"\xff\"}",              // never valid
      "{\"a\":\"\xc0\xaf\"}",          // overlong '/'
      "{\"a\":\"\xe0\x80\xaf\"}",      // overlong, 3 bytes
      "{\"a\":\"\xed\xa0\x80\"}",      // a surrogate
      "{\"a\":\"\xf4\x90\x80\x80\"}",  // above U+10FFFF
      "{\"a\":\"\xc3\"}",              // truncated
      "{\"a\":\"ok\"}\xe2\x82",        // truncated at the very end
      "{\"\x80\":1}",                  // a stray continuation byte in a key
      "{\"key\xe3",                    // truncated in an unterminated key at the very end
                                       // (RapidJSON's own decoder read past the body here)
  };
  for (const std::string& text : bad) {
    std::string body = text;
    rapidjson::Document doc;
    Status s = ParseRequestBody(body, &doc);
    INFO(text);
    REQUIRE_FALSE(s.ok());
    CHECK(s.message().find("invalid JSON at byte") != std::string::npos);
    CHECK(s.message().find("encoding") != std::string::npos);
  }
}

TEST_CASE("ParseRequestBody parses any depth, and many braces inside strings", "[wire]") {
  SECTION("deeper than the recursive parser is trusted with") {
    std::string body =
        R"({"Pod":)" + kPod + R"(,"x":)" + std::string(20000, '[') + std::string(20000, ']') + "}";
    rapidjson::Document doc;
    REQUIRE(ParseRequestBody(body, &doc).ok());
    CHECK(doc["x"].IsArray());
  }
  SECTION("braces in strings only make the parser choice conservative") {
    std::string body = R"({"s":")" + std::string(3000, '{') + R"(","n":[1,{"k":2}]})";
    rapidjson::Document doc;
    REQUIRE(ParseRequestBody(body, &doc).ok());
    CHECK(doc["s"].GetStringLength() == 3000);
    CHECK(doc["n"][1]["k"].GetInt() == 2);
  }
  SECTION("unterminated nesting is an error with its offset, either parser") {
    for (std::size_t depth : {10u, 100000u}) {
      std::string body = "{\"x\":" + std::string(depth, '[');
      rapidjson::Document doc;
      Status s = ParseRequestBody(body, &doc);
      REQUIRE_FALSE(s.ok());
      CHECK(s.message().find("invalid JSON at byte") != std::string::npos);
    }
  }
  SECTION("trailing garbage and non-objects") {
    for (std::string body : {std::string("{} x"), std::string("[1]"), std::string("")}) {
      rapidjson::Document doc;
      CHECK_FALSE(ParseRequestBody(body, &doc).ok());
    }
  }
}

// Members in order, duplicates included (Value::operator== looks names up, so it cannot).
std::string Serialized(const rapidjson::Value& v) {
  rapidjson::StringBuffer buffer;
  JsonWriter w(buffer);
  v.Accept(w);
  return std::string(buffer.GetString(), buffer.GetSize());
}

// The document ParseRequestBody builds equals RapidJSON's own parse of the same text, and both
// accept or reject the same bodies (the member-by-member path and its NodeNames scanner included).
TEST_CASE("ParseRequestBody builds what RapidJSON builds, valid or not", "[wire]") {
  std::vector<std::string> bodies = {
      R"({"Pod":)" + kPod + R"(,"Nodes":null,"NodeNames":["n1","n2"]})",
      R"( { "NodeNames" : [ "a" , "b\"c" , "tab\there", "\u00e9" ] , "Pod" : {} } )",
      R"({"nodenames":["x",1,null,{"k":"v"},["y"]],"NODENAMES":[]})",
      R"({"NodeNames":"not an array","NodeNames":["dup"]})",
      R"({"NodeNames":[],"Nodes":{"items":[{"metadata":{"name":"n1"}}]}})",
      R"({"k\u0041y":1,"":2,"NodeNames":["worker-pool-a-00001","worker-pool-a-00002"]})",
      R"({})",
      R"({"NodeNames":["exactly8","sixteen-chars-ok","0123456789abcdef0123456789abcdef"]})",
  };
  // Broken variants of each: truncated anywhere, and a few bytes replaced.
  const std::vector<std::string> valid = bodies;
  for (const auto& body : valid) {
    for (std::size_t cut = 1; cut < body.size(); cut += 3)
      bodies.push_back(body.substr(0, cut));
    for (std::size_t at = 0; at < body.size(); at += 5) {
      for (char c : {',', ']', '}', '"', ':', 'x', ' ', '\\', '\n'}) {
        std::string broken = body;
        broken[at] = c;
        bodies.push_back(broken);
      }
    }
  }
  bodies.push_back(R"({"NodeNames":["a"]} x)");
  bodies.push_back(R"({"NodeNames":["a"]}   )");
  bodies.push_back(std::string(R"({"NodeNames":["a)") + '\x01' + R"("]})");
  for (const std::string& text : bodies) {
    INFO(text);
    rapidjson::Document expected;
    expected.Parse(text.c_str(), text.size());
    const bool expect_ok = !expected.HasParseError() && expected.IsObject();
    std::string body = text;
    rapidjson::Document doc;
    const Status s = ParseRequestBody(body, &doc);
    CHECK(s.ok() == expect_ok);
    if (s.ok() && expect_ok) CHECK(Serialized(doc) == Serialized(expected));
    if (!s.ok() && !text.empty()) {
      const bool json_error = s.message().find("invalid JSON at byte") != std::string::npos;
      const bool not_object = s.message() == "expected a JSON object at the top level";
      CHECK((json_error || not_object));
    }
  }
}

TEST_CASE("ParseExtenderArgs decodes what ParseRequestBody + DecodeExtenderArgs decode", "[wire]") {
  const std::string pod = kPod;
  std::vector<std::string> bodies = {
      R"({"Pod":)" + pod + R"(,"Nodes":null,"NodeNames":["n1","n2"]})",
      R"({"Pod":)" + pod + R"(,"NodeNames":["n1","esc\"aped","n3"]})",
      R"({"Pod":)" + pod + R"(,"NodeNames":["n1",7,"n3"]})",
      R"({"Pod":)" + pod + R"(,"nodenames":["lower"],"NodeNames":["exact"]})",
      R"({"Pod":)" + pod + R"(,"NODENAMES":["upper"],"nodeNames":["second"]})",
      R"({"Pod":)" + pod + R"(,"NodeNames":null,"nodenames":["after null"]})",
      R"({"Pod":)" + pod + R"(,"NodeNames":[]})",
      R"({"Pod":)" + pod + R"(,"NodeNames":"n1"})",
      R"({"Pod":)" + pod + R"(,"NodeNames":["n1",])",
      R"({"NodeNames":["n1"]})",
      R"({"Pod":)" + pod + R"(,"NodeNames":null,"Nodes":{"items":[{"metadata":{"name":"a"}}]}})",
  };
  for (const std::string& text : bodies) {
    INFO(text);
    std::string body_a = text, body_b = text;
    rapidjson::Document doc_a, doc_b;
    ExtenderArgs a, b;
    Status sa = ParseRequestBody(body_a, &doc_a);
    if (sa.ok()) sa = DecodeExtenderArgs(doc_a, {}, &a);
    const Status sb = ParseExtenderArgs(body_b, {}, &doc_b, &b);
    CHECK(sa.ok() == sb.ok());
    CHECK(sa.message() == sb.message());
    if (!sa.ok() || !sb.ok()) continue;
    CHECK(a.node_names_mode == b.node_names_mode);
    CHECK(a.node_names == b.node_names);
    CHECK((a.node_items == nullptr) == (b.node_items == nullptr));
    CHECK(a.pod.name == b.pod.name);
  }
}

TEST_CASE("DecodeExtenderArgs: names point into the body, in both modes", "[wire]") {
  SECTION("NodeNames") {
    std::string body = R"({"Pod":)" + kPod + R"(,"Nodes":null,"NodeNames":["n1","n\"2"]})";
    rapidjson::Document doc;
    REQUIRE(ParseRequestBody(body, &doc).ok());
    ExtenderArgs args;
    REQUIRE(DecodeExtenderArgs(doc, {}, &args).ok());
    CHECK(args.node_names_mode);
    CHECK(args.node_names == std::vector<std::string_view>{"n1", "n\"2"});
  }
  SECTION("full Node objects") {
    std::string body =
        R"({"Pod":)" + kPod +
        R"(,"Nodes":{"items":[{"metadata":{"name":"a"}},{"metadata":{"name":"b"}}]}})";
    rapidjson::Document doc;
    REQUIRE(ParseRequestBody(body, &doc).ok());
    ExtenderArgs args;
    REQUIRE(DecodeExtenderArgs(doc, {}, &args).ok());
    CHECK_FALSE(args.node_names_mode);
    REQUIRE(args.node_items != nullptr);
    CHECK(args.node_names == std::vector<std::string_view>{"a", "b"});
  }
  SECTION("a node item without a name") {
    for (const char* item : {R"({"metadata":{}})", R"({"metadata":{"name":7}})",
                             R"({"metadata":{"name":""}})", R"("n1")"}) {
      std::string body = R"({"Pod":)" + kPod + R"(,"Nodes":{"items":[)" + item + "]}}";
      rapidjson::Document doc;
      REQUIRE(ParseRequestBody(body, &doc).ok());
      ExtenderArgs args;
      Status s = DecodeExtenderArgs(doc, {}, &args);
      INFO(item);
      REQUIRE_FALSE(s.ok());
      CHECK(s.message() == "Nodes.items[0]: missing metadata.name");
    }
  }
}

// Go's extender/v1 types: ExtenderPreemptionArgs{Pod, NodeNameToVictims map[string]*Victims,
// NodeNameToMetaVictims map[string]*MetaVictims}; Victims{Pods []*v1.Pod, NumPDBViolations int64};
// MetaVictims{Pods []*MetaPod, NumPDBViolations int64}; MetaPod{UID string}.
struct DecodedPreempt {
  Status status;
  std::vector<std::string> node_names;
};

DecodedPreempt DecodePreempt(const std::string& rest) {
  std::string body = R"({"Pod":)" + kPod + rest + "}";
  rapidjson::Document doc;
  DecodedPreempt out;
  out.status = ParseRequestBody(body, &doc);
  if (!out.status.ok()) return out;
  ExtenderPreemptionArgs args;
  out.status = DecodeExtenderPreemptionArgs(doc, {}, &args);
  out.node_names.assign(args.node_names.begin(), args.node_names.end());
  return out;
}

TEST_CASE("DecodeExtenderPreemptionArgs accepts what Go's encoding/json accepts", "[wire]") {
  struct Case {
    std::string rest;
    std::vector<std::string> names;
  };
  const std::vector<Case> cases = {
      // The two shapes kube-scheduler sends (captured), with the unused map as null.
      {R"(,"NodeNameToVictims":null,"NodeNameToMetaVictims":{"n1":{"Pods":[{"UID":"u1"}],"NumPDBViolations":0}})",
       {"n1"}},
      {R"(,"NodeNameToVictims":{"n1":{"Pods":[{"metadata":{"name":"v","uid":"u1"}}],"NumPDBViolations":2}},"NodeNameToMetaVictims":null)",
       {"n1"}},
      // Keys in any case; nulls wherever Go has a pointer, a slice or a zero value.
      {R"(,"nodenametometavictims":{"n1":{"pods":[{"uid":"u1"},null],"numPDBViolations":null},"n2":null})",
       {"n1", "n2"}},
      {R"(,"NodeNameToMetaVictims":{"n1":{"Pods":null,"NumPDBViolations":-1}})", {"n1"}},
      {R"(,"NodeNameToMetaVictims":{"n1":{"Pods":[{"UID":null,"extra":[1]}]}})", {"n1"}},
      {R"(,"NodeNameToVictims":{"n1":{"Pods":[{},{"metadata":null},{"metadata":{"uid":null}}]}})",
       {"n1"}},
      {R"(,"NodeNameToMetaVictims":{"n1":{"NumPDBViolations":9223372036854775807}})", {"n1"}},
      // Both maps set: the meta one names the nodes, the full one is still well-typed.
      {R"(,"NodeNameToMetaVictims":{"n1":{}},"NodeNameToVictims":{"n2":{}})", {"n1"}},
      {"", {}},
      {R"(,"NodeNameToMetaVictims":{})", {}},
  };
  for (const auto& c : cases) {
    INFO(c.rest);
    const DecodedPreempt d = DecodePreempt(c.rest);
    INFO(d.status.message());
    CHECK(d.status.ok());
    CHECK(d.node_names == c.names);
  }
}

TEST_CASE("DecodeExtenderPreemptionArgs rejects what Go's encoding/json rejects", "[wire]") {
  struct Case {
    std::string rest;
    std::string error;
  };
  const std::vector<Case> cases = {
      {R"(,"NodeNameToMetaVictims":[{"n1":{}}])",
       "NodeNameToMetaVictims: expected an object, got an array"},
      {R"(,"NodeNameToMetaVictims":{"n1":"u1"})",
       "NodeNameToMetaVictims.n1: expected an object, got a string"},
      {R"(,"NodeNameToMetaVictims":{"n1":{"Pods":{"UID":"u1"}}})",
       "NodeNameToMetaVictims.n1.Pods: expected an array, got an object"},
      {R"(,"NodeNameToMetaVictims":{"n1":{"Pods":"u1"}})",
       "NodeNameToMetaVictims.n1.Pods: expected an array, got a string"},
      {R"(,"NodeNameToMetaVictims":{"n1":{"Pods":["u1"]}})",
       "NodeNameToMetaVictims.n1.Pods[0]: expected an object, got a string"},
      {R"(,"NodeNameToMetaVictims":{"n1":{"Pods":[{"UID":"u1"},{"UID":7}]}})",
       "NodeNameToMetaVictims.n1.Pods[1].UID: expected a string, got 7"},
      {R"(,"NodeNameToMetaVictims":{"n1":{"Pods":[{"uid":["u1"]}]}})",
       "NodeNameToMetaVictims.n1.Pods[0].UID: expected a string, got an array"},
      {R"(,"NodeNameToMetaVictims":{"n1":{"NumPDBViolations":"0"}})",
       "NodeNameToMetaVictims.n1.NumPDBViolations: expected an int64 integer, got a string"},
      {R"(,"NodeNameToMetaVictims":{"n1":{"NumPDBViolations":1.5}})",
       "NodeNameToMetaVictims.n1.NumPDBViolations: expected an int64 integer, got 1.5"},
      {R"(,"NodeNameToMetaVictims":{"n1":{"NumPDBViolations":1e2}})",
       "NodeNameToMetaVictims.n1.NumPDBViolations: expected an int64 integer, got 100.0"},
      {R"(,"NodeNameToMetaVictims":{"n1":{"NumPDBViolations":9223372036854775808}})",
       "NodeNameToMetaVictims.n1.NumPDBViolations: expected an int64 integer, got "
       "9223372036854775808"},
      {R"(,"NodeNameToMetaVictims":{"n1":{"NumPDBViolations":true}})",
       "NodeNameToMetaVictims.n1.NumPDBViolations: expected an int64 integer, got a boolean"},
      {R"(,"NodeNameToVictims":{"n1":7})", "NodeNameToVictims.n1: expected an object, got 7"},
      {R"(,"NodeNameToVictims":{"n1":{"Pods":{}}})",
       "NodeNameToVictims.n1.Pods: expected an array, got an object"},
      {R"(,"NodeNameToVictims":{"n1":{"Pods":[7]}})",
       "NodeNameToVictims.n1.Pods[0]: expected an object, got 7"},
      {R"(,"NodeNameToVictims":{"n1":{"Pods":[{"metadata":"v"}]}})",
       "NodeNameToVictims.n1.Pods[0].metadata: expected an object, got a string"},
      {R"(,"NodeNameToVictims":{"n1":{"Pods":[{"metadata":{"uid":7}}]}})",
       "NodeNameToVictims.n1.Pods[0].metadata.uid: expected a string, got 7"},
      {R"(,"NodeNameToVictims":{"n1":{"NumPDBViolations":[0]}})",
       "NodeNameToVictims.n1.NumPDBViolations: expected an int64 integer, got an array"},
      // The map that does not name the nodes is checked too, as Go decodes both.
      {R"(,"NodeNameToMetaVictims":{"n1":{}},"NodeNameToVictims":{"n1":"x"})",
       "NodeNameToVictims.n1: expected an object, got a string"},
  };
  for (const auto& c : cases) {
    INFO(c.rest);
    const DecodedPreempt d = DecodePreempt(c.rest);
    CHECK_FALSE(d.status.ok());
    CHECK_THAT(d.status.message(), Catch::StartsWith(c.error));
  }
}

TEST_CASE("DecodeExtenderPreemptionArgs reads the captured kube-scheduler requests", "[wire]") {
  const std::string dir = capext::test::SourcePath("tests/fixtures/kube-scheduler/");
  for (const char* name : {"preempt-nodecache-001", "preempt-fullnodes-001"}) {
    INFO(name);
    std::ifstream in(dir + name + ".request.raw.json");
    REQUIRE(in);
    std::string body((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    rapidjson::Document doc;
    REQUIRE(ParseRequestBody(body, &doc).ok());
    ExtenderPreemptionArgs args;
    const Status s = DecodeExtenderPreemptionArgs(doc, {}, &args);
    INFO(s.message());
    REQUIRE(s.ok());
    CHECK(args.pod.name == "h1");
    CHECK(args.node_names == std::vector<std::string_view>{"node-a", "node-b"});
  }
}

}  // namespace
}  // namespace extender_wire_test
}  // namespace capext
