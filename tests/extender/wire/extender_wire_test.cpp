// extender/extender_wire.h: request parsing (UTF-8 checked up front, recursive or iterative
// parsing chosen by the body, errors with the byte offset) and ExtenderArgs decoding.
#include "extender/wire/extender_wire.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

namespace capext {
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

}  // namespace
}  // namespace capext
