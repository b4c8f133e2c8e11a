// The workload fields of a Pod (config/pod_workload_fields.h): the group label or
// spec.workloadRef, the min-member and admitted-at annotations, the scheduling gates and the
// controller reference, decoded alike by the DOM codec and the streaming decoder.
#include "config/pod_workload_fields.h"

#include <catch2/catch.hpp>
#include <string>

#include "config/object_stream_decoder.h"
#include "tests/support/object_decoding.h"

namespace capext {
namespace pod_workload_fields_test {
namespace {

// Decodes with both paths, requires the same verdict and record, returns the DOM's.
Status DecodeBoth(const std::string& json, Pod* pod) {
  Pod dom, sax;
  std::string dom_kind = "Pod", sax_kind;
  const Status d = testing::DomDecode(json, DecodeOptions{}, &dom, &dom_kind);
  const Status s = DecodePodJson(json, DecodeOptions{}, &sax, &sax_kind);
  INFO(json);
  REQUIRE(d.ok() == s.ok());
  if (d.ok()) REQUIRE(testing::Text(dom) == testing::Text(sax));
  *pod = dom;
  return d;
}

TEST_CASE("workload fields: a coscheduling member, gated, admitted, with a controller",
          "[codec][workloads]") {
  Pod pod;
  REQUIRE(DecodeBoth(R"({"kind":"Pod","metadata":{"name":"w-0","namespace":"eq1",
    "labels":{"scheduling.x-k8s.io/pod-group":"train-a"},
    "annotations":{"scheduling.capacity-extender.io/min-member":"4",
                   "scheduling.capacity-extender.io/admitted-at":"2026-01-01T00:00:01Z"},
    "ownerReferences":[{"kind":"Job","name":"j","controller":true}]},
    "spec":{"schedulingGates":[{"name":"scheduling.capacity-extender.io/quota"}],
            "containers":[{"name":"c"}]}})",
                     &pod)
              .ok());
  CHECK(pod.group->api_group == "scheduling.x-k8s.io");
  CHECK(pod.group->name == "train-a");
  CHECK(pod.min_member_annotation == 4);
  CHECK(pod.admitted_ms == 1767225601000);
  CHECK(pod.quota_gated);
  CHECK_FALSE(pod.other_gates);
  CHECK(pod.IsGated());
  CHECK(pod.has_controller);
}

TEST_CASE("workload fields: a Workload API member; other gates; no controller",
          "[codec][workloads]") {
  Pod pod;
  REQUIRE(DecodeBoth(R"({"kind":"Pod","metadata":{"name":"w-0",
    "ownerReferences":[{"kind":"ReplicaSet","name":"r"}, 7]},
    "spec":{"workloadRef":{"name":"job","podGroup":"workers","podGroupReplicaKey":"1"},
            "schedulingGates":[{"name":"example.com/other"}, "x"]}})",
                     &pod)
              .ok());
  CHECK(pod.group == GroupRef{"scheduling.k8s.io", "job", "workers", "1"});
  CHECK_FALSE(pod.quota_gated);
  CHECK(pod.other_gates);
  CHECK_FALSE(pod.has_controller);
}

TEST_CASE("patch basis: resourceVersion, our gate's position in the list, annotations present",
          "[codec][workloads]") {
  Pod pod;
  // Positions count every element, skipped non-objects too: they are JSON pointer indices.
  REQUIRE(DecodeBoth(R"({"kind":"Pod","metadata":{"name":"p","resourceVersion":"4711",
    "annotations":{}},
    "spec":{"schedulingGates":["x",{"name":"example.com/other"},
                               {"name":"scheduling.capacity-extender.io/quota"}]}})",
                     &pod)
              .ok());
  CHECK(pod.patch_basis == PodPatchBasis{"4711", 2, true});
  REQUIRE(DecodeBoth(R"({"kind":"Pod","metadata":{"name":"p","annotations":null},
    "spec":{"schedulingGates":[{"name":"example.com/other"}]}})",
                     &pod)
              .ok());
  CHECK(pod.patch_basis == PodPatchBasis{"", -1, false});
}

TEST_CASE("workload fields: the label wins over workloadRef; bad annotations are ignored",
          "[codec][workloads]") {
  Pod pod;
  REQUIRE(DecodeBoth(R"({"kind":"Pod","metadata":{"name":"p",
    "labels":{"scheduling.x-k8s.io/pod-group":"g"},
    "annotations":{"scheduling.capacity-extender.io/min-member":"three",
                   "scheduling.capacity-extender.io/admitted-at":"yesterday"}},
    "spec":{"workloadRef":{"name":"job","podGroup":"workers"}}})",
                     &pod)
              .ok());
  CHECK(pod.group->api_group == "scheduling.x-k8s.io");
  CHECK(pod.group->name == "g");
  CHECK(pod.min_member_annotation == 0);
  CHECK(pod.admitted_ms == 0);
  for (const char* bad : {"0", "-2", "4x", ""}) {
    REQUIRE(DecodeBoth(fmt::format(R"({{"kind":"Pod","metadata":{{"name":"p","annotations":
      {{"scheduling.capacity-extender.io/min-member":"{}"}}}}}})",
                                   bad),
                       &pod)
                .ok());
    CHECK(pod.min_member_annotation == 0);
  }
}

TEST_CASE("workload fields: no group, no gates by default; wrong types are errors alike",
          "[codec][workloads]") {
  Pod pod;
  REQUIRE(DecodeBoth(R"({"kind":"Pod","metadata":{"name":"p"}})", &pod).ok());
  CHECK(pod.group.empty());
  CHECK_FALSE(pod.IsGated());
  CHECK(pod.admitted_ms == 0);
  for (const char* bad : {
           R"({"kind":"Pod","metadata":{"name":"p"},"spec":{"schedulingGates":{}}})",
           R"({"kind":"Pod","metadata":{"name":"p"},"spec":{"schedulingGates":[{"name":3}]}})",
           R"({"kind":"Pod","metadata":{"name":"p"},"spec":{"workloadRef":[]}})",
           R"({"kind":"Pod","metadata":{"name":"p","ownerReferences":{}}})",
           R"({"kind":"Pod","metadata":{"name":"p","ownerReferences":[{"controller":[]}]}})",
           R"({"kind":"Pod","metadata":{"name":"p","annotations":[]}})",
           R"({"kind":"Pod","metadata":{"name":"p","annotations":
              {"scheduling.capacity-extender.io/min-member":3}}})",
       }) {
    CHECK_FALSE(DecodeBoth(bad, &pod).ok());
  }
}

}  // namespace
}  // namespace pod_workload_fields_test
}  // namespace capext
