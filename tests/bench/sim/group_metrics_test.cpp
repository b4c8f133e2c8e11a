// GroupMetrics: groups started, partially running time and the resources held meanwhile, time to
// start, member evictions; instants where members bind one after another are not partial, nor is
// a run finishing (docs/workloads.md#6-measuring-groups-in-the-simulator).
#include "bench/sim/group_metrics.h"

#include <catch2/catch.hpp>

namespace capext {
namespace group_metrics_test {
namespace {

TEST_CASE("a group partially running holds its members' cpu and GPUs until it starts",
          "[sim][groups]") {
  GroupMetrics m(2);
  const int g = m.AddGroup(1, 3, 1000);
  m.AdvanceTo(2000);
  m.MemberStarted(g, 4000, 1);
  m.MemberStarted(g, 4000, 1);  // 2 of 3 running: partial from t=2000
  m.AdvanceTo(5000);
  m.MemberStarted(g, 4000, 1);  // started at 5000: 4 s after arrival
  m.AdvanceTo(9000);
  m.MemberStopped(g, 4000, 1, true);  // evicted: 2 of 3 again, partial from 9000
  m.Finish(10'000);
  const GroupCounters& c = m.counters()[1];
  CHECK(c.submitted == 1);
  CHECK(c.started == 1);
  CHECK(c.start_waits_ms == std::vector<int64_t>{4000});
  CHECK(c.member_evictions == 1);
  CHECK(c.ever_partial == 1);
  CHECK(c.partial_now == 1);
  // (5000 - 2000) x 8000 + (10000 - 9000) x 8000 cpu-milli ms; GPUs 2 x 4000 ms.
  CHECK(c.partial_cpu_milli_ms == 3000 * 8000 + 1000 * 8000);
  CHECK(c.partial_gpu_ms == 2 * 3000 + 2 * 1000);
  CHECK(m.counters()[0].submitted == 0);
}

TEST_CASE("members starting together at one instant are never partially running", "[sim][groups]") {
  GroupMetrics m(1);
  const int g = m.AddGroup(0, 2, 0);
  m.AdvanceTo(500);
  m.MemberStarted(g, 1000, 0);
  m.MemberStarted(g, 1000, 0);
  m.MemberStarted(g, 1000, 0);  // a surplus member
  m.AdvanceTo(900);
  m.MemberStopped(g, 1000, 0, false);  // surplus completes: still at its minimum
  m.Finish(1000);
  const GroupCounters& c = m.counters()[0];
  CHECK(c.started == 1);
  CHECK(c.ever_partial == 0);
  CHECK(c.partial_cpu_milli_ms == 0);
  CHECK(c.partial_now == 0);
  CHECK(c.member_evictions == 0);
}

TEST_CASE("a run that reached its minimum is finishing once a member completes; not partial",
          "[sim][groups]") {
  // minMember 2, three members: m0 starts at 0, m1 and m2 at 1000 (m0 alone 1 s: partial);
  // m0 completes at 5000 (the run is finishing: m1 and m2 end the job's work), m1 at 6000, m2 at
  // 8000. Then a second run of re-created members: r0 at 10000, evicted partner never comes;
  // r0 alone until 12000 is partial again (a new run has not reached its minimum).
  GroupMetrics m(1);
  const int g = m.AddGroup(0, 2, 0);
  m.MemberStarted(g, 1000, 0);
  m.AdvanceTo(1000);
  m.MemberStarted(g, 1000, 0);
  m.MemberStarted(g, 1000, 0);
  m.AdvanceTo(5000);
  m.MemberStopped(g, 1000, 0, false);
  m.AdvanceTo(6000);
  m.MemberStopped(g, 1000, 0, false);  // 1 of 2 running, finishing: not partial
  m.AdvanceTo(8000);
  m.MemberStopped(g, 1000, 0, false);  // the run is over
  m.AdvanceTo(10'000);
  m.MemberStarted(g, 1000, 0);  // a new run, below its minimum
  m.Finish(12'000);
  const GroupCounters& c = m.counters()[0];
  CHECK(c.started == 1);
  CHECK(c.ever_partial == 1);
  CHECK(c.partial_now == 1);
  CHECK(c.partial_cpu_milli_ms == 1000 * 1000 + 2000 * 1000);
}

TEST_CASE(
    "evictions below the minimum are partial even after a completion would not be; a run "
    "that never reached its minimum counts its completions' aftermath",
    "[sim][groups]") {
  GroupMetrics m(1);
  // Group a (minMember 3): 3 run from 0; one is evicted at 1000 (2 of 3: partial), one more
  // completes at 3000: the run was complete, so it is finishing from then on.
  const int a = m.AddGroup(0, 3, 0);
  for (int i = 0; i < 3; ++i)
    m.MemberStarted(a, 1000, 0);
  m.AdvanceTo(1000);
  m.MemberStopped(a, 1000, 0, true);
  m.AdvanceTo(3000);
  m.MemberStopped(a, 1000, 0, false);
  // Group b (minMember 3): only 2 ever run, from 3000; one completes at 4000: never complete, so
  // the other running alone until 6000 is still partial.
  const int b = m.AddGroup(0, 3, 3000);
  m.MemberStarted(b, 500, 0);
  m.MemberStarted(b, 500, 0);
  m.AdvanceTo(4000);
  m.MemberStopped(b, 500, 0, false);
  m.AdvanceTo(6000);
  m.MemberStopped(b, 500, 0, false);
  m.Finish(7000);
  const GroupCounters& c = m.counters()[0];
  CHECK(c.started == 1);
  CHECK(c.ever_partial == 2);
  CHECK(c.partial_now == 0);
  CHECK(c.member_evictions == 1);
  // a: 2 x 1000 cpu for 2000 ms; b: 2 x 500 for 1000 ms, then 500 for 2000 ms.
  CHECK(c.partial_cpu_milli_ms == 2000 * 2000 + 1000 * 1000 + 500 * 2000);
}

TEST_CASE("a member starting at the instant the others stop continues their run", "[sim][groups]") {
  // minMember 2. Group a: a0, a1 run from 0 and complete at 1000, when the late surplus a2
  // binds in their room: no time passed without a member running, so a2 is the finishing run's
  // tail until 3000. Group b: the same, but b0 and b1 are evicted at 1000: b2 alone is below the
  // minimum with nothing completed, partially running until 3000.
  GroupMetrics m(1);
  const int a = m.AddGroup(0, 2, 0);
  const int b = m.AddGroup(0, 2, 0);
  for (const int g : {a, b}) {
    m.MemberStarted(g, 1000, 0);
    m.MemberStarted(g, 1000, 0);
  }
  m.AdvanceTo(1000);
  for (const int g : {a, b}) {
    m.MemberStopped(g, 1000, 0, g == b);
    m.MemberStopped(g, 1000, 0, g == b);
    m.MemberStarted(g, 1000, 0);
  }
  m.AdvanceTo(3000);
  m.MemberStopped(a, 1000, 0, false);
  m.MemberStopped(b, 1000, 0, false);
  m.Finish(4000);
  const GroupCounters& c = m.counters()[0];
  CHECK(c.ever_partial == 1);
  CHECK(c.partial_cpu_milli_ms == 1000 * 2000);
  CHECK(c.member_evictions == 2);
}

}  // namespace
}  // namespace group_metrics_test
}  // namespace capext
