// reserveAt: filter (docs/capacity-semantics.md#6-accounting-used-reservations-nominations, "Or
// at /filter"): /filter holds a passing pod's quota without a node. Many threads filtering pods
// of one quota at once never hold more than its max; a pod asked again renews its hold or loses
// it; a hold ends when the watch shows the pod bound (as usage), or at reservationTTL; pods of
// namespaces without a quota and the default reserveAt: bind hold nothing. Run under
// ThreadSanitizer by test.sh (tag [concurrency]).
#include <rapidjson/document.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <catch2/catch.hpp>

#include "extender/embedded/embedded_binder.h"
#include "extender/log.h"
#include "extender/verbs/extender_service.h"
#include "tests/support/builders.h"

namespace capext {
namespace filter_hold_test {
namespace {

using testing::CpuList;
using testing::kGi;
using testing::MakeNode;
using testing::MakeQuota;

constexpr int kNodes = 4;
constexpr int64_t kRequestMilli = 100;
constexpr int64_t kStartMs = 1'800'000'000'000;
constexpr int64_t kTtlMs = 60'000;

std::string NodeName(int n) {
  return fmt::format("node-{}", n);
}
std::string Uid(const std::string& ns, int i) {
  return fmt::format("uid-{}-{:04}", ns, i);
}

// A pending pod as kube-scheduler sends it in /filter (trimmed), offered every node.
std::string FilterBody(const std::string& ns, int i, int64_t cpu_milli = kRequestMilli) {
  std::string names;
  for (int n = 0; n < kNodes; ++n)
    names += fmt::format("{}\"{}\"", n == 0 ? "" : ",", NodeName(n));
  return fmt::format(
      R"({{"Pod":{{"metadata":{{"name":"p{:04}","namespace":"{}","uid":"{}",)"
      R"("creationTimestamp":"2027-01-01T00:00:00Z"}},"spec":{{"containers":[{{"name":"c",)"
      R"("image":"registry.k8s.io/pause:3.9","resources":{{"requests":{{"cpu":"{}m"}}}}}}],)"
      R"("priority":0}},"status":{{"phase":"Pending"}}}},"Nodes":null,"NodeNames":[{}]}})",
      i, ns, Uid(ns, i), cpu_milli, names);
}

// How many nodes a /filter answer passed, and its first failure message.
struct FilterAnswer {
  int passed = -1;
  std::string reason;
};
FilterAnswer Answer(const http::Response& r) {
  FilterAnswer out;
  rapidjson::Document doc;
  doc.Parse(r.body.c_str());
  if (r.status != 200 || !doc.IsObject()) return out;
  out.passed = doc["NodeNames"].IsArray() ? static_cast<int>(doc["NodeNames"].Size()) : 0;
  if (doc["FailedNodes"].IsObject() && doc["FailedNodes"].MemberCount() > 0)
    out.reason = doc["FailedNodes"].MemberBegin()->value.GetString();
  return out;
}

// What many threads' /filter answers were: passed on every node, refused by the quota's max,
// or anything else (a defect).
struct Tally {
  void Count(const FilterAnswer& a) {
    if (a.passed == kNodes) {
      ++passed;
    } else if (a.passed == 0 && a.reason.find("max") != std::string::npos) {
      ++refused;
    } else {
      ++other;
    }
  }
  std::atomic<int> passed{0}, refused{0}, other{0};
};

struct HoldCluster {
  explicit HoldCluster(bool reserve_at_filter, int64_t max_pods)
      : cache(QuotaSemantics::kCapacityExtender, {}, [this] { return now.load(); }),
        binder(&cache),
        service(&cache, &metrics, NodeScoring::kLeastAllocated, PriorityThenStartTimeOrder(),
                &binder, Options(reserve_at_filter)) {
    ConfigureLog("logfmt", "error");
    cache.set_ready(true);
    cache.Write([&](ClusterState& s) {
      for (int n = 0; n < kNodes; ++n)
        s.UpsertNode(MakeNode(NodeName(n), 64'000, 256 * kGi, 500));
      s.UpsertQuota(MakeQuota("team", CpuList(1'000'000), CpuList(max_pods * kRequestMilli)));
      return 0;
    });
  }
  ~HoldCluster() { ConfigureLog("logfmt", "info"); }

  static ServiceOptions Options(bool reserve_at_filter) {
    ServiceOptions options;
    options.reserve_at_filter = reserve_at_filter;
    options.reservation_ttl_ms = kTtlMs;
    return options;
  }

  FilterAnswer Filter(const std::string& ns, int i, int64_t cpu_milli = kRequestMilli) {
    std::string body = FilterBody(ns, i, cpu_milli);
    return Answer(service.Filter(body));
  }
  std::size_t Holds() {
    return cache.Read([](const ClusterState& s) { return s.ledger().holds().size(); });
  }
  bool Held(const std::string& ns, int i) {
    return cache.Read([&](const ClusterState& s) {
      const QuotaHold* h = s.ledger().FindHold(Uid(ns, i));
      return h != nullptr && !h->derived;
    });
  }
  // The quota's cpu used, holds included, in millicores (what the max check compares).
  int64_t Used() {
    return cache.Read([](const ClusterState& s) { return s.ledger().Used("team").Get("cpu"); });
  }
  // The watch shows the pod bound to node 0, as kube-scheduler's own Binding would.
  void WatchShowsBound(const std::string& ns, int i) {
    cache.Write([&](ClusterState& s) {
      Pod pod = testing::MakePod(ns, fmt::format("p{:04}", i))
                    .Cpu(kRequestMilli)
                    .BoundTo(NodeName(0))
                    .Build();
      pod.uid = Uid(ns, i);
      s.UpsertPod(pod);
      return 0;
    });
  }
  void Expire(int64_t at_ms) {
    now = at_ms;
    cache.Write([&](ClusterState& s) { return s.Expire(at_ms).size(); });
  }

  std::atomic<int64_t> now{kStartMs};
  Metrics metrics;
  SchedulerCache cache;
  EmbeddedBinder binder;
  ExtenderService service;
};

// Threads released together at a quota with room for two: the shared-lock passes overlap, so
// only the check again under the exclusive lock keeps the holds at two.
TEST_CASE("reserveAt filter: pods filtered at once never hold more than the quota's max",
          "[service][concurrency]") {
  constexpr int kRounds = 60, kThreads = 8, kFit = 2;
  for (int round = 0; round < kRounds; ++round) {
    INFO("round " << round);
    HoldCluster c(/*reserve_at_filter=*/true, kFit);
    std::atomic<int> ready{0};
    Tally tally;
    std::atomic<bool> go{false};
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        ++ready;
        while (!go.load())
          std::this_thread::yield();
        tally.Count(c.Filter("team", t));
      });
    }
    while (ready.load() < kThreads)
      std::this_thread::yield();
    go = true;
    for (auto& t : threads)
      t.join();
    REQUIRE(tally.other == 0);
    REQUIRE(tally.passed == kFit);
    REQUIRE(tally.refused == kThreads - kFit);
    REQUIRE(c.Holds() == static_cast<std::size_t>(kFit));
    REQUIRE(c.Used() == kFit * kRequestMilli);
  }
}

TEST_CASE(
    "reserveAt filter: a storm of /filter calls holds exactly the quota's max, and the "
    "watch turns the holds into usage",
    "[service][concurrency]") {
  constexpr int kPods = 600, kThreads = 16, kFit = 50;
  HoldCluster c(/*reserve_at_filter=*/true, kFit);
  std::atomic<int> next{0};
  Tally tally;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int i = next++; i < kPods; i = next++) {
        tally.Count(c.Filter("team", i));
      }
    });
  }
  for (auto& t : threads)
    t.join();
  CHECK(tally.other == 0);
  CHECK(tally.passed == kFit);
  CHECK(tally.refused == kPods - kFit);
  CHECK(c.Holds() == static_cast<std::size_t>(kFit));
  CHECK(c.Used() == kFit * kRequestMilli);

  // kube-scheduler binds them itself: each hold becomes usage in the watch's step, never both.
  int bound = 0;
  for (int i = 0; i < kPods; ++i) {
    if (!c.Held("team", i)) continue;
    c.WatchShowsBound("team", i);
    ++bound;
    CHECK(c.Used() == kFit * kRequestMilli);
  }
  CHECK(bound == kFit);
  CHECK(c.Holds() == 0);
  CHECK(c.Filter("team", kPods).passed == 0);  // still full: the bound pods count
}

TEST_CASE("reserveAt filter: asked again, a pod renews its hold or loses it", "[service]") {
  HoldCluster c(/*reserve_at_filter=*/true, 2);
  REQUIRE(c.Filter("team", 0).passed == kNodes);
  REQUIRE(c.Filter("team", 1).passed == kNodes);
  CHECK(c.Used() == 2 * kRequestMilli);
  const FilterAnswer third = c.Filter("team", 2);
  CHECK(third.passed == 0);
  CHECK(third.reason.find("max") != std::string::npos);

  SECTION("a new attempt passes again (its own hold is not counted against it) and renews it") {
    c.now = kStartMs + kTtlMs / 2;
    CHECK(c.Filter("team", 0).passed == kNodes);
    CHECK(c.Holds() == 2);
    c.Expire(kStartMs + kTtlMs);  // pod 1's hold ends, pod 0's was renewed
    CHECK(c.Held("team", 0));
    CHECK_FALSE(c.Held("team", 1));
    CHECK(c.Filter("team", 2).passed == kNodes);
  }
  SECTION("an aborted attempt never asked again holds until reservationTTL") {
    c.Expire(kStartMs + kTtlMs - 1);
    CHECK(c.Holds() == 2);
    c.Expire(kStartMs + kTtlMs);
    CHECK(c.Holds() == 0);
    CHECK(c.Used() == 0);
    CHECK(c.Filter("team", 2).passed == kNodes);
  }
  SECTION("a new attempt that no longer fits ends the hold of the earlier one") {
    // Pod 0 asked again with a larger request (the pod was replaced by its controller with the
    // same uid in this test's terms): 1 held by pod 1 + 2 > 2, refused, and its hold is gone.
    const FilterAnswer bigger = c.Filter("team", 0, 2 * kRequestMilli);
    CHECK(bigger.passed == 0);
    CHECK_FALSE(c.Held("team", 0));
    CHECK(c.Used() == kRequestMilli);
    CHECK(c.Filter("team", 2).passed == kNodes);
  }
}

TEST_CASE("reserveAt filter: nothing is held without a quota, or with reserveAt bind",
          "[service]") {
  SECTION("a namespace without an ElasticQuota") {
    HoldCluster c(/*reserve_at_filter=*/true, 1);
    CHECK(c.Filter("free", 0).passed == kNodes);
    CHECK(c.Holds() == 0);
  }
  SECTION("reserveAt: bind, the default") {
    HoldCluster c(/*reserve_at_filter=*/false, 1);
    CHECK(c.Filter("team", 0).passed == kNodes);
    CHECK(c.Filter("team", 1).passed == kNodes);  // /bind decides: nothing was held
    CHECK(c.Holds() == 0);
    CHECK(c.Used() == 0);
  }
}

}  // namespace
}  // namespace filter_hold_test
}  // namespace capext
