// `capacity-extender validate` as a user runs it, on the example tree of docs/quota-hierarchy.md
// (tests/scenarios/hierarchy/validate/): the real binary, its exit status and its output. The
// tree is accepted; a cycle and a missing parent are rejected with exit status 1 and file:line
// messages, in text and in -o json.
#include <rapidjson/document.h>
#include <sys/wait.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <sstream>
#include <string>

#include "tests/support/test_paths.h"

namespace validate_hierarchy_test {
namespace {

const std::string kDir = capext::test::SourcePath("tests/scenarios/hierarchy/validate/");

struct Run {
  int exit_status = -1;
  std::string out;  // stdout and stderr
};

Run Validate(const std::string& args) {
  Run run;
  const std::string cmd =
      std::string("'") + capext::test::ExtenderBinary() + "' validate " + args + " 2>&1";
  FILE* pipe = popen(cmd.c_str(), "r");
  REQUIRE(pipe != nullptr);
  char buf[4096];
  std::size_t n = 0;
  while ((n = fread(buf, 1, sizeof buf, pipe)) > 0)
    run.out.append(buf, n);
  const int status = pclose(pipe);
  run.exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return run;
}

int CountErrors(const std::string& text) {
  int n = 0;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    n += line.find(": error: ") != std::string::npos;
  return n;
}

TEST_CASE("validate accepts the example tree: exit 0, no errors") {
  const Run run = Validate(kDir + "tree.yaml");
  INFO(run.out);
  CHECK(run.exit_status == 0);
  CHECK(CountErrors(run.out) == 0);
  CHECK(run.out.find("1 file, 6 ElasticQuotas, 0 extender configs: 0 errors") != std::string::npos);
}

TEST_CASE("validate rejects a cycle in the tree: exit 1, the loop on each member") {
  const std::string file = kDir + "tree-cycle.yaml";
  const Run run = Validate(file);
  INFO(run.out);
  CHECK(run.exit_status == 1);
  CHECK(CountErrors(run.out) == 2);
  CHECK(run.out.find(file +
                     ":15: error: ElasticQuota team-a/team-a: metadata.annotations[scheduling."
                     "capacity-extender.io/parent]: the hierarchy has a cycle: team-a/team-a -> "
                     "a1/a1 -> team-a/team-a") != std::string::npos);
  CHECK(run.out.find(file + ":23: error: ElasticQuota a1/a1: ") != std::string::npos);
  CHECK(run.out.find("the hierarchy has a cycle: a1/a1 -> team-a/team-a -> a1/a1") !=
        std::string::npos);
}

TEST_CASE("validate rejects a missing parent: exit 1, at the annotation's line") {
  const std::string file = kDir + "tree-missing-parent.yaml";
  const Run run = Validate(file);
  INFO(run.out);
  CHECK(run.exit_status == 1);
  CHECK(CountErrors(run.out) == 1);
  CHECK(run.out.find(file +
                     ":31: error: ElasticQuota a2/a2: metadata.annotations[scheduling.capacity-"
                     "extender.io/parent]: the parent ElasticQuota team-a/team-x is not defined "
                     "in the given files") != std::string::npos);
}

TEST_CASE("validate -o json on the broken trees: exit 1, the errors as objects") {
  for (const char* name : {"tree-cycle.yaml", "tree-missing-parent.yaml"}) {
    const Run run = Validate("-o json " + kDir + name);
    INFO(name << "\n" << run.out);
    CHECK(run.exit_status == 1);
    rapidjson::Document d;
    d.Parse(run.out.c_str());
    REQUIRE_FALSE(d.HasParseError());
    REQUIRE(d.IsArray());
    int errors = 0;
    for (const auto& e : d.GetArray()) {
      if (std::string(e["severity"].GetString()) != "error") continue;
      ++errors;
      CHECK(std::string(e["field"].GetString()) ==
            "metadata.annotations[scheduling.capacity-extender.io/parent]");
      CHECK(std::string(e["file"].GetString()) == kDir + name);
    }
    CHECK(errors == (std::string(name) == "tree-cycle.yaml" ? 2 : 1));
  }
}

}  // namespace
}  // namespace validate_hierarchy_test
