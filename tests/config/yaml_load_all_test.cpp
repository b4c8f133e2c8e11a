// config/yaml_load_all.h: LoadAll without yaml-cpp 0.7's endless loop on a stray flow indicator,
// and the snapshot loader, config loader and validate, which all read YAML streams through it.
#include "config/yaml_load_all.h"

#include <catch2/catch.hpp>
#include <string>

#include "config/extender_config.h"
#include "config/snapshot.h"

namespace capext {
namespace yaml_load_all_test {
namespace {

TEST_CASE("LoadAllYamlDocuments returns what LoadAll returns on streams that parse", "[yaml]") {
  for (const std::string& text :
       {std::string(""), std::string("# only a comment\n"), std::string("a: 1\n"),
        std::string("---\n---\n"), std::string("a: [1, 2]\n---\nb: {c: d, e: f}\n...\n"),
        std::string("- x, y\n- 'p, q'\n"), std::string("k: v\n---\n[1, 2]\n")}) {
    INFO(text);
    const auto ours = LoadAllYamlDocuments(text);
    const auto theirs = YAML::LoadAll(text);
    REQUIRE(ours.size() == theirs.size());
    for (std::size_t i = 0; i < ours.size(); ++i)
      CHECK(YAML::Dump(ours[i]) == YAML::Dump(theirs[i]));
  }
}

TEST_CASE("A flow indicator where a document starts is an error at its line, not a hang",
          "[yaml]") {
  struct Case {
    std::string text;
    int line;  // 0-based, as YAML::Mark counts
  };
  for (const Case& c : {Case{",", 0}, Case{"- a\n,", 1}, Case{"a: 1\n---\n,", 2}, Case{"[a], b", 0},
                        Case{"\"a\"\n,", 1}, Case{" ,", 0}}) {
    INFO(c.text);
    try {
      LoadAllYamlDocuments(c.text);
      FAIL("no exception");
    } catch (const YAML::ParserException& e) {
      CHECK(e.mark.line == c.line);
      CHECK(e.msg.find("unexpected ','") != std::string::npos);
    }
  }
}

TEST_CASE("Snapshot and config files with a stray ',' are rejected with the line", "[yaml]") {
  Snapshot snapshot;
  const Status s = ParseSnapshot("- apiVersion: v1\n  kind: Node\n  metadata: {name: n1}\n,\n",
                                 "snap.yaml", DecodeOptions{}, &snapshot);
  REQUIRE_FALSE(s.ok());
  CHECK(s.message().find("line 4") != std::string::npos);
  CHECK(s.message().find("unexpected ','") != std::string::npos);
}

}  // namespace
}  // namespace yaml_load_all_test
}  // namespace capext
