// Decoding DRA objects and a pod's claim references (config/device_codec.h,
// docs/devices.md#1-what-is-read, 2 and 8), and the fixtures of tests/fixtures/dra/ through the
// snapshot loader into the quota.
#include "config/device_codec.h"

#include <catch2/catch.hpp>
#include <string>

#include "config/object_codec.h"
#include "config/object_stream_decoder.h"
#include "config/snapshot.h"
#include "core/quota_admission.h"
#include "tests/support/test_paths.h"

namespace capext {
namespace device_codec_test {
namespace {

rapidjson::Document Parse(const std::string& json) {
  rapidjson::Document d;
  d.Parse(json.c_str());
  REQUIRE_FALSE(d.HasParseError());
  return d;
}

ResourceClaim ClaimOf(const std::string& json) {
  ResourceClaim c;
  Status s = DecodeResourceClaim(Parse(json), &c);
  INFO(s.message());
  REQUIRE(s.ok());
  return c;
}

TEST_CASE("a claim's requests in the v1, v1beta2 and v1beta1 shapes", "[devices]") {
  const ResourceClaim v1 = ClaimOf(R"({"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaim",
      "metadata":{"name":"c","namespace":"ns"},"spec":{"devices":{"requests":[
        {"name":"a","exactly":{"deviceClassName":"gpu","allocationMode":"ExactCount","count":3}},
        {"name":"b","exactly":{"deviceClassName":"gpu","allocationMode":"All"}},
        {"name":"f","firstAvailable":[{"name":"big","deviceClassName":"gpu","count":4},
                                      {"name":"small","deviceClassName":"cpu-dev"}]}]}},
      "status":{"allocation":{"devices":{"results":[{"request":"a","driver":"d","pool":"p","device":"x"},
                                                    {"request":"f/small","driver":"d","pool":"p","device":"y"}]}}}})");
  CHECK(v1.Key() == "ns/c");
  CHECK(v1.malformed.empty());
  REQUIRE(v1.requests.size() == 3);
  CHECK(v1.requests[0].exactly.device_class == "gpu");
  CHECK(v1.requests[0].exactly.count == 3);
  CHECK(v1.requests[1].exactly.all);
  REQUIRE(v1.requests[2].first_available.size() == 2);
  CHECK(v1.requests[2].first_available[0].count == 4);
  CHECK(v1.requests[2].first_available[1].count == 1);  // the default
  CHECK(v1.allocated);
  CHECK(v1.results == std::vector<std::string>{"a", "f/small"});

  // v1beta2 has v1's shape: count and mode under exactly, alternatives under firstAvailable; the
  // fields quotas ignore (selectors, tolerations, capacity, adminAccess, config) are skipped.
  const ResourceClaim beta2 =
      ClaimOf(R"({"apiVersion":"resource.k8s.io/v1beta2","kind":"ResourceClaim",
      "metadata":{"name":"c2","namespace":"ns"},"spec":{"devices":{"requests":[
        {"name":"a","exactly":{"deviceClassName":"gpu","allocationMode":"ExactCount","count":2,
                               "selectors":[{"cel":{"expression":"device.driver == 'gpu'"}}],
                               "adminAccess":false,
                               "tolerations":[{"key":"k","operator":"Exists","effect":"NoSchedule"}]}},
        {"name":"f","firstAvailable":[{"name":"big","deviceClassName":"gpu","allocationMode":"ExactCount","count":2},
                                      {"name":"one","deviceClassName":"gpu"}]}],
        "constraints":[{"requests":["a"],"matchAttribute":"gpu/numa"}],
        "config":[{"requests":["a"],"opaque":{"driver":"gpu","parameters":{"k":"v"}}}]}},
      "status":{"allocation":{"devices":{"results":[
          {"request":"a","driver":"gpu","pool":"n1","device":"g0"},
          {"request":"a","driver":"gpu","pool":"n1","device":"g1"},
          {"request":"f/one","driver":"gpu","pool":"n1","device":"g2"}]},
        "nodeSelector":{"nodeSelectorTerms":[{"matchFields":[{"key":"metadata.name","operator":"In","values":["n1"]}]}]},
        "allocationTimestamp":"2026-11-20T10:00:05Z"},
        "reservedFor":[{"resource":"pods","name":"p","uid":"u"}]}})");
  CHECK(beta2.Key() == "ns/c2");
  CHECK(beta2.malformed.empty());
  REQUIRE(beta2.requests.size() == 2);
  CHECK(beta2.requests[0].exactly.device_class == "gpu");
  CHECK(beta2.requests[0].exactly.count == 2);
  CHECK_FALSE(beta2.requests[0].exactly.all);
  REQUIRE(beta2.requests[1].first_available.size() == 2);
  CHECK(beta2.requests[1].first_available[0].count == 2);
  CHECK(beta2.requests[1].first_available[1].count == 1);  // the default
  CHECK(beta2.allocated);
  CHECK(beta2.results == std::vector<std::string>{"a", "a", "f/one"});

  const ResourceClaim beta =
      ClaimOf(R"({"apiVersion":"resource.k8s.io/v1beta1","kind":"ResourceClaim",
      "metadata":{"name":"c","namespace":"ns"},"spec":{"devices":{"requests":[
        {"name":"a","deviceClassName":"gpu","allocationMode":"ExactCount","count":2}]}}})");
  REQUIRE(beta.requests.size() == 1);
  CHECK(beta.requests[0].exactly.device_class == "gpu");
  CHECK(beta.requests[0].exactly.count == 2);
  CHECK_FALSE(beta.allocated);
}

TEST_CASE("a malformed claim is kept with the reason; bad metadata is an error", "[devices]") {
  const ResourceClaim odd = ClaimOf(R"({"metadata":{"name":"c","namespace":"ns"},
      "spec":{"devices":{"requests":[{"name":"a"}]}}})");
  CHECK(odd.malformed == "spec.devices.requests[0]: no exactly, deviceClassName or firstAvailable");
  CHECK(ClaimOf(R"({"metadata":{"name":"c"},"spec":{"devices":{"requests":[
      {"name":"a","exactly":{"deviceClassName":"g","count":-1}}]}}})")
            .malformed ==
        "spec.devices.requests[0].exactly.count: expected a non-negative integer");
  CHECK(ClaimOf(R"({"metadata":{"name":"c"},"spec":{"devices":{"requests":[
      {"name":"a","exactly":{"deviceClassName":"g","allocationMode":"Some"}}]}}})")
            .malformed == "spec.devices.requests[0].exactly.allocationMode: unknown mode \"Some\"");
  ResourceClaim c;
  CHECK_FALSE(DecodeResourceClaim(Parse(R"({"metadata":{"namespace":"ns"}})"), &c).ok());
  CHECK_FALSE(DecodeResourceClaim(Parse(R"({"metadata":[]})"), &c).ok());
}

TEST_CASE("a pod's claims joined with its status; both decoders agree", "[devices]") {
  const std::string json = R"({"apiVersion":"v1","kind":"Pod",
      "metadata":{"name":"p","namespace":"ns","uid":"u1"},
      "spec":{"containers":[{"name":"c","resources":{"requests":{"cpu":"1"},"claims":[{"name":"g"}]}}],
              "resourceClaims":[{"name":"g","resourceClaimTemplateName":"t"},
                                {"name":"s","resourceClaimName":"shared"},
                                {"name":"n","resourceClaimTemplateName":"t2"},
                                {"name":"later","resourceClaimTemplateName":"t3"}]},
      "status":{"phase":"Pending","resourceClaimStatuses":[{"name":"g","resourceClaimName":"p-g-abcde"},
                                                          {"name":"n","resourceClaimName":null}]}})";
  Pod dom;
  REQUIRE(DecodePod(Parse(json), {}, &dom).ok());
  REQUIRE(dom.resource_claims.size() == 4);
  CHECK(dom.resource_claims[0] == PodClaimRef{"g", "p-g-abcde", "t", false});
  CHECK(dom.resource_claims[1] == PodClaimRef{"s", "shared", "", false});
  CHECK(dom.resource_claims[2] == PodClaimRef{"n", "", "t2", true});
  CHECK(dom.resource_claims[3] == PodClaimRef{"later", "", "t3", false});
  Pod streamed;
  std::string kind;
  REQUIRE(DecodePodJson(json, {}, &streamed, &kind).ok());
  CHECK(kind == "Pod");
  CHECK(streamed.resource_claims == dom.resource_claims);
  CHECK(streamed.requests == dom.requests);
  CHECK(streamed.uid == dom.uid);
  Pod bad;
  CHECK_FALSE(
      DecodePod(Parse(R"({"metadata":{"name":"p"},"spec":{"resourceClaims":{}}})"), {}, &bad).ok());
  CHECK_FALSE(
      DecodePodJson(R"({"metadata":{"name":"p"},"spec":{"resourceClaims":{}}})", {}, &bad, &kind)
          .ok());
}

// The fixtures, through the snapshot loader, with the mapping they are written for.
ClusterState FixtureState(const std::string& file) {
  Snapshot snapshot;
  Status s = LoadSnapshotFile(test::SourcePath("tests/fixtures/dra/" + file), {}, &snapshot);
  INFO(s.message());
  REQUIRE(s.ok());
  ClusterState state;
  state.SetDeviceClassMappings(
      {DeviceClassMapping{"nvidia.com/gpu", {"gpu.nvidia.com"}, std::nullopt}});
  ApplySnapshot(snapshot, &state);
  return state;
}

TEST_CASE("the DRA fixtures decode and count (v1, v1beta2, v1beta1)", "[devices]") {
  const std::string version =
      GENERATE(std::string("v1"), std::string("v1beta2"), std::string("v1beta1"));
  INFO("resource.k8s.io/" << version);
  {
    ClusterState state = FixtureState(version + "/template-gpus.json");
    CHECK(state.devices().claims().size() == 4);
    CHECK(state.devices().templates().size() == 1);
    CHECK(state.Used("team-a").Get("nvidia.com/gpu") == 4);
    const NormalizedPod* w4 = state.FindPodByName("team-a", "w4");
    REQUIRE(w4 != nullptr);
    CHECK_THAT(CheckQuota(state, *w4).message(),
               Catch::Contains("nvidia.com/gpu used 4 + request 1 > max 4"));
  }
  {
    ClusterState state = FixtureState(version + "/shared-claim.json");
    CHECK(state.Used("team-s").Get("nvidia.com/gpu") == 2);
    CHECK(CheckQuota(state, *state.FindPodByName("team-s", "s3")).ok());
    CHECK_THAT(CheckQuota(state, *state.FindPodByName("team-s", "s4")).message(),
               Catch::Contains("nvidia.com/gpu used 2 + request 1 > max 2"));
  }
  {
    ClusterState state = FixtureState(version + "/reclaim.json");
    CHECK(state.Used("team-a").Get("nvidia.com/gpu") == 4);
    CHECK_THAT(CheckQuota(state, *state.FindPodByName("team-b", "b1")).message(),
               Catch::Contains("nvidia.com/gpu used 4 + request 4 > min 6"));
  }
}

}  // namespace
}  // namespace device_codec_test
}  // namespace capext
