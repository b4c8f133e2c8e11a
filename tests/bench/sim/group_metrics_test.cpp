// GroupMetrics: groups started, partially running time and the resources held meanwhile, time to
// start, member evictions; instants where members bind one after another are not partial.
#include "bench/sim/group_metrics.h"

#include <catch2/catch.hpp>

namespace capext {
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

}  // namespace
}  // namespace capext
