// The reclaim controller on a cache out of sync
// (docs/capacity-semantics.md#8-the-reclaim-controller and 12): a pass plans, evicts, expires and
// nudges nothing while any resource of the cache's sync report is out of sync, says why on the
// board and in /metrics, and resumes at the first pass in sync.
#include <mutex>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "extender/cache_sync.h"
#include "tests/extender/reclaim/reclaim_harness.h"

namespace capext {
namespace reclaim_controller_hold_test {
namespace {

using namespace reclaim_testing;  // NOLINT: the harness of this folder

// A sync report the test sets: every resource in sync, or `resource` out of sync since 3 s ago.
class SettableSyncSource final : public CacheSyncSource {
 public:
  CacheSyncReport Report(std::chrono::steady_clock::time_point now) const override {
    std::lock_guard lock(mutex_);
    CacheSyncReport report;
    report.now = now;
    for (const char* r : {"pods", "nodes", "elasticquotas"}) {
      ResourceSync sync{r, true, true, now - std::chrono::minutes(5), ""};
      if (out_of_sync_ == r) {
        sync.in_sync = false;
        sync.since = now - std::chrono::seconds(3);
        sync.cause = "watch of nodes: connection reset by peer; resuming from resourceVersion 7";
      }
      report.resources.push_back(sync);
    }
    return report;
  }
  void SetOutOfSync(std::string resource) {
    std::lock_guard lock(mutex_);
    out_of_sync_ = std::move(resource);
  }

 private:
  mutable std::mutex mutex_;
  std::string out_of_sync_;
};

bool MetricsContain(Harness& h, const std::string& line) {
  return h.metrics.Render().find(line) != std::string::npos;
}

TEST_CASE("reclaim on a cache out of sync: no plan, eviction, expiry or nudge; resumes in sync",
          "[reclaim][sync]") {
  Harness h;
  SettableSyncSource source;
  h.cache.set_sync_source(&source);
  LoadSeed002(h);
  // A bind in flight whose reservation is due to expire: while the watch cannot confirm it, it
  // must not be forgotten.
  h.Add(MakePod("eq2", "bound-soon").Uid("u-bound-soon").Cpu(100).Created(kStartMs - 1000));
  h.cache.Write([](ClusterState& s) {
    s.Reserve("u-bound-soon", "n1", kStartMs, kStartMs + 1000);
    return 0;
  });
  CHECK(MetricsContain(h, "capacity_extender_reclaim_held 0"));

  source.SetOutOfSync("nodes");
  h.now += 5000;  // past the reservation's TTL
  CHECK(h.controller->RunOnce() == 0);
  h.now += 1000;
  CHECK(h.controller->RunOnce() == 0);
  CHECK(h.evictor.calls.empty());
  CHECK(h.nudger.calls.empty());
  CHECK(h.OurNomination("u-job-2") == nullptr);
  CHECK(h.cache.Read([](const ClusterState& s) { return s.reservations().size(); }) == 1);
  CHECK_FALSE(h.Verdict("u-job-2").has_value());  // not planned at all
  const auto hold = h.controller->board().Take().hold;
  REQUIRE(hold.has_value());
  INFO(hold->reason);
  CHECK(hold->reason.find("cache out of sync with the API server: nodes for 3.0 s") == 0);
  CHECK(hold->reason.find("connection reset by peer") != std::string::npos);
  CHECK(hold->since_ms == kStartMs + 5000);  // when the hold began, not the latest pass
  CHECK(MetricsContain(h, "capacity_extender_reclaim_held 1"));
  CHECK(MetricsContain(h, "capacity_extender_reclaim_held_passes_total 2"));

  source.SetOutOfSync("");
  h.now += 1000;
  CHECK(h.controller->RunOnce() == 1);
  CHECK(h.evictor.calls == std::vector<std::string>{"eq1/job-b"});
  CHECK(h.cache.Read([](const ClusterState& s) { return s.reservations().size(); }) == 0);
  CHECK_FALSE(h.controller->board().Take().hold.has_value());
  CHECK(MetricsContain(h, "capacity_extender_reclaim_held 0"));
  h.cache.set_sync_source(nullptr);
}

TEST_CASE("reclaim on a cache out of sync: the node the stale cache lacks makes eviction needless",
          "[reclaim][sync]") {
  // Seed 002 with job-2 pending; the nodes informer is out of sync and the cache lacks n3, a new
  // empty node where job-2 fits. Deciding now would evict eq1/job-b for nothing.
  Harness h;
  SettableSyncSource source;
  h.cache.set_sync_source(&source);
  LoadSeed002(h);
  source.SetOutOfSync("nodes");
  for (int pass = 0; pass < 3; ++pass) {
    h.now += 1000;
    CHECK(h.controller->RunOnce() == 0);
  }
  // The relist brings n3 in; then the cache is in sync.
  h.cache.Write([](ClusterState& s) {
    s.UpsertNode(MakeNode("n3", 8000, 32 * kGi));
    return 0;
  });
  source.SetOutOfSync("");
  h.now += 1000;
  CHECK(h.controller->RunOnce() == 0);
  CHECK(h.evictor.calls.empty());
  const auto verdict = h.Verdict("u-job-2");
  REQUIRE(verdict.has_value());
  CHECK(verdict->verdict.code == VerdictCode::kFits);
  h.cache.set_sync_source(nullptr);
}

}  // namespace
}  // namespace reclaim_controller_hold_test
}  // namespace capext
