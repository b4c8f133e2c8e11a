// Informer against the API-server double: initial sync, ordered events, resumption after dropped
// streams, relists on 410, restarts, bookmarks, resyncs, backoff, stop.
#include "extender/kube/informer.h"

#include <rapidjson/document.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "extender/kube/api_discovery.h"
#include "extender/kube/informer_set.h"
#include "tests/support/apiserver_double_process.h"
#include "tests/support/recording_sink.h"

namespace capext::kube {
namespace informer_test {
namespace {

using testing::ApiServerDouble;
using testing::Eventually;
using testing::RecordingSink;
using Clock = std::chrono::steady_clock;

InformerOptions PodOptions() {
  InformerOptions options;
  options.resource = "pods";
  options.path = "/api/v1/pods";
  options.backoff_initial = std::chrono::milliseconds(20);
  options.backoff_max = std::chrono::milliseconds(200);
  options.seed = 42;
  return options;
}

std::unique_ptr<RestClient> MakeClient(ApiServerDouble& server) {
  std::unique_ptr<RestClient> client;
  REQUIRE(RestClient::Create(server.Config(), {}, &client).ok());
  return client;
}

bool StrictlyIncreasing(const std::vector<long>& values) {
  for (size_t i = 1; i < values.size(); ++i) {
    if (values[i] <= values[i - 1]) return false;
  }
  return true;
}

std::vector<long> Range(long first, long last) {
  std::vector<long> out;
  for (long v = first; v <= last; ++v)
    out.push_back(v);
  return out;
}

std::string Churn(const std::string& ns, const std::string& prefix, int count,
                  const std::string& action = "create") {
  return R"({"resource":"pods","namespace":")" + ns + R"(","prefix":")" + prefix + R"(","count":)" +
         std::to_string(count) + R"(,"action":")" + action + R"("})";
}

TEST_CASE("informer: paged initial sync then 1000 events in order", "[kube]") {
  ApiServerDouble server;
  REQUIRE(server.started());
  server.Control("churn", Churn("pre", "p-", 50));
  auto client = MakeClient(server);
  RecordingSink sink;
  InformerOptions options = PodOptions();
  options.page_size = 7;  // 8 pages
  Informer informer(client.get(), options, &sink);
  informer.Start();
  REQUIRE(Eventually([&] { return informer.HasSynced(); }));
  CHECK(sink.Objects("pods") == server.Objects("pods"));
  CHECK(sink.Replaces("pods") == 1);
  CHECK(server.CountRequests("GET", "/api/v1/pods") >= 8);

  long before = server.ResourceVersion();
  server.Control("churn", Churn("load", "e-", 1000));
  REQUIRE(Eventually([&] { return sink.Applied("pods").size() >= 1000; }));
  CHECK(sink.Applied("pods") == Range(before + 1, before + 1000));
  CHECK(sink.Objects("pods") == server.Objects("pods"));
  CHECK(sink.ObjectsWithoutKind() == 0);
  CHECK(informer.Stats().events == 1000);
  CHECK(informer.Stats().resource_version == std::to_string(before + 1000));
  informer.Stop();
}

TEST_CASE("informer: a protobuf watch answered in JSON is followed in JSON", "[kube]") {
  // The double speaks JSON only, as an API server or proxy without protobuf would
  // (docs/architecture.md#watching-in-protobuf); RecordingSink requires every object in JSON.
  ApiServerDouble server;
  REQUIRE(server.started());
  server.Control("churn", Churn("pre", "p-", 5));
  auto client = MakeClient(server);
  RecordingSink sink;
  InformerOptions options = PodOptions();
  options.protobuf_watch = true;
  Informer informer(client.get(), options, &sink);
  informer.Start();
  REQUIRE(Eventually([&] { return informer.HasSynced(); }));
  const long before = server.ResourceVersion();
  server.Control("churn", Churn("load", "e-", 20));
  REQUIRE(Eventually([&] { return sink.Applied("pods").size() >= 20; }));
  CHECK(sink.Applied("pods") == Range(before + 1, before + 20));
  CHECK(sink.Objects("pods") == server.Objects("pods"));
  CHECK(informer.Stats().events == 20);
  CHECK(informer.Stats().protobuf_events == 0);
  informer.Stop();
}

TEST_CASE("informer: a stream dropped mid-event resumes without loss or duplication", "[kube]") {
  ApiServerDouble server;
  REQUIRE(server.started());
  server.Control("churn", Churn("ns", "base-", 20));
  auto client = MakeClient(server);
  RecordingSink sink;
  Informer informer(client.get(), PodOptions(), &sink);
  informer.Start();
  REQUIRE(Eventually([&] { return informer.HasSynced(); }));
  // Synced means listed; the watch opens just after. drop_watches only reaches open watches.
  REQUIRE(Eventually(
      [&] { return server.ControlGet("state").find("\"watchers\":1") != std::string::npos; }));

  long before = server.ResourceVersion();
  // Every open watch sends 137 more events, then half of the next one, then the connection
  // breaks; the informer must re-watch from the last resourceVersion it saw.
  server.Control("drop_watches", R"({"after_events":137,"partial":true})");
  server.Control("churn", Churn("ns", "d-", 500));
  server.Control("churn", Churn("ns", "d-", 500, "relabel"));
  server.Control("churn", Churn("ns", "base-", 20, "delete"));  // MODIFIED + DELETED each
  long after = server.ResourceVersion();
  REQUIRE(Eventually([&] { return sink.Applied("pods").size() >= size_t(after - before); }));
  CHECK(sink.Applied("pods") == Range(before + 1, after));
  CHECK(sink.Objects("pods") == server.Objects("pods"));
  CHECK(sink.Replaces("pods") == 1);  // resumed, never relisted
  CHECK(informer.Stats().watches >= 2);

  // An idle watch dropped outright is resumed as well.
  server.Control("drop_watches", R"({"after_events":0})");
  server.Control("churn", Churn("ns", "late-", 3));
  REQUIRE(Eventually([&] { return sink.Objects("pods") == server.Objects("pods"); }));
  CHECK(StrictlyIncreasing(sink.Applied("pods")));
  informer.Stop();
}

TEST_CASE("informer: a watch from a compacted resourceVersion gets 410 and relists", "[kube]") {
  ApiServerDouble server;
  REQUIRE(server.started());
  server.Control("churn", Churn("ns", "a-", 5));
  auto client = MakeClient(server);
  RecordingSink sink;
  Informer informer(client.get(), PodOptions(), &sink);
  informer.Start();
  REQUIRE(Eventually([&] { return informer.HasSynced(); }));

  // Hold the informer's next watch request in the double while objects change and history is
  // compacted: when it arrives its resourceVersion is too old (ERROR event, code 410).
  server.Control("delay", R"({"ms":1500,"count":1,"path_prefix":"/api/v1/pods","method":"GET"})");
  server.Control("drop_watches", R"({"after_events":0})");
  server.Control("churn", Churn("ns", "b-", 10));
  server.Control("churn", Churn("ns", "a-", 5, "delete"));
  server.Control("compact");
  REQUIRE(Eventually([&] { return informer.Stats().relists_expired >= 1; }));
  REQUIRE(Eventually([&] { return sink.Objects("pods") == server.Objects("pods"); }));
  CHECK(sink.Replaces("pods") >= 2);
  // Live again after the relist.
  server.Control("churn", Churn("ns", "c-", 4));
  CHECK(Eventually([&] { return sink.Objects("pods") == server.Objects("pods"); }));
  informer.Stop();
}

TEST_CASE("informer: an expired continue token restarts the list", "[kube]") {
  ApiServerDouble server;
  REQUIRE(server.started());
  server.Control("churn", Churn("ns", "a-", 20));
  auto client = MakeClient(server);
  RecordingSink sink;
  InformerOptions options = PodOptions();
  options.page_size = 5;
  // The first two pages are held 700 ms each; between them the history is compacted.
  server.Control("delay", R"({"ms":700,"count":2,"path_prefix":"/api/v1/pods","method":"GET"})");
  Informer informer(client.get(), options, &sink);
  informer.Start();
  REQUIRE(Eventually([&] { return server.CountRequests("GET", "/api/v1/pods") >= 1; }));
  server.Control("churn", Churn("ns", "z-", 3));
  server.Control("compact");
  REQUIRE(Eventually([&] { return informer.HasSynced(); }));
  CHECK(sink.Objects("pods") == server.Objects("pods"));
  CHECK(sink.Objects("pods").size() == 23);
  CHECK(sink.Replaces("pods") == 1);  // the torn list never reached the sink
  informer.Stop();
}

TEST_CASE("informer: an API server restart (old resourceVersions gone) converges", "[kube]") {
  ApiServerDouble server;
  REQUIRE(server.started());
  server.Control("churn", Churn("ns", "old-", 30));
  auto client = MakeClient(server);
  RecordingSink sink;
  Informer informer(client.get(), PodOptions(), &sink);
  informer.Start();
  REQUIRE(Eventually([&] { return informer.HasSynced(); }));

  server.Control("restart", R"({"bump":5})");
  server.Control("churn", Churn("ns", "old-", 30, "delete"));
  server.Control("churn", Churn("ns", "new-", 12));
  REQUIRE(Eventually([&] { return sink.Objects("pods") == server.Objects("pods"); }));
  CHECK(sink.Objects("pods").size() == 12);
  CHECK(informer.Stats().relists_expired >= 1);
  CHECK(sink.ObjectsWithoutKind() == 0);
  informer.Stop();
}

TEST_CASE("informer: watches time out and resume - bookmarks advance the resourceVersion",
          "[kube]") {
  ApiServerDouble server;
  REQUIRE(server.started());
  auto client = MakeClient(server);
  RecordingSink sink;
  InformerOptions options = PodOptions();
  options.watch_idle_timeout = std::chrono::milliseconds(1500);  // watches of 1 s
  Informer informer(client.get(), options, &sink);
  informer.Start();
  REQUIRE(Eventually([&] { return informer.HasSynced(); }));
  // A write to another resource moves the global resourceVersion; only a BOOKMARK can tell the
  // pod informer about it.
  REQUIRE(client->Post("/api/v1/nodes", R"({"metadata":{"name":"n1"}})").status == 201);
  std::string target = std::to_string(server.ResourceVersion());
  REQUIRE(Eventually([&] { return informer.Stats().resource_version == target; }));
  CHECK(informer.Stats().bookmarks >= 1);
  CHECK(Eventually([&] { return informer.Stats().watches >= 3; }));
  CHECK(sink.Replaces("pods") == 1);
  informer.Stop();
}

TEST_CASE("informer: the periodic resync relists", "[kube]") {
  ApiServerDouble server;
  REQUIRE(server.started());
  server.Control("churn", Churn("ns", "r-", 3));
  auto client = MakeClient(server);
  RecordingSink sink;
  InformerOptions options = PodOptions();
  options.resync_period = std::chrono::milliseconds(700);
  Informer informer(client.get(), options, &sink);
  informer.Start();
  REQUIRE(Eventually([&] { return informer.Stats().resyncs >= 2; }));
  CHECK(sink.Replaces("pods") >= 3);
  CHECK(sink.Objects("pods") == server.Objects("pods"));
  informer.Stop();
}

TEST_CASE("informer: errors back off and recover and never block Stop", "[kube]") {
  ApiServerDouble server;
  REQUIRE(server.started());
  auto client = MakeClient(server);
  RecordingSink sink;
  InformerOptions options = PodOptions();
  Informer informer(client.get(), options, &sink);
  informer.Start();
  REQUIRE(Eventually([&] { return informer.HasSynced(); }));

  server.Control("token", R"({"token":"someone-else"})");
  server.Control("drop_watches", R"({"after_events":0})");
  REQUIRE(Eventually([&] { return informer.Stats().errors >= 3; }));
  server.Control("token", R"({"token":"test-token"})");
  server.Control("churn", Churn("ns", "x-", 5));
  REQUIRE(Eventually([&] { return sink.Objects("pods") == server.Objects("pods"); }));

  // Stop while a watch with a 5-minute timeout is open: prompt.
  auto started = Clock::now();
  informer.Stop();
  CHECK(Clock::now() - started < std::chrono::seconds(3));

  // Stop during a long backoff: prompt too.
  InformerOptions slow = PodOptions();
  slow.backoff_initial = std::chrono::seconds(30);
  slow.backoff_max = std::chrono::seconds(30);
  server.Control("token", R"({"token":"someone-else"})");
  Informer failing(client.get(), slow, &sink);
  failing.Start();
  REQUIRE(Eventually([&] { return failing.Stats().errors >= 1; }));
  started = Clock::now();
  failing.Stop();
  CHECK(Clock::now() - started < std::chrono::seconds(3));
  CHECK(!failing.HasSynced());
}

TEST_CASE("LiveModeInformers: the fixed resources, then one per ElasticQuota group", "[kube]") {
  CHECK(LiveModeInformers(DiscoveredApis{}).size() == 4);  // no ElasticQuota group served
  DiscoveredApis both;
  both.elastic_quota_groups = {{"scheduling.x-k8s.io", "v1alpha1"},
                               {"scheduling.sigs.k8s.io", "v1alpha1"}};
  const auto options = LiveModeInformers(both);
  REQUIRE(options.size() == 6);
  CHECK(options[4].resource == "elasticquotas");
  CHECK(options[4].path == "/apis/scheduling.x-k8s.io/v1alpha1/elasticquotas");
  CHECK(options[5].resource == "elasticquotas.scheduling.sigs.k8s.io");
}

TEST_CASE("LiveModeInformers: protobuf is asked for pods and nodes only", "[kube]") {
  DiscoveredApis apis;
  apis.elastic_quota_groups = {{"scheduling.x-k8s.io", "v1alpha1"}};
  InformerOptions base;
  base.protobuf_watch = true;
  std::map<std::string, bool> protobuf;
  for (const auto& options : LiveModeInformers(apis, base))
    protobuf[options.resource] = options.protobuf_watch;
  for (const auto& options : DeviceInformers({"resource.k8s.io", "v1"}, base))
    protobuf[options.resource] = options.protobuf_watch;
  CHECK(protobuf == std::map<std::string, bool>{{"pods", true},
                                                {"nodes", true},
                                                {"priorityclasses", false},
                                                {"poddisruptionbudgets", false},
                                                {"elasticquotas", false},
                                                {"resourceclaims", false},
                                                {"resourceclaimtemplates", false},
                                                {"deviceclasses", false}});
  base.protobuf_watch = false;  // watchEncoding: json
  for (const auto& options : LiveModeInformers(apis, base))
    CHECK(!options.protobuf_watch);
}

}  // namespace
}  // namespace informer_test
}  // namespace capext::kube
