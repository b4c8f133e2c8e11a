// LiveInformers against the API-server double (every resource of live mode listed once, one
// informer per ElasticQuota group, the sync report through a crash and a revival of the double,
// a group dropped only when two discoveries in a row lack it),
// and OutOfSyncLog on made-up reports (what is logged, when, and when it is back).
#include "extender/live/live_informers.h"

#include <catch2/catch.hpp>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "extender/live/out_of_sync_log.h"
#include "tests/support/apiserver_double_process.h"
#include "tests/support/recording_sink.h"

namespace capext {
namespace live_informers_test {
namespace {

using kube::testing::ApiServerDouble;
using kube::testing::Eventually;
using kube::testing::RecordingSink;
using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

std::vector<std::string> Names(const CacheSyncReport& report) {
  std::vector<std::string> out;
  for (const auto& r : report.resources)
    out.push_back(r.resource);
  return out;
}

TEST_CASE("LiveInformers: every resource listed once, its sync report through a crash",
          "[live][sync]") {
  ApiServerDouble::Options double_options;
  double_options.group = "both";
  ApiServerDouble server(double_options);
  REQUIRE(server.started());
  std::unique_ptr<kube::RestClient> client;
  REQUIRE(kube::RestClient::Create(server.Config(), {}, &client).ok());
  REQUIRE(client->Post("/api/v1/nodes", R"({"metadata":{"name":"n1"}})").status == 201);
  REQUIRE(client
              ->Post("/apis/scheduling.k8s.io/v1/priorityclasses",
                     R"({"metadata":{"name":"high"},"value":1000})")
              .status == 201);
  REQUIRE(client
              ->Post("/apis/policy/v1/namespaces/ns/poddisruptionbudgets",
                     R"({"metadata":{"name":"pdb"},"spec":{"minAvailable":1}})")
              .status == 201);
  REQUIRE(client
              ->Post("/apis/scheduling.x-k8s.io/v1alpha1/namespaces/ns/elasticquotas",
                     R"({"metadata":{"name":"eq"},"spec":{"min":{"cpu":"1"}}})")
              .status == 201);
  server.Control("churn", R"({"resource":"pods","namespace":"ns","prefix":"p-","count":2})");

  kube::DiscoveredApis apis;
  REQUIRE(kube::DiscoverApis(client.get(), &apis).ok());
  RecordingSink sink;
  kube::InformerOptions base;
  base.seed = 4;
  LiveInformers informers(client.get(), &sink, base, 300ms);
  CHECK(informers.UnsyncedResources().size() == 4);
  informers.Start();
  CHECK(informers.ApplyQuotaGroups(apis));
  CHECK_FALSE(informers.ApplyQuotaGroups(apis));  // nothing new
  REQUIRE(informers.QuotaGroups().size() == 2);
  CHECK(Names(informers.Report(Clock::now())) ==
        std::vector<std::string>{"pods", "nodes", "priorityclasses", "poddisruptionbudgets",
                                 "elasticquotas.scheduling.sigs.k8s.io", "elasticquotas"});
  REQUIRE(Eventually([&] { return informers.Report(Clock::now()).AllInSync(); }));
  CHECK(informers.UnsyncedResources().empty());
  CHECK(sink.Objects("nodes").count("n1") == 1);
  CHECK(sink.Objects("priorityclasses").count("high") == 1);
  CHECK(sink.Objects("poddisruptionbudgets").count("ns/pdb") == 1);
  CHECK(sink.Objects("elasticquotas").count("ns/eq") == 1);  // scheduling.x-k8s.io
  CHECK(sink.Objects("pods").size() == 2);

  const std::string state = server.Save();
  server.Crash();
  // Every resource out of sync, and beyond the 300 ms bound after a moment.
  REQUIRE(Eventually([&] {
    const std::string reason = informers.Report(Clock::now()).StaleReason();
    for (const char* r :
         {"pods for", "nodes for", "priorityclasses for", "poddisruptionbudgets for",
          "elasticquotas for", "elasticquotas.scheduling.sigs.k8s.io for"}) {
      if (reason.find(r) == std::string::npos) return false;
    }
    return true;
  }));
  const CacheSyncReport down = informers.Report(Clock::now());
  INFO(down.StaleReason());
  CHECK(down.StaleReason().find("cache out of sync with the API server for longer than 300ms: ") ==
        0);
  CHECK(down.Hold().find("elasticquotas") != std::string::npos);
  CHECK(informers.UnsyncedResources().empty());  // listed once: the first sync stays done

  REQUIRE(server.Revive(state, 0, 1));
  REQUIRE(Eventually([&] { return informers.Report(Clock::now()).AllInSync(); }, 10s));

  // A discovery without scheduling.x-k8s.io (an API server still starting lists custom
  // resources late): its quotas are kept; a second one in a row drops them.
  kube::DiscoveredApis without = apis;
  std::erase_if(without.elastic_quota_groups,
                [](const kube::GroupVersion& gv) { return gv.group == "scheduling.x-k8s.io"; });
  CHECK_FALSE(informers.ApplyQuotaGroups(without));
  CHECK(informers.QuotaGroups().size() == 2);
  CHECK(sink.Objects("elasticquotas").count("ns/eq") == 1);
  CHECK(informers.ApplyQuotaGroups(apis) == false);  // back: the count starts again
  CHECK_FALSE(informers.ApplyQuotaGroups(without));
  CHECK(informers.ApplyQuotaGroups(without));
  CHECK(informers.QuotaGroups().size() == 1);
  CHECK(sink.Objects("elasticquotas").empty());
  CHECK(informers.Report(Clock::now()).resources.size() == 5);
  informers.Stop();
}

TEST_CASE("OutOfSyncLog: beyond the bound, every 30 s while it lasts, and back", "[live][sync]") {
  std::vector<SyncNotice> notices;
  OutOfSyncLog log(30s, [&](const SyncNotice& n) { notices.push_back(n); });
  const Clock::time_point t0 = Clock::time_point() + 1h;
  auto report = [&](Clock::duration at, bool in_sync, Clock::duration since) {
    CacheSyncReport r;
    r.now = t0 + at;
    r.max_out_of_sync = 5s;
    r.resources.push_back({"pods", true, in_sync, t0 + since, in_sync ? "" : "watch broken"});
    r.resources.push_back({"nodes", true, true, t0, ""});
    return r;
  };
  log.Observe(report(1s, false, 0s));  // within the bound: nothing
  CHECK(notices.empty());
  log.Observe(report(6s, false, 0s));
  REQUIRE(notices.size() == 1);
  CHECK_FALSE(notices[0].back_in_sync);
  CHECK(notices[0].resource == "pods");
  CHECK(notices[0].seconds == Approx(6));
  CHECK(notices[0].cause == "watch broken");
  log.Observe(report(20s, false, 0s));
  CHECK(notices.size() == 1);  // not again before 30 s
  log.Observe(report(37s, false, 0s));
  REQUIRE(notices.size() == 2);
  CHECK(notices[1].seconds == Approx(37));
  log.Observe(report(40s, true, 39s));  // in sync since 39 s
  REQUIRE(notices.size() == 3);
  CHECK(notices[2].back_in_sync);
  CHECK(notices[2].seconds == Approx(39));
  log.Observe(report(41s, true, 39s));
  CHECK(notices.size() == 3);
}

}  // namespace
}  // namespace live_informers_test
}  // namespace capext
