// JsonPullReader: the token stream equals what RapidJSON's reader sees, managedFields of the
// root's (and a watch event object's) metadata is left out, and an offered tape is reused only
// for exactly one recorded object, never after ForgetSource().
#include "config/json_pull_reader.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

namespace capext::json {
namespace json_pull_reader_test {
namespace {

// "type:text" per token, through the end (or the error).
std::vector<std::string> Tokens(JsonPullReader& r) {
  std::vector<std::string> out;
  for (Token t = r.Next();; t = r.Next()) {
    std::string text;
    if (t == Token::kString || t == Token::kKey) text = std::string(r.text());
    if (t == Token::kNumber) text = std::to_string(r.int64_value());
    out.push_back(std::to_string(static_cast<int>(t)) + ":" + text);
    if (t == Token::kEnd || t == Token::kError) return out;
  }
}

std::vector<std::string> Parse(std::string_view json) {
  JsonPullReader r(json);
  return Tokens(r);
}

TEST_CASE("pull reader: tokens, errors and trailing garbage", "[codec]") {
  CHECK(Parse(R"({"a":[1,"x",null,true,{}]})").size() == 12);
  CHECK(Parse(R"({"a":1} x)").back() == "10:");  // kError
  CHECK(Parse(R"({"a":)").back() == "10:");
  CHECK(Parse("").back() == "10:");
  CHECK(Parse(" [] ").back() == "9:");  // kEnd
  JsonPullReader bad("{\"a\":");
  CHECK(bad.Next() == Token::kError);
  CHECK(bad.error().message().find("offset") != std::string::npos);
}

TEST_CASE("pull reader: managedFields of the metadata is not recorded", "[codec]") {
  const auto tokens = Parse(
      R"({"metadata":{"name":"p","managedFields":[{"manager":"m"}],"labels":{"managedFields":"x"}},)"
      R"("object":{"metadata":{"ManagedFields":{"a":1},"uid":"u"}},"spec":{"managedFields":2}})");
  std::string all;
  for (const auto& t : tokens)
    all += t + " ";
  CHECK(all.find("manager") == std::string::npos);
  CHECK(all.find(":ManagedFields") == std::string::npos);
  CHECK(all.find(":labels") != std::string::npos);
  CHECK(all.find(":x ") != std::string::npos);  // a label of that name is kept
  CHECK(all.find(":uid") != std::string::npos);
  CHECK(all.find(":2 ") != std::string::npos);  // spec.managedFields is not metadata's
}

TEST_CASE("pull reader: an offered tape is reused for exactly one recorded object", "[codec]") {
  const std::string line =
      R"({"type":"ADDED","object":{"kind":"Pod","metadata":{"name":"p","labels":{"a":"b"}},)"
      R"("spec":{"containers":[{"name":"c"}]}}})";
  const size_t begin = line.find(R"({"kind")");
  const std::string_view object = std::string_view(line).substr(begin, line.size() - begin - 1);
  const std::vector<std::string> fresh = Parse(std::string(object));

  {
    JsonPullReader whole(line);
    while (whole.Next() != Token::kEnd) {
    }
    whole.OfferForReuse();
  }
  JsonPullReader reused(object, /*may_reuse=*/true);
  CHECK(reused.reused());
  CHECK(Tokens(reused) == fresh);

  // Not for a reader that did not ask, nor for a view that is not exactly one object.
  JsonPullReader plain(object);
  CHECK_FALSE(plain.reused());
  JsonPullReader whole_again(line);  // a parse withdraws the offer (it was not offered again)
  CHECK(Tokens(whole_again).back() == "9:");
  JsonPullReader after_parse(object, true);
  CHECK_FALSE(after_parse.reused());

  {
    JsonPullReader whole(line);
    CHECK(Tokens(whole).back() == "9:");
    whole.OfferForReuse();
  }
  JsonPullReader partial(object.substr(0, object.size() - 1), true);
  CHECK_FALSE(partial.reused());
  JsonPullReader::ForgetSource();
  JsonPullReader forgotten(object, true);
  CHECK_FALSE(forgotten.reused());
  CHECK(Tokens(forgotten) == fresh);
}

}  // namespace
}  // namespace json_pull_reader_test
}  // namespace capext::json
