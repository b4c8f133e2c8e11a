// The quota plan YAML and how a policy turns it into ElasticQuotas.
#include "bench/sim/quota_plan.h"

#include <catch2/catch.hpp>
#include <map>
#include <string>
#include <vector>

#include "tests/support/test_paths.h"

namespace capext {
namespace quota_plan_test {
namespace {

TEST_CASE("a quota plan parses quantities, optional lists and priorities", "[sim][quotas]") {
  QuotaPlan plan;
  Status s = ParseQuotaPlan(
      "a:\n  min: {cpu: 2, memory: 1Gi}\n  max: {cpu: \"4500m\", nvidia.com/gpu: 2}\n  priority: "
      "100\n"
      "b:\n  max: {cpu: 1}\n",
      "plan.yaml", &plan);
  REQUIRE(s.ok());
  REQUIRE(plan.tenants.size() == 2);
  const TenantQuota& a = plan.tenants.at("a");
  CHECK(a.min->Get("cpu") == 2000);
  CHECK(a.min->Get("memory") == int64_t{1} << 30);
  CHECK(a.max->Get("cpu") == 4500);
  CHECK(a.max->Get("nvidia.com/gpu") == 2);
  CHECK(a.priority == 100);
  CHECK_FALSE(plan.tenants.at("b").min.has_value());
  CHECK_FALSE(plan.tenants.at("b").priority.has_value());
}

TEST_CASE("quota plan errors name the file and field", "[sim][quotas]") {
  QuotaPlan plan;
  Status s = ParseQuotaPlan("a:\n  min: {cpu: 5}\n  max: {cpu: 4}\n", "p.yaml", &plan);
  REQUIRE_FALSE(s.ok());
  CHECK(s.message() == "p.yaml: a: min cpu 5 is above max 4");
  s = ParseQuotaPlan("a:\n  mni: {cpu: 5}\n", "p.yaml", &plan);
  CHECK(s.message() == "p.yaml: a.mni: unknown key (expected min, max, priority, parent, weight)");
  s = ParseQuotaPlan("a:\n  min: {cpu: lots}\n", "p.yaml", &plan);
  CHECK(s.message().find("p.yaml: a.min.cpu: ") == 0);
  s = ParseQuotaPlan("- a\n", "p.yaml", &plan);
  CHECK_FALSE(s.ok());
}

TEST_CASE("a plan tenant's weight is its quota's fair-share weight", "[sim][quotas][fair]") {
  QuotaPlan plan;
  REQUIRE(ParseQuotaPlan("a:\n  weight: 2.5\nb:\n  weight: \"3\"\nc: {}\n", "p.yaml", &plan).ok());
  CHECK(ElasticQuotaFor("a", plan.tenants.at("a"), false).weight_milli == 2500);
  CHECK(ElasticQuotaFor("b", plan.tenants.at("b"), false).weight_milli == 3000);
  CHECK(ElasticQuotaFor("c", plan.tenants.at("c"), false).weight_milli == 1000);
  const Status s = ParseQuotaPlan("a:\n  weight: -1\n", "p.yaml", &plan);
  CHECK(s.message() ==
        "p.yaml: a.weight: annotation scheduling.capacity-extender.io/fair-share-weight \"-1\" is "
        "not a weight: a decimal from 0 to 1000 with at most 3 decimals");
}

TEST_CASE("static policy quotas have max equal to min", "[sim][quotas]") {
  TenantQuota q{ResourceList{{"cpu", 2000}}, ResourceList{{"cpu", 4000}, {"memory", 10}},
                std::nullopt};
  ElasticQuota normal = ElasticQuotaFor("t", q, false);
  CHECK(normal.ns == "t");
  CHECK(normal.max->Get("cpu") == 4000);
  ElasticQuota fixed = ElasticQuotaFor("t", q, true);
  CHECK(fixed.max->Get("cpu") == 2000);
  CHECK(fixed.max->Get("memory") == 0);  // min has no memory: 0 guaranteed, so 0 allowed
  CHECK(fixed.min == q.min);
}

TEST_CASE("the shipped Alibaba plan sums below the trace cluster and lets tenants borrow",
          "[sim][quotas]") {
  QuotaPlan plan;
  REQUIRE(LoadQuotaPlanFile(capext::test::SourcePath("bench/examples/alibaba-quotas.yaml"), &plan)
              .ok());
  for (const char* t : {"ls", "burstable", "be", "guaranteed"})
    CHECK(plan.tenants.count(t) == 1);
  int64_t min_cpu = 0, min_gpu = 0;
  for (const auto& [name, q] : plan.tenants) {
    REQUIRE(q.min);
    REQUIRE(q.max);
    min_cpu += q.min->Get("cpu");
    min_gpu += q.min->Get("nvidia.com/gpu");
    for (const char* r : {"cpu", "memory", "nvidia.com/gpu"})
      CHECK(q.max->Get(r) > q.min->Get(r));
  }
  CHECK(min_cpu < 125'514'000);  // the 1,523 nodes' cpu
  CHECK(min_gpu < 6212);
}

TEST_CASE("a plan may declare parents; a parent may be a pure grouping entry", "[sim][quotas]") {
  QuotaPlan plan;
  REQUIRE(ParseQuotaPlan("org:\n  min: {cpu: 8}\n  max: {cpu: 12}\n"
                         "a:\n  parent: org\n  min: {cpu: 4}\n  max: {cpu: 12}\n  priority: 5\n"
                         "b:\n  parent: org\n  min: {cpu: 4}\n",
                         "tree.yaml", &plan)
              .ok());
  CHECK(plan.HasHierarchy());
  CHECK(plan.warnings.empty());
  CHECK(plan.tenants.at("a").parent == "org");
  CHECK(plan.tenants.at("org").parent.empty());
  // The engine's ElasticQuotas carry the annotation, naming the parent's quota org/org.
  const ElasticQuota a = ElasticQuotaFor("a", plan.tenants.at("a"), false);
  CHECK(a.parent == "org/org");
  CHECK(a.Key() == "a/a");
  CHECK(ElasticQuotaFor("org", plan.tenants.at("org"), false).parent.empty());
  CHECK(ElasticQuotaFor("a", plan.tenants.at("a"), true).parent == "org/org");  // static too

  QuotaPlan flat;
  REQUIRE(ParseQuotaPlan("a:\n  min: {cpu: 1}\n", "flat.yaml", &flat).ok());
  CHECK_FALSE(flat.HasHierarchy());
}

TEST_CASE("a plan's hierarchy is validated: missing parents, cycles, children's mins",
          "[sim][quotas]") {
  QuotaPlan plan;
  Status s = ParseQuotaPlan("a:\n  parent: org\n  min: {cpu: 1}\n", "p.yaml", &plan);
  CHECK(s.message() ==
        "p.yaml: a.parent: the parent ElasticQuota org/org is not defined in the plan");
  plan = {};
  s = ParseQuotaPlan("a:\n  parent: b\nb:\n  parent: c\nc:\n  parent: a\n", "p.yaml", &plan);
  CHECK(s.message() ==
        "p.yaml: a.parent: the hierarchy has a cycle: a/a -> b/b -> c/c -> a/a; "
        "p.yaml: b.parent: the hierarchy has a cycle: b/b -> c/c -> a/a -> b/b; "
        "p.yaml: c.parent: the hierarchy has a cycle: c/c -> a/a -> b/b -> c/c");
  plan = {};
  s = ParseQuotaPlan("a:\n  parent: a\n", "p.yaml", &plan);
  CHECK(s.message() == "p.yaml: a.parent: the quota names itself as its parent");
  plan = {};
  s = ParseQuotaPlan(
      "org:\n  min: {cpu: 4}\na:\n  parent: org\n  min: {cpu: 3}\n"
      "b:\n  parent: org\n  min: {cpu: 2}\n",
      "p.yaml", &plan);
  CHECK(s.message() ==
        "p.yaml: org.min.cpu: the children's min cpu sums to 5 (a/a 3, b/b 2), more "
        "than this parent's min cpu 4");
  plan = {};
  CHECK(ParseQuotaPlan("a:\n  parent: 3\n", "p.yaml", &plan).message() ==
        "p.yaml: a.parent: expected the name of another tenant of the plan");
  // A child's max above its parent's is allowed, with a warning (the parent caps it).
  plan = {};
  REQUIRE(
      ParseQuotaPlan("org:\n  max: {cpu: 4}\na:\n  parent: org\n  max: {cpu: 6}\n", "p.yaml", &plan)
          .ok());
  CHECK(plan.warnings ==
        std::vector<std::string>{"p.yaml: a.max.cpu: max cpu 6 exceeds the parent "
                                 "org/org's max cpu 4: the parent caps it anyway"});
}

TEST_CASE("the shipped two-level Alibaba plan groups the flat plan's tenants under two roots",
          "[sim][quotas]") {
  QuotaPlan flat, tree;
  REQUIRE(LoadQuotaPlanFile(capext::test::SourcePath("bench/examples/alibaba-quotas.yaml"), &flat)
              .ok());
  REQUIRE(
      LoadQuotaPlanFile(capext::test::SourcePath("bench/examples/alibaba-org-quotas.yaml"), &tree)
          .ok());
  CHECK(tree.warnings.empty());
  CHECK(tree.tenants.size() == flat.tenants.size() + 2);
  std::map<std::string, ResourceList> child_mins;
  ResourceList flat_mins, root_mins;
  for (const auto& [name, q] : flat.tenants) {
    INFO(name);
    REQUIRE(tree.tenants.count(name) == 1);
    const TenantQuota& t = tree.tenants.at(name);
    CHECK(t.min == q.min);  // the QoS classes' own quotas are the flat plan's
    CHECK(t.max == q.max);
    CHECK(t.priority == q.priority);
    REQUIRE_FALSE(t.parent.empty());
    child_mins[t.parent].Add(*t.min);
    flat_mins.Add(*q.min);
  }
  CHECK(tree.tenants.at("ls").parent == tree.tenants.at("guaranteed").parent);
  CHECK(tree.tenants.at("burstable").parent == tree.tenants.at("be").parent);
  REQUIRE(child_mins.size() == 2);
  for (const auto& [root, mins] : child_mins) {
    INFO(root);
    const TenantQuota& r = tree.tenants.at(root);
    CHECK(r.parent.empty());
    CHECK(*r.min == mins);  // each root's min is exactly its children's
    root_mins.Add(*r.min);
    // The root caps its children together: below the sum of their maxes in every resource.
    ResourceList kid_max;
    for (const auto& [name, q] : tree.tenants) {
      if (q.parent == root) kid_max.Add(*q.max);
    }
    for (const auto& [resource, amount] : r.max->entries())
      CHECK(amount < kid_max.Get(resource));
  }
  CHECK(root_mins == flat_mins);  // the cluster-wide rule over the roots sees the flat sums
}

}  // namespace
}  // namespace quota_plan_test
}  // namespace capext
