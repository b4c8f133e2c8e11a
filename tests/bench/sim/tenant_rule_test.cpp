// Tenant assignment rules for trace pods: qos classes and FNV-1a hashing.
#include "bench/sim/tenant_rule.h"

#include <catch2/catch.hpp>
#include <map>

namespace capext {
namespace tenant_rule_test {
namespace {

TEST_CASE("tenant rules parse", "[sim][tenants]") {
  StatusOr<TenantRule> rule = ParseTenantRule("qos");
  REQUIRE(rule.ok());
  CHECK(rule->kind == TenantRule::Kind::kQos);
  CHECK(rule->ToString() == "qos");
  rule = ParseTenantRule("hash:8");
  REQUIRE(rule.ok());
  CHECK(rule->kind == TenantRule::Kind::kHash);
  CHECK(rule->buckets == 8);
  CHECK(rule->ToString() == "hash:8");
  for (const char* bad :
       {"", "hash", "hash:", "hash:0", "hash:-1", "hash:3x", "hash:10001", "QOS", "tenant"}) {
    INFO(bad);
    rule = ParseTenantRule(bad);
    CHECK_FALSE(rule.ok());
    CHECK(rule.status().message().find("--tenants") == 0);
  }
}

TEST_CASE("FNV-1a 64 matches the published test vectors", "[sim][tenants]") {
  CHECK(Fnv1a64("") == 0xcbf29ce484222325ull);
  CHECK(Fnv1a64("a") == 0xaf63dc4c8601ec8cull);
  CHECK(Fnv1a64("foobar") == 0x85944171f73967e8ull);
}

TEST_CASE("qos classes map to lower-case namespaces", "[sim][tenants]") {
  TenantRule qos;
  CHECK(TenantOf(qos, "p", "LS") == "ls");
  CHECK(TenantOf(qos, "p", "Burstable") == "burstable");
  CHECK(TenantOf(qos, "p", "BE") == "be");
  CHECK(TenantOf(qos, "p", "Guaranteed") == "guaranteed");
  CHECK(TenantOf(qos, "p", "") == "unknown");
}

TEST_CASE("hash tenants are stable and spread", "[sim][tenants]") {
  TenantRule rule{TenantRule::Kind::kHash, 4};
  CHECK(TenantOf(rule, "openb-pod-0000", "LS") ==
        "tenant-" + std::to_string(Fnv1a64("openb-pod-0000") % 4));
  CHECK(TenantOf(rule, "openb-pod-0000", "BE") ==
        TenantOf(rule, "openb-pod-0000", "LS"));  // qos ignored
  std::map<std::string, int> counts;
  for (int i = 0; i < 4000; ++i)
    ++counts[TenantOf(rule, "openb-pod-" + std::to_string(i), "")];
  REQUIRE(counts.size() == 4);
  for (const auto& [tenant, n] : counts)
    CHECK(n > 800);
}

}  // namespace
}  // namespace tenant_rule_test
}  // namespace capext
