// LeaseTenure: the rule that judges kube-scheduler's leader Lease on this replica's own clock
// (docs/architecture.md#two-replicas-one-actor). Times are offsets in milliseconds from an
// arbitrary origin; every read takes 10 ms. Settings as deploy/: leaseDuration 15 s,
// leaseRenewDeadline 10 s (margin 5 s).
#include <catch2/catch.hpp>

#include "extender/leadership/lease_tenure.h"

namespace capext {
namespace lease_tenure_test {
namespace {

using TimePoint = LeaseTenure::TimePoint;
using std::chrono::milliseconds;

TimePoint At(int64_t ms) {
  return TimePoint{} + milliseconds(1'000'000 + ms);
}

kube::LeaseRecord Lease(const std::string& holder, int rv, int transitions = 0,
                        int64_t duration_seconds = 15) {
  kube::LeaseRecord r;
  r.exists = true;
  r.holder = holder;
  r.resource_version = std::to_string(rv);
  r.transitions = transitions;
  r.duration_seconds = duration_seconds;
  return r;
}

LeaseTenure Tenure(const std::string& identity = "pod-a") {
  return LeaseTenure(
      {identity, "capacity-extender/capacity-scheduler", milliseconds(15000), milliseconds(10000)});
}

// A read sent at `sent_ms` answering after 10 ms.
void Read(LeaseTenure* t, const kube::LeaseRecord& record, int64_t sent_ms) {
  t->Observe(record, At(sent_ms), At(sent_ms + 10));
}

TEST_CASE("lease tenure: our holder is the identity or the identity followed by _", "[lease]") {
  LeaseTenure t = Tenure("pod-a");
  CHECK(t.IsOurs("pod-a"));
  CHECK(t.IsOurs("pod-a_4f1c2a9e-0000-4000-8000-000000000000"));
  CHECK_FALSE(t.IsOurs("pod-ab_4f1c"));  // another pod whose name starts the same
  CHECK_FALSE(t.IsOurs("pod-"));
  CHECK_FALSE(t.IsOurs(""));
  CHECK_FALSE(Tenure("").IsOurs(""));
}

TEST_CASE(
    "lease tenure: a renewal proven after the previous read extends the tenure by the "
    "renew deadline from that read's send time",
    "[lease]") {
  LeaseTenure t = Tenure();
  CHECK(t.Reason(At(0)).find("has not been read yet") != std::string::npos);
  // First read: it already names us, but nothing proves when it was written, and another
  // replica's sidecar might still be acting until 10 s after this read returned.
  Read(&t, Lease("pod-a_u1", 1), 0);
  CHECK_FALSE(t.Leads(At(20)));
  CHECK(t.Reason(At(20)).find("waiting to see this replica's kube-scheduler renew") !=
        std::string::npos);
  // The same record again proves nothing either.
  Read(&t, Lease("pod-a_u1", 1), 1000);
  CHECK_FALSE(t.Leads(At(1020)));
  // A renewal (new resourceVersion) first seen by the read sent at 2000: it was written after
  // 1000, so our scheduler holds the lease until 1000 + 15000 at the earliest and we act until
  // 1000 + 10000, once the start-up wait (10 + 10000) is over.
  Read(&t, Lease("pod-a_u1", 2), 2000);
  CHECK_FALSE(t.Leads(At(10009)));
  CHECK(t.Reason(At(10009)).find("waiting 1 ms more for the previous holder") != std::string::npos);
  CHECK(t.Leads(At(10010)));
  CHECK(t.ActsUntil(At(10010)) == At(11000));
  CHECK(t.Reason(At(10010)).empty());
  // Renewals every 2 s, reads every second: the tenure moves on with each renewal seen.
  Read(&t, Lease("pod-a_u1", 2), 10000);
  CHECK(t.ActsUntil(At(10500)) == At(11000));
  Read(&t, Lease("pod-a_u1", 3), 11000);  // written after 10000
  CHECK(t.ActsUntil(At(11500)) == At(20000));
  // No renewal after that (the scheduler died, or the API server is unreachable: failed reads
  // change nothing): the tenure ends 10 s after the last read that preceded the last renewal,
  // 15 - 10 = 5 s before another scheduler may take the lease over (at 10000 + 15000 at the
  // earliest).
  t.ObserveFailure("connection refused");
  Read(&t, Lease("pod-a_u1", 3), 12000);
  CHECK(t.Leads(At(19999)));
  CHECK_FALSE(t.Leads(At(20000)));
  CHECK(t.ActsUntil(At(20000)) == TimePoint::min());
  CHECK(t.Reason(At(20000)).find("older than leaseRenewDeadline (10000 ms): stopped acting") !=
        std::string::npos);
}

TEST_CASE("lease tenure: the lease moving away, or released, ends the tenure at once", "[lease]") {
  for (const std::string& next : {std::string("pod-b_u2"), std::string("")}) {
    INFO("next holder: " << next);
    LeaseTenure t = Tenure();
    Read(&t, Lease("pod-a_u1", 1), 0);
    Read(&t, Lease("pod-a_u1", 2), 1000);
    Read(&t, Lease("pod-a_u1", 3), 10500);
    Read(&t, Lease("pod-a_u1", 4), 11000);
    REQUIRE(t.Leads(At(11500)));
    Read(&t, Lease(next, 5, next.empty() ? 0 : 1, next.empty() ? 1 : 15), 12000);
    CHECK_FALSE(t.Leads(At(12010)));
    CHECK(t.Reason(At(12010)).find(next.empty() ? "is not held" : "pod-b_u2 is not this replica") !=
          std::string::npos);
  }
}

TEST_CASE("lease tenure: a new holder waits out the previous holder's tenure", "[lease]") {
  // Replica b's view. It reads a's renewals for a while, then its own scheduler acquires.
  LeaseTenure t = Tenure("pod-b");
  Read(&t, Lease("pod-a_u1", 1), 0);
  Read(&t, Lease("pod-a_u1", 2), 1000);  // a's renewal, first seen at 1010: a may act until 11010
  Read(&t, Lease("pod-a_u1", 2), 2000);
  // a's scheduler releases the lease and b's acquires it at once, both between two reads: a's
  // last renewal, seen or not, was written before this read returned (3010), so a's sidecar may
  // act until 13010.
  Read(&t, Lease("pod-b_u9", 3, 1), 3000);
  CHECK_FALSE(t.Leads(At(3010)));
  Read(&t, Lease("pod-b_u9", 4, 1), 4000);  // b renews: written after 3000
  CHECK_FALSE(t.Leads(At(4010)));
  CHECK(t.Reason(At(4010)).find("previous holder's tenure") != std::string::npos);
  Read(&t, Lease("pod-b_u9", 5, 1), 6000);   // written after 4000: tenure to 14000
  Read(&t, Lease("pod-b_u9", 6, 1), 12000);  // written after 6000: tenure to 16000
  CHECK_FALSE(t.Leads(At(13009)));
  CHECK(t.Leads(At(13010)));
  CHECK(t.ActsUntil(At(13010)) == At(16000));
}

TEST_CASE("lease tenure: leaseTransitions that moved between two reads count as another holder",
          "[lease]") {
  // a -> c -> a between two of a's reads: c's sidecar may have acted; a waits it out.
  LeaseTenure t = Tenure("pod-a");
  Read(&t, Lease("pod-a_u1", 1, 4), 0);
  Read(&t, Lease("pod-a_u1", 2, 4), 1000);
  Read(&t, Lease("pod-a_u1", 3, 4), 10500);
  Read(&t, Lease("pod-a_u1", 4, 4), 11000);
  REQUIRE(t.Leads(At(11500)));
  Read(&t, Lease("pod-a_u1", 9, 6), 12000);
  CHECK_FALSE(t.Leads(At(12010)));
  Read(&t, Lease("pod-a_u1", 10, 6), 13000);
  CHECK_FALSE(t.Leads(At(22009)));
  Read(&t, Lease("pod-a_u1", 11, 6), 20000);
  CHECK(t.Leads(At(22010)));
}

TEST_CASE("lease tenure: a shorter leaseDurationSeconds keeps the margin", "[lease]") {
  // The scheduler writes 8 s: the tenure is 8 - 5 = 3 s after a renewal, not 10.
  LeaseTenure t = Tenure();
  Read(&t, Lease("pod-a_u1", 1, 0, 8), 0);
  Read(&t, Lease("pod-a_u1", 2, 0, 8), 11000);
  Read(&t, Lease("pod-a_u1", 3, 0, 8), 12000);  // written after 11000
  CHECK(t.Leads(At(12010)));
  CHECK(t.ActsUntil(At(12010)) == At(14000));
  CHECK_FALSE(t.Leads(At(14000)));
  // A lease of 5 s or less leaves nothing: this replica never acts, and says why.
  LeaseTenure short_lease = Tenure();
  Read(&short_lease, Lease("pod-a_u1", 1, 0, 5), 0);
  Read(&short_lease, Lease("pod-a_u1", 2, 0, 5), 11000);
  Read(&short_lease, Lease("pod-a_u1", 3, 0, 5), 12000);
  CHECK_FALSE(short_lease.Leads(At(12010)));
  CHECK(short_lease.Reason(At(12010)).find("no tenure is left within the margin of 5000 ms") !=
        std::string::npos);
}

TEST_CASE("lease tenure: no lease, and failed reads, are said in the reason", "[lease]") {
  LeaseTenure t = Tenure();
  Read(&t, kube::LeaseRecord{}, 0);
  CHECK(t.Reason(At(100)).find("not found: is kube-scheduler's leader election on?") !=
        std::string::npos);
  t.ObserveFailure("HTTP 403: forbidden");
  CHECK(t.Reason(At(100)).find("last read failed: HTTP 403: forbidden") != std::string::npos);
}

}  // namespace
}  // namespace lease_tenure_test
}  // namespace capext
