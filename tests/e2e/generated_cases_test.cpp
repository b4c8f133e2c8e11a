// The generated cases the differential test relies on (tests/support/random_cluster.h,
// cluster_case.h): deterministic per seed, printed snapshots that read back as the case and load
// in the real binary, and shrinking that keeps exactly what a failure needs.
#include <sys/wait.h>

#include <cstdio>
#include <map>
#include <string>

#include <fmt/format.h>
#include <catch2/catch.hpp>

#include "config/quota_hierarchy_check.h"
#include "config/snapshot.h"
#include "tests/support/random_cluster.h"
#include "tests/support/temp_dir.h"
#include "tests/support/test_paths.h"

namespace capext::testing {
namespace generated_cases_test {
namespace {

// Every decoded object, one line each, in a stable order.
std::string Describe(const Snapshot& s) {
  std::string out;
  for (const Node& n : s.nodes)
    out += fmt::format("node {} {} taints {}\n", n.name, n.allocatable.ToString(), n.taints.size());
  for (const Pod& p : s.pods) {
    out += fmt::format("pod {} uid {} node {} requests {} priority {} class {} nominated {}\n",
                       p.Key(), p.uid, p.node_name, p.requests.ToString(),
                       p.spec_priority.value_or(-1), p.priority_class_name, p.nominated_node_name);
  }
  for (const ElasticQuota& q : s.quotas) {
    out += fmt::format("quota {} parent '{}' min {} max {}\n", q.Key(), q.parent,
                       q.min ? q.min->ToString() : "absent", q.max ? q.max->ToString() : "absent");
  }
  for (const PriorityClass& pc : s.priority_classes)
    out += fmt::format("class {} {} {}\n", pc.name, pc.value, pc.global_default);
  for (const PodDisruptionBudget& pdb : s.pdbs)
    out += fmt::format("pdb {}/{} {}\n", pdb.ns, pdb.name, pdb.disruptions_allowed);
  return out;
}

Snapshot Parse(const std::string& text, const ClusterCase& c) {
  Snapshot s;
  const Status status = ParseSnapshot(text, "case", c.decode_options(), &s);
  INFO(status.message());
  REQUIRE(status.ok());
  return s;
}

}  // namespace

TEST_CASE("the generator is deterministic per seed", "[difftest][generator]") {
  for (uint64_t seed : {1u, 2u, 77u}) {
    RandomCluster a(seed), b(seed);
    const ClusterCase ca = a.Generate(), cb = b.Generate();
    CHECK(SnapshotJson(ca) == SnapshotJson(cb));
    CHECK(a.Question(ca).ToJson() == b.Question(cb).ToJson());
  }
  RandomCluster one(1), two(2);
  CHECK(SnapshotJson(one.Generate()) != SnapshotJson(two.Generate()));
}

TEST_CASE("a case's snapshot YAML reads back as its JSON does", "[difftest][generator]") {
  for (uint64_t seed = 1; seed <= 60; ++seed) {
    RandomCluster generator(seed);
    const ClusterCase c = generator.Generate();
    const std::string yaml = SnapshotYaml(c, {"a note", "another note"});
    INFO(yaml);
    CHECK(Describe(Parse(yaml, c)) == Describe(Parse(SnapshotJson(c), c)));
    ClusterState state;
    CHECK(BuildState(c, &state).ok());
  }
}

// The quotas a case puts in the tree (a "-dup" is a second quota of a namespace: not in it).
std::vector<ElasticQuota> TreeQuotas(const Snapshot& s) {
  std::vector<ElasticQuota> out;
  for (const ElasticQuota& q : s.quotas) {
    if (!q.name.ends_with("-dup")) out.push_back(q);
  }
  return out;
}

TEST_CASE("quota forests: depth 2 to 4, valid up to warnings, both kinds of parents",
          "[difftest][generator]") {
  RandomClusterOptions options;
  options.tree_percent = 100;
  options.invalid_parent_percent = 0;
  std::map<int, int> levels;  // clusters by their deepest level
  int grouping = 0, governing = 0, exact = 0, warnings = 0;
  for (uint64_t seed = 1; seed <= 150; ++seed) {
    RandomCluster generator(seed, options);
    const ClusterCase c = generator.Generate();
    const Snapshot s = Parse(SnapshotJson(c), c);
    const std::vector<ElasticQuota> quotas = TreeQuotas(s);
    std::string text;
    int errors = 0;
    for (const auto& p : CheckQuotaHierarchy(quotas, "in the generated case")) {
      text += p.finding.message + "\n";
      errors += p.finding.severity == Severity::kError ? 1 : 0;
      warnings += p.finding.severity == Severity::kWarning ? 1 : 0;
    }
    INFO("seed " << seed << "\n" << text << SnapshotYaml(c, {}));
    CHECK(errors == 0);
    int deepest = 0;
    for (const PlannedQuota& plan : generator.quota_plans())
      deepest = std::max(deepest, plan.depth + 1);
    ++levels[deepest];
    for (const ElasticQuota& parent : quotas) {
      ResourceList children_min;
      bool has_children = false;
      for (const ElasticQuota& child : quotas) {
        if (child.parent != parent.Key()) continue;
        has_children = true;
        if (child.min) children_min.Add(*child.min);
      }
      if (!has_children) continue;
      bool pods = false;
      for (const Pod& pod : s.pods)
        pods = pods || pod.ns == parent.ns;
      (pods ? governing : grouping) += 1;
      if (parent.min && !parent.min->entries().empty() && children_min == *parent.min) ++exact;
    }
  }
  CHECK(levels[1] == 0);
  for (int level : {2, 3, 4}) {
    INFO("clusters with " << level << " levels");
    CHECK(levels[level] >= 20);
  }
  CHECK(grouping >= 20);
  CHECK(governing >= 20);
  CHECK(exact >= 10);     // the children's mins sum to exactly the parent's
  CHECK(warnings >= 10);  // a child's max above its parent's
}

TEST_CASE("quota forests: an invalid parent fails validation and is a root at runtime",
          "[difftest][generator]") {
  RandomClusterOptions options;
  options.tree_percent = 100;
  options.invalid_parent_percent = 100;
  std::map<std::string, int> kinds;
  for (uint64_t seed = 1; seed <= 80; ++seed) {
    RandomCluster generator(seed, options);
    const ClusterCase c = generator.Generate();
    const Snapshot s = Parse(SnapshotJson(c), c);
    int errors = 0;
    for (const auto& p : CheckQuotaHierarchy(TreeQuotas(s), "in the generated case"))
      errors += p.finding.severity == Severity::kError ? 1 : 0;
    ClusterState state(c.semantics);
    REQUIRE(BuildState(c, &state).ok());
    const auto& problems = state.ledger().tree().problems();
    std::string text;
    for (const auto& p : problems) {
      text += p.quota + ": " + p.why + "\n";
      for (const char* kind : {"does not exist", "names itself", "cycle", "other API group"})
        kinds[kind] += p.why.find(kind) != std::string::npos ? 1 : 0;
    }
    INFO("seed " << seed << "\n" << text << SnapshotYaml(c, {}));
    CHECK(errors > 0);
    CHECK(!problems.empty());
  }
  for (const auto& [kind, count] : kinds) {
    INFO(kind);
    CHECK(count >= 5);
  }
  CHECK(kinds.size() == 4);
}

TEST_CASE("flat clusters: no quota names a parent", "[difftest][generator]") {
  RandomClusterOptions options;
  options.tree_percent = 0;
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    RandomCluster generator(seed, options);
    const ClusterCase c = generator.Generate();
    for (const ElasticQuota& q : Parse(SnapshotJson(c), c).quotas)
      CHECK(q.parent.empty());
  }
}

TEST_CASE("ShrinkCase keeps exactly what the failure needs", "[difftest][generator]") {
  RandomCluster generator(5);
  ClusterCase c;
  while (c.ObjectsOf("Pod").size() < 3 || c.held.empty())
    c = generator.Generate();
  const std::string key = PodKey(*c.ObjectsOf("Pod")[1]);
  // The "failure": the pod and node n1 are both there.
  auto fails = [&](const ClusterCase& k) {
    bool node = false;
    for (const JsonTree* n : k.ObjectsOf("Node"))
      node = node || ObjectName(*n) == "n1";
    return node && k.FindPod(key) != nullptr;
  };
  REQUIRE(fails(c));
  const ClusterCase minimal = ShrinkCase(c, fails);
  CHECK(minimal.objects.size() == 2);
  CHECK(minimal.held.empty());
  CHECK(fails(minimal));
}

TEST_CASE("a printed minimal snapshot loads in capacity-extender explain",
          "[difftest][generator][e2e]") {
  RandomCluster generator(3);
  ClusterCase c = generator.Generate();
  const JsonTree question = generator.Question(c);
  if (c.FindPod(PodKey(question)) == nullptr) c.objects.push_back(question);
  TempDir dir;
  const std::string path = dir.Write("case.yaml", SnapshotYaml(c, {"printed by a test"}));
  const std::string cmd = fmt::format(
      "'{}' explain --snapshot '{}' --quota-semantics {} '{}' 2>&1", capext::test::ExtenderBinary(),
      path,
      c.semantics == QuotaSemantics::kSchedulerPlugins ? "scheduler-plugins" : "capacity-extender",
      ObjectName(question));
  FILE* pipe = popen(cmd.c_str(), "r");
  REQUIRE(pipe != nullptr);
  std::string out;
  char buf[4096];
  std::size_t n = 0;
  while ((n = fread(buf, 1, sizeof buf, pipe)) > 0)
    out.append(buf, n);
  const int status = pclose(pipe);
  INFO(cmd << "\n" << out);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  CHECK(out.find("pod " + ObjectName(question)) != std::string::npos);
  CHECK(out.find("reclaim: ") != std::string::npos);
}

}  // namespace generated_cases_test
}  // namespace capext::testing
