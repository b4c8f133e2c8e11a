// The test admission rule of tests/plugins/at_most_pods_rule.cpp ("test-at-most-2-pods"), added
// as one file plus one registry line, reaches /explain and the reclaim loop's wake rules with no
// other edit (docs/architecture.md#adding-a-rule); tests/bench/sim/cli_test.cpp shows it in
// capacity-sim's --policy.
#include <string>

#include <catch2/catch.hpp>

#include "policies/admission_rules.h"
#include "tests/extender/reclaim/reclaim_harness.h"

namespace capext {
namespace test_rule_plugin_test {
namespace {

using namespace reclaim_testing;  // NOLINT: the reclaim harness

constexpr const char* kRule = "test-at-most-2-pods";

QuotaSemantics WithTestRule() {
  QuotaSemantics out;
  REQUIRE(WithAdmissionRules(QuotaSemantics::kCapacityExtender, kRule, &out).ok());
  return out;
}

// eq1 {min 10, max 20 cpu} on one 32-cpu node with two pods bound, and a third pending pod: the
// quota's max and the sum of mins take it; the test rule does not.
void LoadTwoBoundOnePending(Harness& h) {
  Change(h, [](ClusterState& s) {
    s.UpsertNode(MakeNode("n1", 32'000, 64 * kGi));
    s.UpsertQuota(MakeQuota("eq1", CpuList(10'000), CpuList(20'000)));
    s.UpsertPod(MakePod("eq1", "a").Uid("u-a").Cpu(1000).BoundTo("n1").Started(1));
    s.UpsertPod(MakePod("eq1", "b").Uid("u-b").Cpu(1000).BoundTo("n1").Started(2));
    s.UpsertPod(MakePod("eq1", "c").Uid("u-c").Cpu(1000).Created(kStartMs - 1000));
  });
}

TEST_CASE("test rule: the registry knows it and a profile picks it by name", "[plugins]") {
  REQUIRE(AdmissionRulePolicies().Find(kRule) != nullptr);
  const QuotaSemantics semantics = WithTestRule();
  REQUIRE(semantics.extra_rules().size() == 1);
  CHECK(semantics.extra_rules()[0]->name() == kRule);
  CHECK(AdmissionRuleNames(semantics) == kRule);
  CHECK((AdmissionChanges(semantics) & kChangesInTree) != 0);
  QuotaSemantics unknown;
  const Status bad =
      WithAdmissionRules(QuotaSemantics::kCapacityExtender, "no-such-rule", &unknown);
  CHECK(bad.code() == StatusCode::kInvalid);
  CHECK(bad.message().find(kRule) != std::string::npos);  // the known rules are listed
}

TEST_CASE("test rule: /explain gives its reason with its numbers", "[plugins]") {
  Harness h({}, WithTestRule());
  LoadTwoBoundOnePending(h);
  std::string body =
      R"({"metadata":{"name":"c","namespace":"eq1","uid":"u-c"},)"
      R"("spec":{"containers":[{"name":"c","resources":{"requests":{"cpu":"1"}}}]}})";
  const http::Response r = h.service.Explain(body);
  REQUIRE(r.status == 200);
  CHECK(r.body.find("test limit of 2 pods: pods used 2 + request 1 > 2") != std::string::npos);

  // Without the rule the same pod is admitted.
  Harness plain;
  LoadTwoBoundOnePending(plain);
  std::string again = body;
  CHECK(plain.service.Explain(again).body.find("test limit") == std::string::npos);
}

TEST_CASE("test rule: the wake rule of a pod it refuses comes from its declaration",
          "[plugins][wake]") {
  Harness h({}, WithTestRule());
  LoadTwoBoundOnePending(h);
  h.controller->RunOnce();
  REQUIRE(h.Verdict("u-c")->verdict.code == VerdictCode::kQuotaExceeded);
  const auto rule = h.controller->WakeRuleOf("u-c");
  REQUIRE(rule.has_value());
  const AdmissionRule* test_rule = AdmissionRulePolicies().Find(kRule)->make();
  CHECK((rule->on & test_rule->Declared()) == test_rule->Declared());
  // Nothing changed: not planned again. A pod of its quota gone (a change the rule declares):
  // planned again, and now it fits.
  CHECK(Pass(h).empty());
  Change(h, [](ClusterState& s) { s.DeletePod("u-a"); });
  CHECK(Pass(h) == Keys{"eq1/c"});
  CHECK(h.Verdict("u-c")->verdict.code == VerdictCode::kFits);
}

}  // namespace
}  // namespace test_rule_plugin_test
}  // namespace capext
