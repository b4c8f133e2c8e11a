// ParseLease: a coordination.k8s.io/v1 Lease as kube-scheduler 1.26 writes it (leader election
// with resourceLock: leases), and the shapes it takes when released or never acquired.
#include <catch2/catch.hpp>

#include "extender/kube/lease_record.h"

namespace capext::kube {
namespace lease_record_test {
namespace {

TEST_CASE("ParseLease reads holder, duration, transitions and resourceVersion", "[lease]") {
  LeaseRecord r;
  Status s = ParseLease(
      R"({"kind":"Lease","apiVersion":"coordination.k8s.io/v1","metadata":{"name":"kube-scheduler",
      "namespace":"kube-system","uid":"u","resourceVersion":"4711","creationTimestamp":"2026-01-01T00:00:00Z"},
      "spec":{"holderIdentity":"node-1_6a3b2a4e-1b7c-4f3e-9d2a-0c1e2f3a4b5c","leaseDurationSeconds":15,
      "acquireTime":"2026-01-01T00:00:00.000000Z","renewTime":"2026-01-01T00:10:00.000000Z",
      "leaseTransitions":3}})",
      &r);
  INFO(s.message());
  REQUIRE(s.ok());
  CHECK(r.exists);
  CHECK(r.resource_version == "4711");
  CHECK(r.holder == "node-1_6a3b2a4e-1b7c-4f3e-9d2a-0c1e2f3a4b5c");
  CHECK(r.duration_seconds == 15);
  CHECK(r.transitions == 3);
}

TEST_CASE("ParseLease: a released lease and an empty spec", "[lease]") {
  LeaseRecord r;
  // client-go's release: holderIdentity "", leaseDurationSeconds 1.
  REQUIRE(ParseLease(R"({"metadata":{"resourceVersion":"9"},"spec":{"holderIdentity":"",
      "leaseDurationSeconds":1,"leaseTransitions":4}})",
                     &r)
              .ok());
  CHECK(r.holder.empty());
  CHECK(r.duration_seconds == 1);
  CHECK(r.transitions == 4);
  REQUIRE(ParseLease(R"({"metadata":{"resourceVersion":"10"},"spec":{}})", &r).ok());
  CHECK(r.exists);
  CHECK(r.holder.empty());
  CHECK(r.duration_seconds == 0);
  CHECK(r.transitions == 0);
}

TEST_CASE("ParseLease refuses what it cannot judge", "[lease]") {
  LeaseRecord r;
  CHECK(ParseLease("not json", &r).code() == StatusCode::kInvalid);
  CHECK(ParseLease(R"({"spec":{"holderIdentity":"a"}})", &r).message().find("resourceVersion") !=
        std::string::npos);
  CHECK(ParseLease(R"({"metadata":{"resourceVersion":"1"},"spec":{"holderIdentity":7}})", &r)
            .message()
            .find("spec.holderIdentity") != std::string::npos);
  CHECK(ParseLease(R"({"metadata":{"resourceVersion":"1"},"spec":{"leaseTransitions":"x"}})", &r)
            .message()
            .find("spec.leaseTransitions") != std::string::npos);
}

}  // namespace
}  // namespace lease_record_test
}  // namespace capext::kube
