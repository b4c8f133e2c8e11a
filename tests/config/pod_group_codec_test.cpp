// PodGroup and Workload decoding (docs/workloads-live.md#where-group-objects-come-from).
#include "config/pod_group_codec.h"

#include <catch2/catch.hpp>

namespace capext {
namespace pod_group_codec_test {
namespace {

TEST_CASE("PodGroup: minMember and scheduleTimeoutSeconds; malformed fields named", "[config]") {
  PodGroupSpec spec;
  REQUIRE(
      DecodePodGroupObject(
          R"({"metadata":{"name":"g","namespace":"ml"},"spec":{"minMember":4,"scheduleTimeoutSeconds":30}})",
          &spec)
          .ok());
  CHECK(spec.key == GroupKey{"scheduling.x-k8s.io", "ml", "g"});
  CHECK(spec.min_member == 4);
  CHECK(spec.schedule_timeout_ms == 30'000);
  const Status negative = DecodePodGroupObject(
      R"({"metadata":{"name":"g","namespace":"ml"},"spec":{"minMember":-1}})", &spec);
  REQUIRE_FALSE(negative.ok());
  CHECK(negative.message().find("PodGroup ml/g: spec.minMember") != std::string::npos);
  CHECK_FALSE(DecodePodGroupObject(
                  R"({"metadata":{"name":"g","namespace":"ml"},"spec":{"minMember":"x"}})", &spec)
                  .ok());
  CHECK_FALSE(DecodePodGroupObject("{", &spec).ok());
}

TEST_CASE("Workload: one group per podGroups entry, gang minCount, basic = singles", "[config]") {
  std::vector<PodGroupSpec> specs;
  std::string ns, name;
  REQUIRE(
      DecodeWorkloadObject(
          R"({"metadata":{"name":"job","namespace":"ml"},"spec":{"podGroups":[)"
          R"({"name":"workers","policy":{"gang":{"minCount":4}}},{"name":"driver","policy":{"basic":{}}}]}})",
          &specs, &ns, &name)
          .ok());
  REQUIRE(specs.size() == 2);
  CHECK(specs[0].key == GroupKey{"scheduling.k8s.io", "ml", "job/workers"});
  CHECK(specs[0].min_member == 4);
  CHECK(specs[1].min_member == 0);
  CHECK(specs[1].schedule_timeout_ms == 0);
  const Status unnamed = DecodeWorkloadObject(
      R"({"metadata":{"name":"job","namespace":"ml"},"spec":{"podGroups":[{"policy":{}}]}})",
      &specs, &ns, &name);
  REQUIRE_FALSE(unnamed.ok());
  CHECK(unnamed.message().find("spec.podGroups[0].name") != std::string::npos);
}

}  // namespace
}  // namespace pod_group_codec_test
}  // namespace capext
