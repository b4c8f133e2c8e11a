// Tests for CheckQuotaObject, the per-object checks shared by validate and the webhook.
#include "config/quota_object_check.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <limits>
#include <string>
#include <vector>

#include "core/quota_semantics.h"

namespace capext {
namespace quota_object_check_test {
namespace {

struct Checked {
  CheckedQuota quota;
  std::vector<ValidationFinding> findings;

  // "line field: message" of every finding of `severity`.
  std::vector<std::string> Of(Severity severity) const {
    std::vector<std::string> out;
    for (const auto& f : findings) {
      if (f.severity == severity)
        out.push_back(std::to_string(f.line) + " " + f.field + ": " + f.message);
    }
    return out;
  }
  std::vector<std::string> Errors() const { return Of(Severity::kError); }
  std::vector<std::string> Warnings() const { return Of(Severity::kWarning); }
};

Checked Check(const std::string& text, const QuotaCheckOptions& options = {}) {
  Checked c;
  CheckQuotaObject(YAML::Load(text), options, &c.quota, &c.findings);
  return c;
}

const std::string kHead =
    "apiVersion: scheduling.x-k8s.io/v1alpha1\n"
    "kind: ElasticQuota\n"
    "metadata: {name: q, namespace: ns}\n";

TEST_CASE("a good quota: no findings, amounts in decision units, lines recorded") {
  const Checked c = Check(kHead +
                          "spec:\n"
                          "  min: {cpu: 500m, memory: 1Gi, nvidia.com/gpu: 1}\n"
                          "  max:\n"
                          "    cpu: 2\n"
                          "    memory: 2Gi\n"
                          "    nvidia.com/gpu: \"2\"\n"
                          "status: {used: {cpu: \"1\"}}\n");
  CHECK(c.findings.empty());
  CHECK(c.quota.has_name);
  CHECK(c.quota.has_namespace);
  CHECK(c.quota.quota.Key() == "ns/q");
  CHECK(c.quota.quota.api_group == "scheduling.x-k8s.io");
  REQUIRE(c.quota.quota.min);
  CHECK(c.quota.quota.min->Get("cpu") == 500);
  CHECK(c.quota.quota.min->Get("memory") == int64_t{1} << 30);
  REQUIRE(c.quota.quota.max);
  CHECK(c.quota.quota.max->Get("cpu") == 2000);
  CHECK(c.quota.LineOf("spec.max.memory") == 8);
  CHECK(c.quota.LineOf("spec.nothing") == 1);
}

TEST_CASE("the legacy group is read; other groups and versions are errors") {
  CHECK(Check("apiVersion: scheduling.sigs.k8s.io/v1alpha1\nkind: ElasticQuota\n"
              "metadata: {name: q, namespace: ns}\nspec: {max: {cpu: 1, memory: 1Gi}}\n")
            .findings.empty());
  const Checked c = Check(
      "apiVersion: scheduling.x-k8s.io/v1beta1\nkind: ElasticQuota\n"
      "metadata: {name: q, namespace: ns}\nspec: {max: {cpu: 1, memory: 1Gi}}\n");
  REQUIRE(c.Errors().size() == 1);
  CHECK(
      c.Errors()[0].starts_with("1 apiVersion: \"scheduling.x-k8s.io/v1beta1\" is not an "
                                "ElasticQuota apiVersion"));
}

TEST_CASE("every error of an object is reported, with its line") {
  const Checked c = Check(
      "apiVersion: scheduling.x-k8s.io/v1alpha1\n"
      "kind: ElasticQuota\n"
      "metadata:\n"
      "  name: Team_A\n"
      "  namespace: ns\n"
      "  labels: {tier: 1}\n"
      "  owner: me\n"
      "spec:\n"
      "  min: {cpu: \"1.2.3\", memory: -1Gi, pods: {n: 1}}\n"
      "  max: {cpu: 2, cpu: 3, memory: 1Gi}\n"
      "status: {used: {cpu: lots}, free: {}}\n");
  const std::vector<std::string> expected = {
      "4 metadata.name: \"Team_A\" is not a valid name",
      "6 metadata.labels[tier]: values must be strings, got a number (quote it)",
      "7 metadata.owner: unknown field \"owner\"",
      "9 spec.min.cpu: quantity \"1.2.3\": unexpected character '.' at offset 3",
      "9 spec.min.memory: quantity \"-1Gi\" is negative",
      "9 spec.min.pods: expected a quantity, got a map",
      "10 spec.max.cpu: given twice",
      "11 status.free: unknown field \"free\"",
      "11 status.used.cpu: quantity \"lots\"",
  };
  const std::vector<std::string> errors = c.Errors();
  CHECK(errors.size() == expected.size());
  for (const auto& e : expected) {
    INFO(e);
    bool found = false;
    for (const auto& got : errors)
      found |= got.starts_with(e);
    CHECK(found);
  }
}

TEST_CASE("missing pieces: apiVersion, kind, metadata, spec") {
  const Checked c = Check("metadata: {namespace: ns}\n");
  const std::vector<std::string> errors = c.Errors();
  CHECK(std::find(errors.begin(), errors.end(), "1 apiVersion: missing") != errors.end());
  CHECK(std::find(errors.begin(), errors.end(), "1 kind: missing") != errors.end());
  CHECK(std::find(errors.begin(), errors.end(), "1 metadata.name: missing") != errors.end());
  CHECK(c.Warnings() ==
        std::vector<std::string>{"1 spec: no min and no max: this quota limits nothing"});
  CHECK_FALSE(c.quota.has_name);
  QuotaCheckOptions implied;
  implied.kind_implied = true;
  implied.request_name = "q";
  const std::vector<std::string> fewer = Check("metadata: {namespace: ns}\n", implied).Errors();
  CHECK(fewer == std::vector<std::string>{"1 apiVersion: missing"});
}

TEST_CASE("the parent annotation must be <namespace>/<name>") {
  const auto with_parent = [](const std::string& value) {
    return Check(
        "apiVersion: scheduling.x-k8s.io/v1alpha1\nkind: ElasticQuota\nmetadata:\n"
        "  name: q\n  namespace: ns\n  annotations:\n"
        "    scheduling.capacity-extender.io/parent: \"" +
        value +
        "\"\n"
        "spec: {max: {cpu: 1, memory: 1Gi}}\n");
  };
  const Checked good = with_parent("org/org");
  CHECK(good.findings.empty());
  CHECK(good.quota.quota.parent == "org/org");
  CHECK(good.quota.LineOf(ParentAnnotationField()) == 7);
  for (const std::string bad : {"org", "/org", "org/", "a/b/c"}) {
    INFO(bad);
    const Checked c = with_parent(bad);
    CHECK(c.Errors().size() == 1);
    CHECK(c.quota.quota.parent.empty());
  }
}

TEST_CASE("the reference's traps are warnings") {
  const Checked c = Check(kHead +
                          "spec:\n"
                          "  min: {cpu: 1, memory: 1Gi, example.com/widget: 1, pods: 2}\n"
                          "  max: {cpu: 2, GPU: 1}\n");
  CHECK(c.Errors().empty());
  const std::vector<std::string> w = c.Warnings();
  REQUIRE(w.size() == 4);
  CHECK(w[0].starts_with("6 spec.max.GPU: no pod can request resource \"GPU\""));
  CHECK(
      w[1].starts_with("5 spec.min.example.com/widget: example.com/widget is in min but not in "
                       "max: it has no ceiling"));
  CHECK(
      w[2].starts_with("5 spec.min.memory: memory is in min but not in max: unbounded under "
                       "capacity-extender semantics"));
  CHECK(w[3].starts_with("5 spec.min.pods: pods is in min but not in max"));
  // A wholly absent max is unbounded under both semantics: nothing to warn about.
  CHECK(Check(kHead + "spec: {min: {cpu: 1}}\n").findings.empty());
}

TEST_CASE("a rejected max entry is not also reported as missing") {
  const Checked c =
      Check(kHead + "spec:\n  min: {cpu: 1, memory: 1Gi}\n  max: {cpu: 2, memory: -1}\n");
  CHECK(c.Errors().size() == 1);
  CHECK(c.Warnings().empty());
}

TEST_CASE("JSON objects are checked the same way") {
  const Checked c = Check(R"({"apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "ElasticQuota",
  "metadata": {"name": "q", "namespace": "ns", "annotations": {"a": "\u00e9"}},
  "spec": {"min": {"cpu": 3, "memory": "1Gi"}, "max": {"cpu": 2, "memory": "1Gi"}}})");
  REQUIRE(c.Errors().size() == 1);
  CHECK(c.Errors()[0] ==
        "3 spec.min.cpu: min cpu 3 is greater than max cpu 2: the guarantee can "
        "never be used");
}

TEST_CASE("quantities too large for exact int64 arithmetic are warnings saying what happens") {
  const Checked c = Check(kHead +
                          "spec:\n"
                          "  min: {memory: 1e30}\n"
                          "  max: {cpu: 99999999999999999999999999Ei, memory: 2e30}\n"
                          "status: {used: {cpu: 1e30}}\n");
  CHECK(c.Errors().empty());
  const std::vector<std::string> w = c.Warnings();
  REQUIRE(w.size() == 3);
  CHECK(w[0] ==
        "5 spec.min.memory: quantity \"1e30\" is too large for exact arithmetic: memory is "
        "counted in int64 units, below 9223372036854775807; the extender reads it as "
        "9223372036854775807, which every check treats as no limit, so this min never counts as "
        "exceeded in memory (the quota never borrows memory) and the sum of all mins for memory "
        "is unbounded (the sum-of-mins check never rejects a pod for memory)");
  CHECK(w[1] ==
        "6 spec.max.cpu: quantity \"99999999999999999999999999Ei\" is too large for exact "
        "arithmetic: cpu is counted in int64 milli-units, below 9223372036854775807m; the "
        "extender reads it as 9223372036854775807m, which every check treats as no limit, so "
        "this max does not limit cpu at all");
  CHECK_THAT(w[2], Catch::StartsWith("6 spec.max.memory: quantity \"2e30\" is too large"));
  // 8Ei is 2^63: parsing caps binary SI values at 2^63-1 (as Kubernetes does), the int64 limit.
  const Checked capped = Check(kHead + "spec: {max: {nvidia.com/gpu: 8Ei}}\n");
  REQUIRE(capped.Warnings().size() == 1);
  CHECK_THAT(capped.Warnings()[0],
             Catch::StartsWith("4 spec.max.nvidia.com/gpu: quantity \"8Ei\" is too large"));

  // What the warnings say is what the decisions do, under both semantics.
  const ElasticQuota& q = c.quota.quota;
  REQUIRE(q.max);
  CHECK(q.max->Get("cpu") == std::numeric_limits<int64_t>::max());
  const ResourceList huge{{"cpu", int64_t{1} << 62}, {"memory", int64_t{1} << 62}};
  for (QuotaSemantics semantics :
       {QuotaSemantics::kCapacityExtender, QuotaSemantics::kSchedulerPlugins}) {
    CHECK(ExceedsMax(semantics, q, huge, huge).empty());
    CHECK_FALSE(IsBorrowing(semantics, q, ResourceList{{"memory", int64_t{1} << 62}}));
    AggregateBuilder builder(semantics);
    builder.AddQuota(q, ResourceList{});
    const AggregateTotals totals = std::move(builder).Build();
    CHECK(ExceedsAggregateMin(semantics, q, totals, ResourceList{{"memory", int64_t{1} << 62}})
              .empty());
  }
}

TEST_CASE("the largest exact amounts are not warned about") {
  // cpu: 9223372036854775 cores are 9223372036854775000m, below the int64 limit; one core more
  // is not. memory: 7Ei is below 2^63-1 bytes.
  const Checked exact = Check(kHead + "spec: {max: {cpu: \"9223372036854775\", memory: 7Ei}}\n");
  CHECK(exact.findings.empty());
  REQUIRE(exact.quota.quota.max);
  CHECK(exact.quota.quota.max->Get("cpu") == 9223372036854775000);
  const Checked over = Check(kHead + "spec: {max: {cpu: \"9223372036854776\", memory: 7Ei}}\n");
  REQUIRE(over.Warnings().size() == 1);
  CHECK_THAT(over.Warnings()[0],
             Catch::StartsWith("4 spec.max.cpu: quantity \"9223372036854776\""));
}

}  // namespace
}  // namespace quota_object_check_test
}  // namespace capext
