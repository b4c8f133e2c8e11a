// The routes of extender/http/router.cpp added for operators: GET /pending (JSON from the
// reclaim controller's board) and GET /ui (the self-contained page), their methods, the path
// prefix, and the page's promise of no external assets.
#include "extender/http/router.h"

#include <rapidjson/document.h>

#include <optional>
#include <regex>
#include <string>

#include <catch2/catch.hpp>

#include "extender/embedded/embedded_binder.h"

namespace capext {
namespace {

struct Routes {
  Routes()
      : cache(QuotaSemantics::kCapacityExtender, {}, [] { return int64_t{1'767'225'600'000}; }),
        binder(&cache),
        service(&cache, &metrics, NodeScoring::kLeastAllocated, MoreImportantFn(MoreImportantPod),
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
  CHECK(routes.Call("GET", "/scheduler/ui", "/scheduler").body == html);
  CHECK(routes.Call("POST", "/ui").status == 405);
}

}  // namespace
}  // namespace capext
