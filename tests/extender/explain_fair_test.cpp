// explain with fair sharing (extender/explain.h, docs/fair-sharing.md#8-where-a-user-sees-it):
// the plan across nodes takes victims by reclaim between borrowers exactly when the config turns
// fairSharing on, with the config's fairShareMinRunTime, through the options serve builds
// (FairReclaimOptionsFrom) for both `capacity-extender explain` and POST /explain.
#include <rapidjson/document.h>

#include <atomic>
#include <string>

#include <catch2/catch.hpp>

#include "config/extender_config.h"
#include "extender/embedded/embedded_binder.h"
#include "extender/explain.h"
#include "extender/serve_options.h"
#include "extender/verbs/extender_service.h"
#include "tests/support/builders.h"

namespace capext {
namespace explain_fair_test {
namespace {

using testing::CpuList;
using testing::MakeNode;
using testing::MakePod;
using testing::MakeQuota;

constexpr int64_t kNow = 3'600'000;  // every running pod started at 0..27 ms: an hour ago

ElasticQuota Weighted(ElasticQuota q, int64_t weight_milli) {
  q.weight_milli = weight_milli;
  return q;
}

// docs/fair-sharing.md#6-reclaim-between-borrowers's worked example: L min 30 idle; A, B, C, D
// min 1 with weights 1:1:2:4 on one 34-cpu node; A uses 1, B 1, C 5, D 27 (D borrows 26, C 4);
// A has a 1-cpu pod pending.
void LoadWorked(ClusterState& s) {
  s.UpsertNode(MakeNode("n1", 34000));
  s.UpsertQuota(MakeQuota("l", CpuList(30000), CpuList(40000)));
  s.UpsertQuota(Weighted(MakeQuota("a", CpuList(1000), CpuList(40000)), 1000));
  s.UpsertQuota(Weighted(MakeQuota("b", CpuList(1000), CpuList(40000)), 1000));
  s.UpsertQuota(Weighted(MakeQuota("c", CpuList(1000), CpuList(40000)), 2000));
  s.UpsertQuota(Weighted(MakeQuota("d", CpuList(1000), CpuList(40000)), 4000));
  for (const auto& [ns, n] : {std::pair{"a", 1}, {"b", 1}, {"c", 5}, {"d", 27}}) {
    for (int i = 0; i < n; ++i)
      s.UpsertPod(MakePod(ns, std::string(ns) + "-run-" + std::to_string(i))
                      .Cpu(1000)
                      .BoundTo("n1")
                      .Started(i)
                      .Created(i));
  }
  s.UpsertPod(MakePod("a", "a-pending-0").Cpu(1000).Created(1000));
}

struct Fixture {
  explicit Fixture(const ExtenderConfig& config)
      : cache(QuotaSemantics::kCapacityExtender, {}, [this] { return now.load(); }),
        binder(&cache),
        service(&cache, &metrics, NodeScoring::kLeastAllocated, PriorityThenStartTimeOrder(),
                &binder, ServiceOptionsFrom(config)),
        fair(FairReclaimOptionsFrom(config)) {
    cache.set_ready(true);
    cache.Write([](ClusterState& s) {
      LoadWorked(s);
      return 0;
    });
    fair.now_ms = kNow;
  }
  // What `capacity-extender explain` prints for A's pending pod.
  std::string Text() {
    return cache.Read([&](const ClusterState& s) {
      return ExplainPodText(s, *s.FindPodByName("a", "a-pending-0"), PriorityThenStartTimeOrder(),
                            fair);
    });
  }
  // POST /explain with A's pending pod (the cache's copy is explained).
  rapidjson::Document Posted() {
    std::string body =
        R"({"metadata":{"name":"a-pending-0","namespace":"a","uid":"a/a-pending-0"},)"
        R"("spec":{"containers":[{"name":"c","resources":{"requests":{"cpu":"1"}}}]},)"
        R"("status":{"phase":"Pending"}})";
    const http::Response r = service.Explain(body);
    REQUIRE(r.status == 200);
    rapidjson::Document doc;
    doc.Parse(r.body.c_str());
    REQUIRE(doc.IsObject());
    return doc;
  }
  std::atomic<int64_t> now{kNow};
  Metrics metrics;
  SchedulerCache cache;
  EmbeddedBinder binder;
  ExtenderService service;
  FairReclaimOptions fair;
};

TEST_CASE("serve builds the fair reclaim options once, from fairSharing and fairShareMinRunTime",
          "[explain][fair]") {
  ExtenderConfig config;
  CHECK_FALSE(FairReclaimOptionsFrom(config).enabled);
  CHECK_FALSE(ServiceOptionsFrom(config).fair_reclaim.enabled);
  config.fair_sharing = true;
  config.fair_share_min_run_time = std::chrono::milliseconds(42'000);
  const FairReclaimOptions fair = FairReclaimOptionsFrom(config);
  CHECK(fair.enabled);
  CHECK(fair.min_run_time_ms == 42'000);
  CHECK(ServiceOptionsFrom(config).fair_reclaim.enabled);
  CHECK(ServiceOptionsFrom(config).fair_reclaim.min_run_time_ms == 42'000);
}

TEST_CASE("explain shows the fair plan for a borrower below its fair share only with fairSharing",
          "[explain][fair]") {
  ExtenderConfig config;
  SECTION("off: a borrower takes nothing from another borrower") {
    Fixture f(config);
    const std::string text = f.Text();
    INFO(text);
    CHECK(text.find("plan across nodes: no-victims") != std::string::npos);
    // The arithmetic is shown either way: A borrows nothing, its fair value 4/34.
    CHECK(text.find("fair share of a/a: borrowed {} over pool {cpu 34}") != std::string::npos);
    const rapidjson::Document doc = f.Posted();
    REQUIRE(doc.HasMember("plan"));
    CHECK_FALSE(doc["plan"]["fairSharing"].GetBool());
    CHECK(std::string(doc["plan"]["outcome"].GetString()) != "found");
  }
  SECTION("on: A (share after 1/34 = 0.029) takes D's latest pod (D after 25/136 = 0.184)") {
    config.fair_sharing = true;
    Fixture f(config);
    const std::string text = f.Text();
    INFO(text);
    CHECK(text.find("plan across nodes (fair sharing: reclaim between borrowers): found") !=
          std::string::npos);
    CHECK(text.find("a/a-pending-0 -> n1; victims: single d/d-run-26") != std::string::npos);
    const rapidjson::Document doc = f.Posted();
    const auto& plan = doc["plan"];
    CHECK(plan["fairSharing"].GetBool());
    CHECK(std::string(plan["outcome"].GetString()) == "found");
    REQUIRE(plan["units"].Size() == 1);
    REQUIRE(plan["units"][0]["victims"].Size() == 1);
    CHECK(std::string(plan["units"][0]["victims"][0].GetString()) == "d/d-run-26");
  }
  SECTION("on, with a minimum run time longer than any pod has run: no victim by fairness") {
    config.fair_sharing = true;
    config.fair_share_min_run_time = std::chrono::hours(2);
    Fixture f(config);
    const std::string text = f.Text();
    INFO(text);
    CHECK(text.find("plan across nodes (fair sharing: reclaim between borrowers): found") ==
          std::string::npos);
    CHECK(std::string(f.Posted()["plan"]["outcome"].GetString()) != "found");
  }
}

}  // namespace
}  // namespace explain_fair_test
}  // namespace capext
