// Tests for `capacity-extender validate` (RunValidateCommand): the broken-file corpus under
// tests/fixtures/invalid (one mistake per file, expected.txt says which), the valid fixtures,
// deploy/, the output formats, and the checks that need several files or a cluster.
#include "config/quota_manifest_validator.h"

#include <rapidjson/document.h>

#include <algorithm>
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>
#include "tests/support/temp_dir.h"
#include "tests/support/test_paths.h"

namespace capext {
namespace quota_manifest_validator_test {
namespace {

namespace fs = std::filesystem;

const std::string kFixtures = capext::test::SourcePath("tests/fixtures");

struct Run {
  int exit_code = -1;
  std::string out;
  std::string err;
};

Run Validate(const std::vector<std::string>& args) {
  std::ostringstream out, err;
  Run run;
  run.exit_code = RunValidateCommand(args, out, err);
  run.out = out.str();
  run.err = err.str();
  return run;
}

int CountLines(const std::string& text, const std::string& needle) {
  int n = 0;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    n += line.find(needle) != std::string::npos;
  return n;
}

// Files written for one test under the build tree, removed afterwards.
using capext::testing::TempDir;

std::string Quota(const std::string& ns, const std::string& spec, const std::string& extra = "") {
  return "apiVersion: scheduling.x-k8s.io/v1alpha1\nkind: ElasticQuota\nmetadata:\n  name: " + ns +
         "\n  namespace: " + ns + "\n" + extra + "spec:\n" + spec + "---\n";
}

struct CorpusRow {
  std::string file;
  int exit_code = 0;
  int line = 0;
  std::string message;
};

std::string Trim(const std::string& s) {
  const auto b = s.find_first_not_of(' ');
  const auto e = s.find_last_not_of(' ');
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

std::vector<CorpusRow> ReadExpected() {
  std::ifstream in(kFixtures + "/invalid/expected.txt");
  std::vector<CorpusRow> rows;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> cols;
    std::istringstream fields(line);
    for (std::string col; std::getline(fields, col, '|');)
      cols.push_back(Trim(col));
    REQUIRE(cols.size() == 4);
    rows.push_back({cols[0], std::stoi(cols[1]), std::stoi(cols[2]), cols[3]});
  }
  return rows;
}

TEST_CASE("the broken-file corpus: each file fails with its expected message") {
  const std::vector<CorpusRow> rows = ReadExpected();
  CHECK(rows.size() >= 15);
  for (const auto& row : rows) {
    const std::string path = kFixtures + "/invalid/" + row.file;
    const Run run = Validate({path});
    INFO(row.file << "\n" << run.out << run.err);
    CHECK(run.exit_code == row.exit_code);
    const std::string where = path + ":" + std::to_string(row.line) + ": error: ";
    bool found = false;
    std::istringstream lines(run.out);
    for (std::string line; std::getline(lines, line);) {
      found |= line.starts_with(where) && line.find(row.message) != std::string::npos;
    }
    CHECK(found);
    // One mistake each: the only errors are about it (a cycle is reported on both members).
    CHECK(CountLines(run.out, ": error: ") == (row.file == "hierarchy-cycle.yaml" ? 2 : 1));
  }
}

TEST_CASE("the corpus lists every file in it") {
  std::vector<std::string> listed;
  for (const auto& row : ReadExpected())
    listed.push_back(row.file);
  for (const auto& entry : fs::directory_iterator(kFixtures + "/invalid")) {
    const std::string name = entry.path().filename().string();
    if (name == "expected.txt") continue;
    INFO(name);
    CHECK(std::find(listed.begin(), listed.end(), name) != listed.end());
  }
}

TEST_CASE("the valid fixtures pass without errors or warnings") {
  const Run run = Validate({kFixtures + "/valid"});
  INFO(run.out << run.err);
  CHECK(run.exit_code == 0);
  CHECK(CountLines(run.out, ": error: ") == 0);
  CHECK(CountLines(run.out, ": warning: ") == 0);
  CHECK(run.out.find("5 files, 6 ElasticQuotas, 1 extender config: 0 errors, 0 warnings") !=
        std::string::npos);
}

TEST_CASE("a child's max above its parent's max is a warning: exit 0, the numbers at file:line") {
  const std::string path = kFixtures + "/warning/child-max-exceeds-parent-max.yaml";
  const Run run = Validate({path});
  INFO(run.out << run.err);
  CHECK(run.exit_code == 0);
  CHECK(CountLines(run.out, ": error: ") == 0);
  CHECK(CountLines(run.out, ": warning: ") == 1);
  CHECK(run.out.find(path +
                     ":27: warning: ElasticQuota team-a/team-a: spec.max.cpu: max cpu 12 "
                     "exceeds the parent org/org's max cpu 8: the parent caps it anyway "
                     "(see " +
                     path + ":2)") != std::string::npos);
  const Run json = Validate({"-o", "json", path});
  rapidjson::Document d;
  d.Parse(json.out.c_str());
  REQUIRE(d.IsArray());
  REQUIRE(d.Size() == 1);
  CHECK(std::string(d[0]["severity"].GetString()) == "warning");
  CHECK(d[0]["line"].GetInt() == 27);
}

TEST_CASE("everything under deploy/ passes") {
  const std::string deploy = capext::test::SourcePath("deploy");
  if (!fs::exists(deploy)) {
    WARN("deploy/ not written yet");
    return;
  }
  std::vector<std::string> args = {deploy};
  for (const auto& entry : fs::recursive_directory_iterator(deploy)) {
    if (entry.is_regular_file()) args.push_back(entry.path().string());  // Dockerfile too
  }
  const Run run = Validate(args);
  INFO(run.out << run.err);
  CHECK(run.exit_code == 0);
}

TEST_CASE("validate -o json: an array of {file, line, severity, object, field, message}") {
  const std::string path = kFixtures + "/invalid/bad-quantity.yaml";
  const Run run = Validate({"-o", "json", path});
  CHECK(run.exit_code == 1);
  rapidjson::Document d;
  d.Parse(run.out.c_str());
  REQUIRE_FALSE(d.HasParseError());
  REQUIRE(d.IsArray());
  REQUIRE(d.Size() == 1);
  const auto& e = d[0];
  CHECK(std::string(e["file"].GetString()) == path);
  CHECK(e["line"].GetInt() == 9);
  CHECK(std::string(e["severity"].GetString()) == "error");
  CHECK(std::string(e["object"].GetString()) == "ElasticQuota team-a/team-a");
  CHECK(std::string(e["field"].GetString()) == "spec.min.cpu");
  CHECK(std::string(e["message"].GetString()).starts_with("quantity \"abc\""));
  CHECK(Validate({"--output=json", kFixtures + "/valid"}).out == "[]\n");
}

TEST_CASE("usage: --help, no files, unknown flags, missing files") {
  Run run = Validate({"--help"});
  CHECK(run.exit_code == 0);
  CHECK(run.out.find("Usage: capacity-extender validate") != std::string::npos);
  run = Validate({});
  CHECK(run.exit_code == 2);
  CHECK(run.err.find("no files given") != std::string::npos);
  CHECK(Validate({"--strict", "x.yaml"}).exit_code == 2);
  CHECK(Validate({"-o", "yaml", "x.yaml"}).exit_code == 2);
  run = Validate({"/nonexistent/quota.yaml"});
  CHECK(run.exit_code == 2);
  CHECK(run.out.find("/nonexistent/quota.yaml: error: no such file or directory") !=
        std::string::npos);
}

TEST_CASE("the reference's traps are warnings, not errors") {
  TempDir dir;
  const std::string file = dir.Write(
      "traps.yaml",
      Quota("a", "  min: {cpu: \"2\", memory: 4Gi}\n  max: {cpu: \"4\"}\n") +
          Quota("b", "  min: {cpu: \"1\"}\n  max: {cpu: \"2\", gpu: \"1\"}\n") +
          "apiVersion: scheduling.x-k8s.io/v1alpha1\nkind: ElasticQuota\nmetadata: {name: c}\n"
          "spec: {max: {memory: 1Gi, cpu: 1}}\n");
  const Run run = Validate({file});
  INFO(run.out);
  CHECK(run.exit_code == 0);
  CHECK(run.out.find(file + ":7: warning: ElasticQuota a/a: spec.min.memory: memory is in min but "
                            "not in max: unbounded under capacity-extender semantics; under "
                            "scheduler-plugins semantics max memory is 0") != std::string::npos);
  CHECK(run.out.find("ElasticQuota b/b: spec.max: max lists cpu but not memory") !=
        std::string::npos);
  CHECK(run.out.find("spec.max.gpu: no pod can request resource \"gpu\"") != std::string::npos);
  CHECK(run.out.find("ElasticQuota default/c: metadata.namespace: missing") != std::string::npos);
}

TEST_CASE("the same quota twice: identical is fine, different is a warning") {
  TempDir dir;
  const std::string spec = "  min: {cpu: \"2\", memory: 4Gi}\n  max: {cpu: \"4\", memory: 8Gi}\n";
  const std::string a = dir.Write("a.yaml", Quota("team", spec));
  const std::string b = dir.Write("b.yaml", Quota("team", spec));
  Run run = Validate({a, b});
  CHECK(run.exit_code == 0);
  CHECK(CountLines(run.out, ": warning: ") == 0);
  const std::string c = dir.Write("c.yaml", Quota("team", "  max: {cpu: \"5\", memory: 8Gi}\n"));
  run = Validate({a, c});
  CHECK(run.exit_code == 0);
  CHECK(run.out.find(c + ":1: warning: ElasticQuota team/team: defined again (first at " + a +
                     ":1) with a different spec") != std::string::npos);
}

TEST_CASE("validate --cluster: the sum of mins must fit the nodes' allocatable") {
  TempDir dir;
  const std::string cluster = dir.Write(
      "cluster.yaml",
      "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus: {allocatable: {cpu: \"8\", "
      "memory: 32Gi, pods: \"110\"}}\n---\n" +
          Quota("existing",
                "  min: {cpu: \"4\", memory: 8Gi}\n  max: {cpu: \"8\", memory: 16Gi}\n"));
  const std::string quotas =
      dir.Write("quotas.yaml",
                Quota("new",
                      "  min: {cpu: \"6\", memory: 8Gi, nvidia.com/gpu: 1}\n  max: {cpu: \"8\", "
                      "memory: 16Gi, nvidia.com/gpu: 1}\n"));
  Run run = Validate({"--cluster", cluster, quotas});
  INFO(run.out);
  CHECK(run.exit_code == 1);
  CHECK(run.out.find(cluster + ": error: ElasticQuotas: spec.min.cpu: the ElasticQuotas' min cpu "
                               "sums to 10, more than the cluster's allocatable 8") !=
        std::string::npos);
  CHECK(run.out.find("spec.min.nvidia.com/gpu: no node has allocatable nvidia.com/gpu") !=
        std::string::npos);
  // The same nodes among the inputs only warn: the files may not describe the whole cluster.
  run = Validate({cluster, quotas});
  CHECK(run.exit_code == 0);
  CHECK(run.out.find("warning: ElasticQuotas: spec.min.cpu") != std::string::npos);
  CHECK(Validate({"--cluster", dir.path() + "/missing.yaml", quotas}).exit_code == 2);
}

TEST_CASE(
    "validate --cluster: quotas already in the cluster take part in namespace and hierarchy "
    "checks") {
  TempDir dir;
  const std::string cluster =
      dir.Write("cluster.yaml", Quota("org", "  min: {cpu: \"4\"}\n  max: {cpu: \"8\"}\n"));
  const std::string child = dir.Write(
      "child.yaml",
      Quota("team", "  min: {cpu: \"2\"}\n  max: {cpu: \"8\"}\n",
            "  annotations: {scheduling.capacity-extender.io/parent: org/org}\n") +
          "apiVersion: scheduling.x-k8s.io/v1alpha1\nkind: ElasticQuota\nmetadata: {name: other, "
          "namespace: org}\nspec: {min: {cpu: \"1\"}, max: {cpu: \"2\"}}\n");
  Run run = Validate({child});
  CHECK(run.exit_code == 1);
  CHECK(run.out.find("the parent ElasticQuota org/org is not defined in the given files") !=
        std::string::npos);
  run = Validate({"--cluster", cluster, child});
  INFO(run.out);
  CHECK(run.exit_code == 1);
  CHECK(CountLines(run.out, ": error: ") == 1);
  CHECK(run.out.find("ElasticQuota org/other: metadata.namespace: namespace org already has "
                     "ElasticQuota org/org") != std::string::npos);
}

TEST_CASE("pods requesting a resource no quota's min names: a warning on the first such pod") {
  TempDir dir;
  const std::string file = dir.Write(
      "pods.yaml",
      Quota("team", "  min: {cpu: \"2\"}\n  max: {cpu: \"4\"}\n") +
          "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: team}\nspec:\n  containers:\n"
          "  - name: c\n    resources: {requests: {cpu: \"1\", memory: 1Gi}}\n---\n"
          "apiVersion: v1\nkind: Pod\nmetadata: {name: elsewhere, namespace: free}\nspec:\n"
          "  containers: [{name: c, resources: {requests: {nvidia.com/gpu: 1}}}]\n");
  const Run run = Validate({file});
  INFO(run.out);
  CHECK(run.exit_code == 0);
  CHECK(run.out.find(file +
                     ":10: warning: Pod team/p: requests memory, which no ElasticQuota names "
                     "in min") != std::string::npos);
  CHECK(run.out.find("nvidia.com/gpu") == std::string::npos);  // no quota in namespace free
}

TEST_CASE("files that are not ours are skipped, with notes under --verbose") {
  TempDir dir;
  const std::string sweep = dir.Write(
      "sweep.yaml", "name: baseline\nworkload: generated\nseed: 1\nscoring: least-allocated\n");
  const std::string unrelated = dir.Write("values.yaml", "replicaCount: 2\nimage: nginx\n");
  const std::string docker = dir.Write("Dockerfile", "FROM debian:12\nRUN apt-get update\n");
  const std::string kustomization = dir.Write(
      "kustomization.yaml",
      "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: [a.yaml]\n");
  Run run = Validate({"-v", sweep, unrelated, docker, kustomization});
  INFO(run.out);
  CHECK(run.exit_code == 0);
  CHECK(run.out.find(sweep + ":1: note: skipped: not an extender config (name, workload, seed "
                             "not config keys)") != std::string::npos);
  CHECK(run.out.find(unrelated + ":1: note: skipped: neither a Kubernetes object") !=
        std::string::npos);
  CHECK(run.out.find(kustomization + ":1: note: Kustomization: skipped: not an ElasticQuota") !=
        std::string::npos);
  CHECK(CountLines(Validate({sweep, unrelated}).out, ": note: ") == 0);
  // --config forces config mode.
  run = Validate({"--config", sweep});
  CHECK(run.exit_code == 1);
  CHECK(run.out.find(sweep + ":1: error: extender config: name: unknown key") != std::string::npos);
}

TEST_CASE("a scalar document in a YAML file is an error") {
  TempDir dir;
  const std::string file = dir.Write("scalar.yaml", "just some text\n");
  const Run run = Validate({file});
  CHECK(run.exit_code == 1);
  CHECK(run.out.find("expected a Kubernetes object or an extender config, got a string") !=
        std::string::npos);
}

}  // namespace
}  // namespace quota_manifest_validator_test
}  // namespace capext

namespace capext {
namespace quota_manifest_validator_test {
namespace {

TEST_CASE("validate warns about a deviceClassMappings entry naming an unknown DeviceClass") {
  TempDir dir;
  const std::string config =
      dir.Write("extender-config.yaml",
                "scoring: least-allocated\n"
                "deviceClassMappings:\n"
                "  - {name: nvidia.com/gpu, deviceClassNames: [gpu.nvidia.com, gpu.nvidai.com]}\n");
  const std::string classes = dir.Write(
      "classes.yaml",
      "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: gpu.nvidia.com}\n"
      "spec: {}\n");
  const std::string quotas =
      dir.Write("quotas.yaml",
                Quota("a", "  max: {nvidia.com/gpu: \"4\", deviceclass/fpga.example.com: 1}\n"));
  const Run run = Validate({config, classes, quotas});
  INFO(run.out);
  CHECK(run.exit_code == 0);
  CHECK(CountLines(run.out, ": warning: ") == 1);
  CHECK(run.out.find(config + ":2: warning: extender config: deviceClassMappings: DeviceClass "
                              "gpu.nvidai.com is not among the DeviceClasses given "
                              "(gpu.nvidia.com)") != std::string::npos);
}

}  // namespace
}  // namespace quota_manifest_validator_test
}  // namespace capext
