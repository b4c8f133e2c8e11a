// The resource arithmetic of quota decisions in both semantics
// (docs/capacity-semantics.md#2-which-resources-a-quota-governs-two-semantics): capacity-extender
// (the default) and scheduler-plugins (the reference's sharp edges).
#include "core/quota_semantics.h"

#include <catch2/catch.hpp>
#include <limits>
#include <string>
#include <vector>

#include "tests/support/builders.h"

namespace capext {
namespace quota_semantics_test {
namespace {

using testing::CpuList;
using testing::kGi;
using testing::MakePod;
using testing::MakeQuota;

const auto kExtender = QuotaSemantics::kCapacityExtender;
const auto kPlugins = QuotaSemantics::kSchedulerPlugins;

std::vector<std::string> Resources(const std::vector<Excess>& excesses) {
  std::vector<std::string> out;
  for (const auto& e : excesses)
    out.emplace_back(e.resource.str());
  return out;
}

std::vector<std::string> Names(const std::vector<ResourceName>& names) {
  std::vector<std::string> out;
  for (const ResourceName n : names)
    out.emplace_back(n.str());
  return out;
}

// DescribeExcesses where every added amount is the pod's own request (no nominated pods).
std::string Describe(const std::vector<Excess>& excesses, std::string_view limit_word) {
  ResourceList request;
  for (const auto& e : excesses)
    request.Set(e.resource, e.add);
  return DescribeExcesses(excesses, request, limit_word);
}

ResourceName R(std::string_view name) {
  return ResourceName::Of(name);
}

TEST_CASE("DescribeExcesses names every dimension with its numbers", "[quota_semantics]") {
  std::vector<Excess> excesses = {{R("cpu"), 9000, 2000, 10000},
                                  {R("memory"), 3 * kGi, 2 * kGi, 4 * kGi}};
  CHECK(Describe(excesses, "max") ==
        "cpu used 9 + request 2 > max 10; memory used 3Gi + request 2Gi > max 4Gi");
  CHECK(Describe({{R("cpu"), 1500, 500, 1000}}, "min") == "cpu used 1500m + request 500m > min 1");
}

TEST_CASE("IsScalarResourceName follows Kubernetes' scalar names", "[quota_semantics]") {
  struct Case {
    std::string name;
    bool scalar;
  };
  const std::vector<Case> cases = {
      {"nvidia.com/gpu", true},
      {"hugepages-2Mi", true},
      {"attachable-volumes-aws", true},
      {"kubernetes.io/batch", true},
      {"example.com/foo", true},
      {"cpu", false},
      {"memory", false},
      {"pods", false},
      {"requests.cpu", false},
      {"storage", false},
  };
  for (const auto& c : cases) {
    INFO(c.name);
    CHECK(IsScalarResourceName(c.name) == c.scalar);
  }
}

// --- capacity-extender ---------------------------------------------------------------------------

TEST_CASE("capacity-extender: a pod's quota request counts pods", "[quota_semantics]") {
  Pod pod = MakePod("eq1", "p").Cpu(500).Memory(kGi);
  CHECK(QuotaRequestOf(kExtender, pod) ==
        ResourceList({{"cpu", 500}, {"memory", kGi}, {"pods", 1}}));
  Pod best_effort = MakePod("eq1", "be");
  CHECK(QuotaRequestOf(kExtender, best_effort) == ResourceList({{"pods", 1}}));
}

TEST_CASE("capacity-extender: the accelerator model adds a per-model GPU dimension",
          "[quota_semantics]") {
  Pod pod = MakePod("eq1", "train")
                .Cpu(1000)
                .Request("nvidia.com/gpu", 2)
                .Request("kubernetes.io/batch", 1)
                .AcceleratorModel("V100");
  ResourceList r = QuotaRequestOf(kExtender, pod);
  CHECK(r.Get("nvidia.com/gpu") == 2);
  CHECK(r.Get("nvidia.com/gpu.V100") == 2);
  // Only extended resources get a model dimension: not cpu, not kubernetes.io/ names.
  CHECK_FALSE(r.Has("cpu.V100"));
  CHECK_FALSE(r.Has("kubernetes.io/batch.V100"));

  Pod unlabelled = MakePod("eq1", "plain").Request("nvidia.com/gpu", 1);
  CHECK_FALSE(QuotaRequestOf(kExtender, unlabelled).Has("nvidia.com/gpu.V100"));
}

TEST_CASE("capacity-extender: a resource missing from max is unbounded", "[quota_semantics]") {
  ElasticQuota q = MakeQuota("eq1", std::nullopt, CpuList(10000));
  ResourceList used{{"cpu", 1000}, {"memory", 1000 * kGi}};
  ResourceList add{{"cpu", 1000}, {"memory", 1000 * kGi}, {"nvidia.com/gpu", 8}};
  CHECK(ExceedsMax(kExtender, q, used, add).empty());
}

TEST_CASE("capacity-extender: an absent max never rejects", "[quota_semantics]") {
  ElasticQuota q = MakeQuota("eq1", CpuList(1000), std::nullopt);
  CHECK(ExceedsMax(kExtender, q, CpuList(1000000), CpuList(1000000)).empty());
}

TEST_CASE("capacity-extender: max is compared per named dimension, strictly greater",
          "[quota_semantics]") {
  ElasticQuota q =
      MakeQuota("eq1", std::nullopt, ResourceList{{"cpu", 10000}, {"memory", 4 * kGi}});
  SECTION("equal to max passes") {
    CHECK(ExceedsMax(kExtender, q, CpuList(8000), CpuList(2000)).empty());
  }
  SECTION("one dimension over is enough, with its numbers") {
    auto excesses = ExceedsMax(kExtender, q, ResourceList{{"cpu", 9000}, {"memory", kGi}},
                               ResourceList{{"cpu", 2000}, {"memory", kGi}});
    REQUIRE(excesses.size() == 1);
    CHECK(excesses[0].resource == "cpu");
    CHECK(excesses[0].used == 9000);
    CHECK(excesses[0].add == 2000);
    CHECK(excesses[0].limit == 10000);
  }
  SECTION("every offending dimension is reported") {
    auto excesses = ExceedsMax(kExtender, q, ResourceList{{"cpu", 9000}, {"memory", 4 * kGi}},
                               ResourceList{{"cpu", 2000}, {"memory", 1}});
    CHECK(Resources(excesses) == std::vector<std::string>{"cpu", "memory"});
  }
}

TEST_CASE("capacity-extender: pods in max counts pods", "[quota_semantics]") {
  ElasticQuota q = MakeQuota("eq1", std::nullopt, ResourceList{{"pods", 2}});
  Pod pod = MakePod("eq1", "p");
  const ResourceList add = QuotaRequestOf(kExtender, pod);
  CHECK(ExceedsMax(kExtender, q, ResourceList{{"pods", 1}}, add).empty());
  auto excesses = ExceedsMax(kExtender, q, ResourceList{{"pods", 2}}, add);
  REQUIRE(excesses.size() == 1);
  CHECK(excesses[0].resource == "pods");
  CHECK(Describe(excesses, "max") == "pods used 2 + request 1 > max 2");
}

TEST_CASE("capacity-extender: a governed resource missing from min has min 0",
          "[quota_semantics]") {
  // memory is governed (named in max) but not in min: any memory use is borrowing.
  ElasticQuota q =
      MakeQuota("eq1", CpuList(4000), ResourceList{{"cpu", 8000}, {"memory", 16 * kGi}});
  auto excesses = ExceedsMin(kExtender, q, CpuList(1000), ResourceList{{"memory", 1}});
  CHECK(Resources(excesses) == std::vector<std::string>{"memory"});
  CHECK(IsBorrowing(kExtender, q, ResourceList{{"cpu", 1000}, {"memory", 1}}));
  CHECK_FALSE(IsBorrowing(kExtender, q, ResourceList{{"cpu", 4000}}));
}

TEST_CASE("capacity-extender: ungoverned resources are ignored by min and max",
          "[quota_semantics]") {
  ElasticQuota q = MakeQuota("eq1", CpuList(4000), CpuList(8000));
  ResourceList used{{"cpu", 4000}, {"memory", 100 * kGi}, {"nvidia.com/gpu", 4}, {"pods", 30}};
  ResourceList add{{"memory", kGi}, {"nvidia.com/gpu", 1}, {"pods", 1}};
  CHECK(ExceedsMax(kExtender, q, used, add).empty());
  CHECK(ExceedsMin(kExtender, q, used, add).empty());
  CHECK_FALSE(IsBorrowing(kExtender, q, used));
  CHECK(Governs(kExtender, q, R("cpu")));
  CHECK_FALSE(Governs(kExtender, q, R("memory")));
  CHECK_FALSE(Governs(kExtender, q, R("pods")));
}

TEST_CASE("capacity-extender: the aggregated check covers only resources named in some min",
          "[quota_semantics]") {
  // eq1 names cpu in min and memory only in max; eq2 names cpu and nvidia.com/gpu in min.
  ElasticQuota eq1 =
      MakeQuota("eq1", CpuList(4000), ResourceList{{"cpu", 8000}, {"memory", 8 * kGi}});
  ElasticQuota eq2 =
      MakeQuota("eq2", ResourceList{{"cpu", 2000}, {"nvidia.com/gpu", 2}}, std::nullopt);
  AggregateBuilder builder(kExtender);
  builder.AddQuota(eq1, ResourceList{{"cpu", 3000}, {"memory", 6 * kGi}, {"nvidia.com/gpu", 5}});
  builder.AddQuota(eq2, ResourceList{{"cpu", 2000}, {"nvidia.com/gpu", 2}, {"memory", 50 * kGi}});
  AggregateTotals totals = std::move(builder).Build();
  CHECK(Names(totals.checked) == std::vector<std::string>{"cpu", "nvidia.com/gpu"});
  CHECK(totals.min == ResourceList({{"cpu", 6000}, {"nvidia.com/gpu", 2}}));
  // used sums a resource only over the quotas that govern it: eq1 does not govern gpu, eq2 does
  // not govern memory.
  CHECK(totals.used.Get("cpu") == 5000);
  CHECK(totals.used.Get("nvidia.com/gpu") == 2);
  CHECK(totals.used.Get("memory") == 6 * kGi);

  SECTION("memory is in no min: never compared, however much is used") {
    CHECK(ExceedsAggregateMin(kExtender, eq1, totals, ResourceList{{"memory", 100 * kGi}}).empty());
  }
  SECTION("cpu over the sum of mins is reported with the cluster-wide totals") {
    auto excesses = ExceedsAggregateMin(kExtender, eq1, totals, CpuList(2000));
    REQUIRE(excesses.size() == 1);
    CHECK(Describe(excesses, "min") == "cpu used 5 + request 2 > min 6");
    CHECK(ExceedsAggregateMin(kExtender, eq1, totals, CpuList(1000)).empty());
  }
  SECTION("a resource the pod's own quota does not govern is not compared") {
    // gpu is at its aggregate min, but eq1 does not govern gpu.
    CHECK(ExceedsAggregateMin(kExtender, eq1, totals, ResourceList{{"nvidia.com/gpu", 1}}).empty());
    CHECK(Resources(
              ExceedsAggregateMin(kExtender, eq2, totals, ResourceList{{"nvidia.com/gpu", 1}})) ==
          std::vector<std::string>{"nvidia.com/gpu"});
  }
}

TEST_CASE("ApplyUsageDelta counts what AggregateBuilder counts", "[quota_semantics]") {
  ElasticQuota eq1 = MakeQuota("eq1", CpuList(4000), std::nullopt);
  AggregateBuilder builder(kExtender);
  builder.AddQuota(eq1, CpuList(1000));
  AggregateTotals totals = std::move(builder).Build();
  ApplyUsageDelta(kExtender, eq1, ResourceList{{"cpu", 500}, {"memory", kGi}}, &totals);
  CHECK(totals.used.Get("cpu") == 1500);
  CHECK_FALSE(totals.used.Has("memory"));

  AggregateTotals plugin_totals;
  ApplyUsageDelta(kPlugins, eq1, ResourceList{{"cpu", 500}, {"memory", kGi}}, &plugin_totals);
  CHECK(plugin_totals.used.Get("memory") == kGi);
}

// --- scheduler-plugins
// -----------------------------------------------------------------------------

TEST_CASE("scheduler-plugins: the quota request has no pods and drops unknown names",
          "[quota_semantics]") {
  Pod pod = MakePod("eq1", "p")
                .Cpu(500)
                .Memory(kGi)
                .Request("ephemeral-storage", 10)
                .Request("nvidia.com/gpu", 1)
                .Request("storage", 5);
  CHECK(QuotaRequestOf(kPlugins, pod) ==
        ResourceList(
            {{"cpu", 500}, {"ephemeral-storage", 10}, {"memory", kGi}, {"nvidia.com/gpu", 1}}));
}

TEST_CASE("scheduler-plugins: a max listing only cpu rejects memory-requesting pods",
          "[quota_semantics]") {
  ElasticQuota q = MakeQuota("eq1", std::nullopt, CpuList(10000));
  auto excesses =
      ExceedsMax(kPlugins, q, ResourceList{}, ResourceList{{"cpu", 100}, {"memory", 1}});
  CHECK(Resources(excesses) == std::vector<std::string>{"memory"});
  // The same quota in capacity-extender semantics leaves memory unbounded.
  CHECK(
      ExceedsMax(kExtender, q, ResourceList{}, ResourceList{{"cpu", 100}, {"memory", 1}}).empty());
}

TEST_CASE("scheduler-plugins: an absent max is unbounded", "[quota_semantics]") {
  ElasticQuota q = MakeQuota("eq1", CpuList(1000), std::nullopt);
  CHECK(ExceedsMax(kPlugins, q, ResourceList{{"cpu", 1000000}, {"memory", 1000 * kGi}},
                   ResourceList{{"cpu", 1000}, {"memory", kGi}, {"nvidia.com/gpu", 4}})
            .empty());
}

TEST_CASE(
    "scheduler-plugins: scalars absent from max are unbounded, and compared only when "
    "requested",
    "[quota_semantics]") {
  ElasticQuota q =
      MakeQuota("eq1", std::nullopt,
                ResourceList{{"cpu", 10000}, {"memory", 10 * kGi}, {"nvidia.com/gpu", 2}});
  // example.com/fpga is not in max: unbounded.
  CHECK(ExceedsMax(kPlugins, q, ResourceList{}, ResourceList{{"example.com/fpga", 100}}).empty());
  // A quota over its GPU max still admits a pod that requests no GPU.
  CHECK(ExceedsMax(kPlugins, q, ResourceList{{"nvidia.com/gpu", 3}}, CpuList(100)).empty());
  CHECK(Resources(ExceedsMax(kPlugins, q, ResourceList{{"nvidia.com/gpu", 2}},
                             ResourceList{{"nvidia.com/gpu", 1}})) ==
        std::vector<std::string>{"nvidia.com/gpu"});
}

TEST_CASE("scheduler-plugins: natives are always compared, even for a BestEffort pod",
          "[quota_semantics]") {
  // A quota already over its cpu max (max lowered) rejects every pod.
  ElasticQuota q =
      MakeQuota("eq1", std::nullopt, ResourceList{{"cpu", 4000}, {"memory", 10 * kGi}});
  CHECK(Resources(ExceedsMax(kPlugins, q, CpuList(5000), ResourceList{})) ==
        std::vector<std::string>{"cpu"});
}

TEST_CASE("scheduler-plugins: pods in max has no effect", "[quota_semantics]") {
  ElasticQuota q = MakeQuota("eq1", std::nullopt,
                             ResourceList{{"cpu", 10000}, {"memory", 10 * kGi}, {"pods", 1}});
  Pod pod = MakePod("eq1", "p").Cpu(100);
  ResourceList used;
  for (int i = 0; i < 5; ++i)
    used.Add(QuotaRequestOf(kPlugins, pod));
  CHECK(ExceedsMax(kPlugins, q, used, QuotaRequestOf(kPlugins, pod)).empty());
}

TEST_CASE("scheduler-plugins: an absent min is 0, so any use is over min", "[quota_semantics]") {
  ElasticQuota q = MakeQuota("eq1", std::nullopt, CpuList(10000));
  CHECK(Resources(ExceedsMin(kPlugins, q, ResourceList{}, CpuList(1))) ==
        std::vector<std::string>{"cpu"});
  CHECK(Resources(ExceedsMin(kPlugins, q, ResourceList{}, ResourceList{{"memory", 1}})) ==
        std::vector<std::string>{"memory"});
  CHECK(IsBorrowing(kPlugins, q, CpuList(1)));
  CHECK(IsBorrowing(kPlugins, q, ResourceList{{"nvidia.com/gpu", 1}}));
  // Nothing used and nothing requested is not over a min of 0 (the reference's min is {0, 0, 0}).
  CHECK_FALSE(IsBorrowing(kPlugins, q, ResourceList{}));
  CHECK(ExceedsMin(kPlugins, q, ResourceList{}, ResourceList{}).empty());
}

TEST_CASE("scheduler-plugins: a present min that omits memory has memory min 0",
          "[quota_semantics]") {
  ElasticQuota q = MakeQuota("eq1", CpuList(4000), std::nullopt);
  CHECK(Resources(
            ExceedsMin(kPlugins, q, CpuList(1000), ResourceList{{"cpu", 100}, {"memory", 1}})) ==
        std::vector<std::string>{"memory"});
  CHECK(ExceedsMin(kPlugins, q, CpuList(1000), CpuList(100)).empty());
}

TEST_CASE("scheduler-plugins: usedOverMinWith compares scalars named in the request only",
          "[quota_semantics]") {
  // The quota uses a GPU its min does not list (min 0), so it is borrowing...
  ElasticQuota q = MakeQuota("eq1", CpuList(4000), std::nullopt);
  const ResourceList used{{"cpu", 1000}, {"nvidia.com/gpu", 1}};
  CHECK(IsBorrowing(kPlugins, q, used));
  // ...but usedOverMinWith(req) for a pod requesting no GPU (even a BestEffort one) looks at the
  // native dimensions and the request's scalars only.
  CHECK(ExceedsMin(kPlugins, q, used, CpuList(100)).empty());
  CHECK(ExceedsMin(kPlugins, q, used, ResourceList{}).empty());
  CHECK_FALSE(ExceedsMin(kPlugins, q, used, ResourceList{{"nvidia.com/gpu", 1}}).empty());
}

TEST_CASE("scheduler-plugins: the aggregated check compares every native and used scalar",
          "[quota_semantics]") {
  ElasticQuota eq1 = MakeQuota("eq1", CpuList(4000), std::nullopt);
  ElasticQuota eq2 = MakeQuota("eq2", CpuList(4000), std::nullopt);
  SECTION("no min lists memory: every memory-requesting pod fails") {
    AggregateBuilder builder(kPlugins);
    builder.AddQuota(eq1, CpuList(1000));
    builder.AddQuota(eq2, CpuList(1000));
    AggregateTotals totals = std::move(builder).Build();
    CHECK(Resources(ExceedsAggregateMin(kPlugins, eq1, totals,
                                        ResourceList{{"cpu", 100}, {"memory", 1}})) ==
          std::vector<std::string>{"memory"});
    CHECK(ExceedsAggregateMin(kPlugins, eq1, totals, CpuList(100)).empty());
  }
  SECTION("a scalar used anywhere but in no min blocks every quota pod") {
    AggregateBuilder builder(kPlugins);
    builder.AddQuota(eq1, CpuList(1000));
    builder.AddQuota(eq2, ResourceList{{"cpu", 1000}, {"nvidia.com/gpu", 1}});
    AggregateTotals totals = std::move(builder).Build();
    CHECK(Resources(ExceedsAggregateMin(kPlugins, eq1, totals, CpuList(100))) ==
          std::vector<std::string>{"nvidia.com/gpu"});
  }
}

}  // namespace
}  // namespace quota_semantics_test
}  // namespace capext
