// The quota plan YAML and how a policy turns it into ElasticQuotas.
#include "bench/sim/quota_plan.h"

#include <catch2/catch.hpp>

namespace capext {
namespace {

TEST_CASE("a quota plan parses quantities, optional lists and priorities", "[sim][quotas]") {
  QuotaPlan plan;
  Status s = ParseQuotaPlan(
      "a:\n  min: {cpu: 2, memory: 1Gi}\n  max: {cpu: \"4500m\", nvidia.com/gpu: 2}\n  priority: 100\n"
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
  CHECK(s.message() == "p.yaml: a.mni: unknown key (expected min, max, priority)");
  s = ParseQuotaPlan("a:\n  min: {cpu: lots}\n", "p.yaml", &plan);
  CHECK(s.message().find("p.yaml: a.min.cpu: ") == 0);
  s = ParseQuotaPlan("- a\n", "p.yaml", &plan);
  CHECK_FALSE(s.ok());
}

TEST_CASE("static policy quotas have max equal to min", "[sim][quotas]") {
  TenantQuota q{ResourceList{{"cpu", 2000}}, ResourceList{{"cpu", 4000}, {"memory", 10}}, std::nullopt};
  ElasticQuota normal = ElasticQuotaFor("t", q, false);
  CHECK(normal.ns == "t");
  CHECK(normal.max->Get("cpu") == 4000);
  ElasticQuota fixed = ElasticQuotaFor("t", q, true);
  CHECK(fixed.max->Get("cpu") == 2000);
  CHECK(fixed.max->Get("memory") == 0);  // min has no memory: 0 guaranteed, so 0 allowed
  CHECK(fixed.min == q.min);
}

TEST_CASE("the shipped Alibaba plan sums below the trace cluster and lets tenants borrow", "[sim][quotas]") {
  QuotaPlan plan;
  REQUIRE(LoadQuotaPlanFile(std::string(CE_SOURCE_DIR) + "/bench/examples/alibaba-quotas.yaml", &plan).ok());
  for (const char* t : {"ls", "burstable", "be", "guaranteed"}) CHECK(plan.tenants.count(t) == 1);
  int64_t min_cpu = 0, min_gpu = 0;
  for (const auto& [name, q] : plan.tenants) {
    REQUIRE(q.min);
    REQUIRE(q.max);
    min_cpu += q.min->Get("cpu");
    min_gpu += q.min->Get("nvidia.com/gpu");
    for (const char* r : {"cpu", "memory", "nvidia.com/gpu"}) CHECK(q.max->Get(r) > q.min->Get(r));
  }
  CHECK(min_cpu < 125'514'000);  // the 1,523 nodes' cpu
  CHECK(min_gpu < 6212);
}

}  // namespace
}  // namespace capext
