// JsonOut (extender/wire/json_out.h): byte for byte the text rapidjson::Writer writes, through its
// fast paths (unescaped copies, arrays of names, values rendered once) and buffer growth.
#include "extender/wire/json_out.h"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <catch2/catch.hpp>
#include <random>
#include <string>
#include <vector>

namespace capext {
namespace json_out_test {
namespace {

std::vector<std::string> Samples() {
  std::vector<std::string> out = {"",
                                  "n1",
                                  "worker-pool-a-00001",
                                  "exactly8",
                                  "sixteen-chars-ok",
                                  "a \"quoted\" name",
                                  "back\\slash",
                                  std::string("nul\0inside", 10),
                                  "tab\there",
                                  "\x1f",
                                  "caf\xc3\xa9 \xe2\x82\xac",
                                  "0123456789abcdef0123456789abcdef0123456789",
                                  "ends with quote\"",
                                  "\"starts with quote"};
  std::mt19937 random(42);
  std::string alphabet = "abcXYZ-._/\"\\\xc3\xa9";
  alphabet += {'\x01', '\x1f', '\x7f', '\0'};
  for (int i = 0; i < 300; ++i) {
    std::string s;
    const int n = static_cast<int>(random() % 40);
    for (int k = 0; k < n; ++k)
      s += alphabet[random() % alphabet.size()];
    out.push_back(s);
  }
  return out;
}

std::string ByRapidJson(const std::vector<std::string>& strings, bool as_keys) {
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> w(buffer);
  if (as_keys) {
    w.StartObject();
    for (const auto& s : strings) {
      w.Key(s.data(), static_cast<rapidjson::SizeType>(s.size()));
      w.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
    }
    w.EndObject();
  } else {
    w.StartArray();
    for (const auto& s : strings)
      w.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
    w.EndArray();
  }
  return std::string(buffer.GetString(), buffer.GetSize());
}

TEST_CASE("NeedsNoEscape is exact", "[json_out]") {
  for (const auto& s : Samples()) {
    bool escape = false;
    for (unsigned char c : s)
      escape = escape || c < 0x20 || c == '"' || c == '\\';
    INFO(s);
    CHECK(NeedsNoEscape(s) == !escape);
  }
}

TEST_CASE("JsonOut writes what rapidjson::Writer writes", "[json_out]") {
  const std::vector<std::string> strings = Samples();
  SECTION("Text and KeyText") {
    JsonOut w;
    w.StartObject();
    for (const auto& s : strings) {
      w.KeyText(s);
      w.Text(s);
    }
    w.EndObject();
    CHECK(w.Take() == ByRapidJson(strings, true));
  }
  SECTION("TextArray, every item and a subset") {
    std::vector<std::string_view> views(strings.begin(), strings.end());
    JsonOut all;
    all.TextArray(views, [](std::size_t) { return true; });
    CHECK(all.Take() == ByRapidJson(strings, false));

    std::vector<std::string> odd;
    for (std::size_t i = 1; i < strings.size(); i += 2)
      odd.push_back(strings[i]);
    JsonOut some;
    some.StartObject();
    some.Key("names");
    some.TextArray(views, [](std::size_t i) { return i % 2 == 1; });
    some.Key("none");
    some.TextArray(views, [](std::size_t) { return false; });
    some.EndObject();
    CHECK(some.Take() == "{\"names\":" + ByRapidJson(odd, false) + ",\"none\":[]}");
  }
  SECTION("RenderedString repeats a value rendered once") {
    const std::string reason = "pod a/b rejected: \"cpu\" used 9 + request 2 > max 10\n";
    const std::string rendered = RenderString(reason);
    JsonOut w;
    w.StartObject();
    std::vector<std::string> pairs;
    for (int i = 0; i < 2000; ++i) {  // far past the first buffer
      const std::string key = "node-" + std::to_string(i);
      w.KeyText(key);
      w.RenderedString(rendered);
      pairs.push_back(key);
    }
    w.EndObject();
    rapidjson::StringBuffer buffer;
    rapidjson::Writer<rapidjson::StringBuffer> expected(buffer);
    expected.StartObject();
    for (const auto& key : pairs) {
      expected.Key(key.c_str());
      expected.String(reason.c_str());
    }
    expected.EndObject();
    CHECK(w.Take() == std::string(buffer.GetString(), buffer.GetSize()));
  }
}

}  // namespace
}  // namespace json_out_test
}  // namespace capext
