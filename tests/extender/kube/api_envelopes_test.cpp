// ParseListPage / ParseWatchEvent / ParseApiStatus against real kube-apiserver captures.
#include "extender/kube/api_envelopes.h"

#include <rapidjson/document.h>

#include <catch2/catch.hpp>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "config/json_pull_reader.h"
#include "config/object_stream_decoder.h"
#include "tests/support/object_decoding.h"
#include "tests/support/test_paths.h"

namespace capext::kube {
namespace api_envelopes_test {
namespace {

const std::string kCaptures = capext::test::SourcePath("tests/fixtures/kube-apiserver/");

// The body of a recorded response: everything after the blank line ending the headers.
std::string CaptureBody(const std::string& name) {
  std::ifstream in(kCaptures + name, std::ios::binary);
  std::ostringstream content;
  content << in.rdbuf();
  std::string text = content.str();
  size_t blank = text.find("\n\n");
  return blank == std::string::npos ? "" : text.substr(blank + 2);
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) lines.push_back(line);
  }
  return lines;
}

std::string Member(const rapidjson::Value& object, const char* name) {
  return object.HasMember(name) && object[name].IsString() ? object[name].GetString() : "";
}

TEST_CASE("a built-in list page gets kind and apiVersion put into its items", "[kube]") {
  std::string body = CaptureBody("21-pods-list-limit2.response.txt");
  REQUIRE(!body.empty());
  ListPage page;
  REQUIRE(ParseListPage(body, &page).ok());
  CHECK(page.kind == "PodList");
  CHECK(page.api_version == "v1");
  CHECK(page.resource_version == "205");
  CHECK(page.continue_token ==
        "eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6MjA1LCJzdGFydCI6InF1b3RhLWEvcDJcdTAwMDAifQ");
  REQUIRE(page.items.size() == 2);
  rapidjson::Document item;
  item.Parse(page.items[0].c_str());
  REQUIRE(!item.HasParseError());
  CHECK(Member(item, "kind") == "Pod");
  CHECK(Member(item, "apiVersion") == "v1");
  CHECK(Member(item["metadata"], "name") == "p1");
  CHECK(Member(item["metadata"], "resourceVersion") == "203");
  // Only kind and apiVersion were added: the rest of the item is the server's exact text.
  CHECK(body.find(page.items[1].substr(page.items[1].find("\"metadata\""))) != std::string::npos);
}

TEST_CASE("a custom resource list page keeps its items verbatim", "[kube]") {
  std::string body = CaptureBody("14-elasticquota-list-limit1.response.txt");
  ListPage page;
  REQUIRE(ParseListPage(body, &page).ok());
  CHECK(page.kind == "ElasticQuotaList");
  CHECK(page.resource_version == "202");
  CHECK(!page.continue_token.empty());
  REQUIRE(page.items.size() == 1);
  CHECK(body.find(page.items[0]) != std::string::npos);  // not rewritten: kind was present

  ListPage last;
  REQUIRE(ParseListPage(CaptureBody("15-elasticquota-list-continue.response.txt"), &last).ok());
  CHECK(last.continue_token.empty());  // "continue": "" marks the last page
  CHECK(last.resource_version == "202");
}

TEST_CASE("list items that are empty objects still get a kind", "[kube]") {
  ListPage page;
  REQUIRE(
      ParseListPage(R"({"kind":"NodeList","apiVersion":"v1","metadata":{"resourceVersion":"7"},)"
                    R"("items":[{ },{"metadata":{"name":"n"}}]})",
                    &page)
          .ok());
  REQUIRE(page.items.size() == 2);
  CHECK(page.items[0] == R"({"kind":"Node","apiVersion":"v1"})");
  CHECK(page.items[1] == R"({"kind":"Node","apiVersion":"v1","metadata":{"name":"n"}})");
}

TEST_CASE("a malformed list is an error with a position", "[kube]") {
  ListPage page;
  Status status = ParseListPage(R"({"kind":"PodList","items":[{]})", &page);
  REQUIRE(!status.ok());
  CHECK(status.message().find("at byte") != std::string::npos);
}

TEST_CASE("watch events of capture 23 give type and object text and resourceVersion", "[kube]") {
  std::vector<std::string> lines = Lines(CaptureBody("23-pods-watch-from-list-rv.response.txt"));
  REQUIRE(lines.size() == 6);
  std::vector<std::string> types;
  std::vector<std::string> versions;
  for (const auto& line : lines) {
    WatchEventEnvelope event;
    REQUIRE(ParseWatchEvent(line, &event).ok());
    types.push_back(event.type);
    versions.push_back(event.resource_version);
    rapidjson::Document object;
    object.Parse(event.object.data(), event.object.size());
    REQUIRE(!object.HasParseError());
    CHECK(Member(object, "kind") == "Pod");
  }
  CHECK(types == std::vector<std::string>{"ADDED", "MODIFIED", "MODIFIED", "DELETED", "BOOKMARK",
                                          "BOOKMARK"});
  CHECK(versions == std::vector<std::string>{"207", "208", "209", "210", "210", "210"});
}

TEST_CASE("a watch event's object decodes from the envelope's tokens as from its own parse",
          "[kube]") {
  std::vector<std::string> lines = Lines(CaptureBody("23-pods-watch-from-list-rv.response.txt"));
  REQUIRE(lines.size() == 6);
  for (const auto& line : lines) {
    WatchEventEnvelope event;
    REQUIRE(ParseWatchEvent(line, &event).ok());
    Pod reused, fresh;
    std::string kind_reused, kind_fresh;
    Status a = DecodePodJson(event.object, {}, &reused, &kind_reused);  // the line's tokens
    json::JsonPullReader::ForgetSource();
    const std::string copy(event.object);
    Status b = DecodePodJson(copy, {}, &fresh, &kind_fresh);  // a parse of its own
    REQUIRE(a.ok() == b.ok());
    if (!a.ok()) continue;
    CHECK(capext::testing::Text(reused) == capext::testing::Text(fresh));
    CHECK(kind_reused == kind_fresh);
    if (event.type != "BOOKMARK") CHECK(!reused.name.empty());
  }
}

TEST_CASE("a 410 ERROR event carries an Expired Status", "[kube]") {
  std::vector<std::string> lines =
      Lines(CaptureBody("75-pods-watch-rv1-after-restart-410.response.txt"));
  REQUIRE(lines.size() == 1);
  WatchEventEnvelope event;
  REQUIRE(ParseWatchEvent(lines[0], &event).ok());
  CHECK(event.type == "ERROR");
  CHECK(event.resource_version.empty());
  ApiStatus status;
  REQUIRE(ParseApiStatus(event.object, &status));
  CHECK(status.code == 410);
  CHECK(status.reason == "Expired");
  CHECK(status.message == "too old resource version: 1 (247)");
}

TEST_CASE("a watch line that is not one JSON event is an error", "[kube]") {
  WatchEventEnvelope event;
  CHECK(!ParseWatchEvent(R"({"type":"ADDED","object":{"kind":"Pod")", &event).ok());
  CHECK(!ParseWatchEvent(R"({"object":{}})", &event).ok());
  CHECK(!ParseWatchEvent(R"({"type":"ADDED"})", &event).ok());
  CHECK(!ParseWatchEvent(R"({"type":"ADDED","object":{}} {})", &event).ok());
}

TEST_CASE("Status bodies of eviction refusals and errors", "[kube]") {
  ApiStatus budget;
  REQUIRE(ParseApiStatus(CaptureBody("45-eviction-p2-pdb-429.response.txt"), &budget));
  CHECK(budget.code == 429);
  CHECK(budget.reason == "TooManyRequests");
  REQUIRE(budget.causes.size() == 1);
  CHECK(budget.causes[0].first == "DisruptionBudget");
  CHECK(budget.retry_after_seconds == 0);

  ApiStatus processing;
  REQUIRE(
      ParseApiStatus(CaptureBody("43-eviction-p2-pdb-unprocessed-429.response.txt"), &processing));
  CHECK(processing.retry_after_seconds == 10);

  ApiStatus success;
  REQUIRE(ParseApiStatus(CaptureBody("33-binding-p1-201.response.txt"), &success));
  CHECK(success.status == "Success");
  CHECK(success.code == 201);

  ApiStatus none;
  CHECK(!ParseApiStatus(CaptureBody("02-discovery-group-version-before-crd-404.response.txt"),
                        &none));
  CHECK(!ParseApiStatus(CaptureBody("17-pod-create-p1.response.txt"), &none));
}

}  // namespace
}  // namespace api_envelopes_test
}  // namespace capext::kube
