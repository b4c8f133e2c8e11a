// The routes of extender/routes.cpp added for operators: GET /pending (JSON from the
// reclaim controller's board) and GET /ui (the self-contained page), their methods, the path
// prefix, and the page's promise of no external assets.
#include "extender/routes.h"

#include <rapidjson/document.h>

#include <optional>
#include <regex>
#include <string>

#include <catch2/catch.hpp>

#include "extender/embedded/embedded_binder.h"

namespace capext {
namespace routes_test {
namespace {

struct Routes {
  Routes()
      : cache(QuotaSemantics::kCapacityExtender, {}, [] { return int64_t{1'767'225'600'000}; }),
        binder(&cache),
        service(&cache, &metrics, NodeScoring::kLeastAllocated, PriorityThenStartTimeOrder(),
                &binder, ServiceOptions{}) {
    cache.set_ready(true);
  }
  http::Response Call(const std::string& method, const std::string& target,
                      const std::string& prefix = "") {
    http::Handler handler =
        MakeRouter(&service, &metrics, {prefix, Listener::kExtender, &board, leadership});
    std::optional<http::Response> answer;
    http::Request request;
    request.method = method;
    request.target = target;
    handler(std::move(request), [&](http::Response r) { answer = std::move(r); });
    REQUIRE(answer);
    return *answer;
  }
  std::string Header(const http::Response& r, const std::string& name) {
    for (const auto& [k, v] : r.headers)
      if (k == name) return v;
    return "";
  }

  Metrics metrics;
  SchedulerCache cache;
  EmbeddedBinder binder;
  ExtenderService service;
  PendingBoard board;
  const Leadership* leadership = nullptr;
};

// A follower as SchedulerLeaseFollower reports one.
class FollowerLeadership final : public Leadership {
 public:
  Clock::time_point ActsUntil() const override { return Clock::time_point::min(); }
  LeadershipReport Report() const override {
    LeadershipReport r;
    r.mode = "follow-scheduler";
    r.identity = "pod-b";
    r.lease = "capacity-extender/capacity-scheduler";
    r.holder = "pod-a_1f2e";
    r.lease_transitions = 3;
    r.transitions = 2;
    r.reason = "the leaseholder pod-a_1f2e is not this replica (pod-b)";
    return r;
  }
};

TEST_CASE("router: /readyz and /metrics say which replica acts", "[router][lease]") {
  Routes routes;
  SoleReplica sole;
  routes.leadership = &sole;
  http::Response ready = routes.Call("GET", "/readyz");
  CHECK(ready.status == 200);
  CHECK(ready.body == R"({"status":"ready","leader":{"mode":"off","leads":true,"transitions":0}})");
  CHECK(routes.Call("GET", "/metrics").body.find("capacity_extender_leader 1\n") !=
        std::string::npos);

  FollowerLeadership follower;
  routes.leadership = &follower;
  ready = routes.Call("GET", "/readyz");
  CHECK(ready.status == 200);  // a follower with a synced cache is ready
  rapidjson::Document doc;
  doc.Parse(ready.body.c_str());
  REQUIRE(doc.IsObject());
  const auto& leader = doc["leader"];
  CHECK_FALSE(leader["leads"].GetBool());
  CHECK(std::string(leader["holder"].GetString()) == "pod-a_1f2e");
  CHECK(std::string(leader["lease"].GetString()) == "capacity-extender/capacity-scheduler");
  CHECK(leader["leaseTransitions"].GetInt() == 3);
  CHECK(std::string(leader["reason"].GetString()).find("not this replica") != std::string::npos);
  const std::string metrics = routes.Call("GET", "/metrics").body;
  CHECK(metrics.find("capacity_extender_leader 0\n") != std::string::npos);
  CHECK(metrics.find("capacity_extender_leader_info{mode=\"follow-scheduler\",identity=\"pod-b\","
                     "holder=\"pod-a_1f2e\"} 1") != std::string::npos);
  CHECK(metrics.find("capacity_extender_leader_transitions_total 2\n") != std::string::npos);
  CHECK(metrics.find("capacity_extender_lease_transitions 3\n") != std::string::npos);

  // Not ready: the error, and still who leads.
  routes.cache.set_ready(false);
  http::Response not_ready = routes.Call("GET", "/readyz");
  CHECK(not_ready.status == 503);
  doc.Parse(not_ready.body.c_str());
  REQUIRE(doc.IsObject());
  CHECK(std::string(doc["error"].GetString()) == "cluster cache not synced yet");
  CHECK_FALSE(doc["leader"]["leads"].GetBool());
}

TEST_CASE("router: GET /pending answers the board's JSON; other methods get 405", "[pending]") {
  Routes routes;
  PendingPodRecord r;
  r.uid = "u-big";
  r.ns = "eq1";
  r.name = "big";
  r.quota = "eq1/eq1";
  r.verdict.code = VerdictCode::kQuotaExceeded;
  r.verdict.message = "over max";
  routes.board.Set(r);
  for (const std::string prefix : {"", "/scheduler"}) {
    http::Response got = routes.Call("GET", prefix + "/pending?watch=0", prefix);
    REQUIRE(got.status == 200);
    rapidjson::Document doc;
    doc.Parse(got.body.c_str());
    REQUIRE(doc.IsObject());
    CHECK(doc["ready"].GetBool());
    REQUIRE(doc["pending"].Size() == 1);
    CHECK(std::string(doc["pending"][0]["reason"].GetString()) == "QuotaExceeded");
  }
  http::Response post = routes.Call("POST", "/pending");
  CHECK(post.status == 405);
  CHECK(routes.Header(post, "Allow") == "GET");
  CHECK(routes.metrics.Render().find("verb=\"pending\",code=\"200\"") != std::string::npos);
}

TEST_CASE("router: GET /ui is one read-only page with no external assets", "[ui]") {
  Routes routes;
  http::Response page = routes.Call("GET", "/ui");
  REQUIRE(page.status == 200);
  CHECK(page.content_type == "text/html; charset=utf-8");
  const std::string csp = routes.Header(page, "Content-Security-Policy");
  CHECK(csp.find("default-src 'none'") != std::string::npos);
  CHECK(csp.find("connect-src 'self'") != std::string::npos);
  CHECK(csp.find("form-action 'none'") != std::string::npos);
  const std::string& html = page.body;
  CHECK(html.rfind("<!DOCTYPE html>", 0) == 0);
  CHECK(html.find("</html>") != std::string::npos);
  // Nothing is loaded from elsewhere, nothing is written: no src/href to a URL, no form, and
  // the only requests are GETs of the server's own JSON, by relative URL (a path prefix works).
  CHECK_FALSE(std::regex_search(html, std::regex(R"((src|href)\s*=\s*["']?(https?:)?//)")));
  CHECK(html.find("<form") == std::string::npos);
  CHECK(html.find("method:") == std::string::npos);
  CHECK(html.find("getJson(\"quotas\")") != std::string::npos);
  CHECK(html.find("getJson(\"pending\")") != std::string::npos);
  CHECK(html.find("rel=\"icon\" href=\"data:,\"") != std::string::npos);  // no favicon request
  // Fair sharing's numbers of /quotas (docs/fair-sharing.md#8-where-a-user-sees-it) are shown per
  // quota.
  for (const char* field : {"q.weight", "q.share", "q.fairShare", "q.weightProblem"})
    CHECK(html.find(field) != std::string::npos);
  CHECK(routes.Call("GET", "/scheduler/ui", "/scheduler").body == html);
  CHECK(routes.Call("POST", "/ui").status == 405);
}

}  // namespace
}  // namespace routes_test
}  // namespace capext

namespace capext {
namespace routes_test {
namespace {

// A live cache's report: pods out of sync since `out_for` ago (in sync when zero).
class FixedSyncSource final : public CacheSyncSource {
 public:
  explicit FixedSyncSource(std::chrono::milliseconds out_for) : out_for_(out_for) {}
  CacheSyncReport Report(std::chrono::steady_clock::time_point now) const override {
    CacheSyncReport report;
    report.now = now;
    report.max_out_of_sync = std::chrono::seconds(5);
    report.resources.push_back({"nodes", true, true, now - std::chrono::minutes(1), ""});
    ResourceSync pods{"pods", true, true, now - std::chrono::minutes(1), ""};
    if (out_for_.count() > 0) {
      pods.in_sync = false;
      pods.since = now - out_for_;
      pods.cause = "list /api/v1/pods: connection refused (retrying)";
    }
    report.resources.push_back(pods);
    return report;
  }

 private:
  std::chrono::milliseconds out_for_;
};

TEST_CASE("router: /readyz is 503 while a resource is out of sync beyond the bound, naming it",
          "[readyz]") {
  Routes routes;
  SECTION("out of sync within the bound: ready, and the gauges say so") {
    FixedSyncSource source(std::chrono::seconds(2));
    routes.cache.set_sync_source(&source);
    http::Response ready = routes.Call("GET", "/readyz");
    CHECK(ready.status == 200);
    CHECK(ready.body == R"({"status":"ready"})");
    const std::string metrics = routes.Call("GET", "/metrics").body;
    CHECK(metrics.find("capacity_extender_cache_in_sync{resource=\"pods\"} 0") !=
          std::string::npos);
    CHECK(metrics.find("capacity_extender_cache_in_sync{resource=\"nodes\"} 1") !=
          std::string::npos);
    CHECK(metrics.find("capacity_extender_cache_out_of_sync_seconds{resource=\"pods\"} 2.0") !=
          std::string::npos);
    CHECK(metrics.find("capacity_extender_cache_out_of_sync_seconds{resource=\"nodes\"} 0.000") !=
          std::string::npos);
    routes.cache.set_sync_source(nullptr);
  }
  SECTION("beyond the bound: 503, which resource, for how long, why; /pending agrees") {
    FixedSyncSource source(std::chrono::seconds(7));
    routes.cache.set_sync_source(&source);
    http::Response got = routes.Call("GET", "/readyz");
    CHECK(got.status == 503);
    INFO(got.body);
    CHECK(got.body.find("cache out of sync with the API server for longer than 5s: pods for 7.0 s "
                        "(list /api/v1/pods: connection refused (retrying))") != std::string::npos);
    CHECK(got.body.find("nodes") == std::string::npos);
    rapidjson::Document pending;
    pending.Parse(routes.Call("GET", "/pending").body.c_str());
    REQUIRE(pending.IsObject());
    CHECK_FALSE(pending["ready"].GetBool());
    routes.cache.set_sync_source(nullptr);
  }
  SECTION("no ElasticQuota API, allowed: ready with a note") {
    routes.cache.set_quota_api(
        {false, false, "no ElasticQuota API is served (install deploy/crd)"});
    http::Response got = routes.Call("GET", "/readyz");
    CHECK(got.status == 200);
    CHECK(got.body ==
          R"x({"status":"ready","note":"no ElasticQuota API is served (install deploy/crd)"})x");
  }
  SECTION("embedded (no source): ready, no cache gauges") {
    CHECK(routes.Call("GET", "/readyz").status == 200);
    CHECK(routes.Call("GET", "/metrics").body.find("capacity_extender_cache_in_sync") ==
          std::string::npos);
  }
}

TEST_CASE("router: /pending says why the reclaim loop is held", "[pending]") {
  Routes routes;
  rapidjson::Document doc;
  doc.Parse(routes.Call("GET", "/pending").body.c_str());
  REQUIRE(doc.IsObject());
  CHECK(doc["reclaimHeld"].IsNull());
  routes.board.SetHold(PendingBoard::Hold{"cache out of sync with the API server: pods for 0.4 s",
                                          1'767'225'600'000});
  doc.Parse(routes.Call("GET", "/pending").body.c_str());
  REQUIRE(doc["reclaimHeld"].IsObject());
  CHECK(std::string(doc["reclaimHeld"]["reason"].GetString()) ==
        "cache out of sync with the API server: pods for 0.4 s");
  CHECK(std::string(doc["reclaimHeld"]["since"].GetString()) == "2026-01-01T00:00:00.000Z");
}

}  // namespace
}  // namespace routes_test
}  // namespace capext
