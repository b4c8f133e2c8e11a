// Tests for CheckQuotaHierarchy (Boost.Graph: parents, cycles, children within their parent).
#include "config/quota_hierarchy_check.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

namespace capext {
namespace quota_hierarchy_check_test {
namespace {

ElasticQuota Q(const std::string& key, std::optional<ResourceList> min,
               std::optional<ResourceList> max, const std::string& parent = "") {
  ElasticQuota q;
  q.ns = key.substr(0, key.find('/'));
  q.name = key.substr(key.find('/') + 1);
  q.min = std::move(min);
  q.max = std::move(max);
  q.parent = parent;
  return q;
}

using CheckedProblem = QuotaSetProblem;

std::vector<CheckedProblem> Check(const std::vector<ElasticQuota>& quotas) {
  return CheckQuotaHierarchy(quotas, "here");
}

// "key field: message", with "(warning) " before the message of a warning.
std::vector<std::string> Problems(const std::vector<ElasticQuota>& quotas) {
  std::vector<std::string> out;
  for (const auto& p : CheckQuotaHierarchy(quotas, "here")) {
    out.push_back(quotas[p.quota].Key() + " " + p.finding.field + ": " +
                  (p.finding.severity == Severity::kWarning ? "(warning) " : "") +
                  p.finding.message);
  }
  return out;
}

TEST_CASE("a tree whose children fit has no problems") {
  CHECK(Problems({
                     Q("org/org", ResourceList{{"cpu", 8000}}, ResourceList{{"cpu", 16000}}),
                     Q("a/a", ResourceList{{"cpu", 4000}}, ResourceList{{"cpu", 16000}}, "org/org"),
                     Q("b/b", ResourceList{{"cpu", 4000}}, std::nullopt, "org/org"),
                     Q("b1/b1", ResourceList{{"cpu", 4000}}, ResourceList{{"gpu", 9}}, "b/b"),
                     Q("c/c", std::nullopt, ResourceList{{"cpu", 1000}}, "org/org"),
                 })
            .empty());
}

TEST_CASE("a missing parent, and a quota that is its own parent") {
  CHECK(Problems({Q("a/a", {}, {}, "x/x"), Q("b/b", {}, {}, "b/b")}) ==
        std::vector<std::string>{
            "a/a metadata.annotations[scheduling.capacity-extender.io/parent]: the parent "
            "ElasticQuota x/x is not defined here",
            "b/b metadata.annotations[scheduling.capacity-extender.io/parent]: the quota names "
            "itself as its parent"});
}

TEST_CASE("a cycle is reported on each member, with the whole loop") {
  const std::vector<std::string> p = Problems({
      Q("a/a", {}, {}, "b/b"), Q("b/b", {}, {}, "c/c"), Q("c/c", {}, {}, "a/a"),
      Q("d/d", ResourceList{{"cpu", 1}}, {}, "a/a"),  // hangs off the cycle: not in it
  });
  REQUIRE(p.size() == 3);
  CHECK(p[0].ends_with("the hierarchy has a cycle: a/a -> b/b -> c/c -> a/a"));
  CHECK(p[1].ends_with("the hierarchy has a cycle: b/b -> c/c -> a/a -> b/b"));
  CHECK(p[2].ends_with("the hierarchy has a cycle: c/c -> a/a -> b/b -> c/c"));
}

TEST_CASE("children's min must sum within the parent's min; a resource it lacks counts as 0") {
  CHECK(Problems({
            Q("org/org", ResourceList{{"cpu", 4000}}, std::nullopt),
            Q("a/a", ResourceList{{"cpu", 3000}, {"memory", 1024}}, std::nullopt, "org/org"),
            Q("b/b", ResourceList{{"cpu", 2000}}, std::nullopt, "org/org"),
        }) == std::vector<std::string>{
                  "org/org spec.min.cpu: the children's min cpu sums to 5 (a/a 3, b/b 2), more "
                  "than this parent's min cpu 4",
                  "org/org spec.min.memory: the children's min memory sums to 1Ki (a/a 1Ki), "
                  "more than this parent's min memory 0"});
}

TEST_CASE("a child's max above the parent's max, where both name the resource, is a warning") {
  CHECK(Problems({
            Q("org/org", std::nullopt, ResourceList{{"cpu", 4000}}),
            Q("a/a", std::nullopt, ResourceList{{"cpu", 4500}, {"memory", 1 << 20}}, "org/org"),
        }) == std::vector<std::string>{"a/a spec.max.cpu: (warning) max cpu 4500m exceeds the "
                                       "parent org/org's max cpu 4: the parent caps it anyway"});
}

TEST_CASE("a parent in the other API group is an error, and the link is not followed") {
  std::vector<ElasticQuota> quotas = {
      Q("org/org", ResourceList{{"cpu", 1000}}, ResourceList{{"cpu", 1000}}),
      Q("a/a", ResourceList{{"cpu", 4000}}, ResourceList{{"cpu", 8000}}, "org/org"),
      Q("b/b", ResourceList{{"cpu", 1000}}, std::nullopt, "a/a"),
  };
  quotas[0].api_group = "scheduling.sigs.k8s.io";
  quotas[1].api_group = "scheduling.x-k8s.io";
  // b's group is unknown (""): it matches either.
  const std::vector<CheckedProblem> checked = Check(quotas);
  CHECK(Problems(quotas) ==
        std::vector<std::string>{
            "a/a metadata.annotations[scheduling.capacity-extender.io/parent]: the parent "
            "ElasticQuota org/org is a scheduling.sigs.k8s.io quota and this one a "
            "scheduling.x-k8s.io quota: a parent must be in the same API group"});
  REQUIRE(checked.size() == 1);
  CHECK(checked[0].other == std::optional<std::size_t>(0));
  CHECK(checked[0].finding.severity == Severity::kError);
  // In one group, the same three are checked as a tree: a's min does not fit org's.
  quotas[0].api_group = quotas[1].api_group;
  const std::vector<std::string> p = Problems(quotas);
  REQUIRE(p.size() == 2);
  CHECK(p[0].starts_with("org/org spec.min.cpu: the children's min cpu sums to 4 (a/a 4)"));
  CHECK(p[1].starts_with("a/a spec.max.cpu: (warning) max cpu 8 exceeds"));
}

TEST_CASE("missing parents, self-parents and cycles are errors") {
  const std::vector<CheckedProblem> problems =
      Check({Q("a/a", {}, {}, "x/x"), Q("b/b", {}, {}, "b/b"), Q("c/c", {}, {}, "d/d"),
             Q("d/d", {}, {}, "c/c")});
  REQUIRE(problems.size() == 4);
  for (const auto& p : problems)
    CHECK(p.finding.severity == Severity::kError);
}

}  // namespace
}  // namespace quota_hierarchy_check_test
}  // namespace capext
