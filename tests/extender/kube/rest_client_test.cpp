// RestClient against the API-server double: plain calls, errors, chunked bodies, TLS (CA
// pinning, host name, client certificates), watch streaming and cancellation, token rotation.
#include "extender/kube/rest_client.h"

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "extender/kube/api_envelopes.h"
#include "tests/support/apiserver_double_process.h"

namespace capext::kube {
namespace rest_client_test {
namespace {

using testing::ApiServerDouble;
using testing::Eventually;
using testing::TempDir;
using Clock = std::chrono::steady_clock;

std::unique_ptr<RestClient> MakeClient(const KubeConfig& config) {
  std::unique_ptr<RestClient> client;
  Status status = RestClient::Create(config, {}, &client);
  INFO(status.message());
  REQUIRE(status.ok());
  return client;
}

std::string PodJson(const std::string& name) {
  return R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":")" + name +
         R"(","labels":{"app":"demo"}},"spec":{"containers":[{"name":"c","image":"pause"}]}})";
}

TEST_CASE("GET and POST results and API errors come back as status and body", "[kube]") {
  ApiServerDouble server;
  REQUIRE(server.started());
  auto client = MakeClient(server.Config());

  RestResponse groups = client->Get("/apis");
  CHECK(groups.status == 200);
  CHECK(groups.error.empty());
  CHECK(groups.body.find("\"APIGroupList\"") != std::string::npos);

  RestResponse created = client->Post("/api/v1/namespaces/ns/pods", PodJson("p1"));
  CHECK(created.status == 201);
  RestResponse again = client->Post("/api/v1/namespaces/ns/pods", PodJson("p1"));
  CHECK(again.status == 409);
  ApiStatus status;
  REQUIRE(ParseApiStatus(again.body, &status));
  CHECK(status.reason == "AlreadyExists");

  RestResponse missing = client->Get("/api/v1/namespaces/ns/pods/nope");
  CHECK(missing.status == 404);
  CHECK(!missing.ok());

  RestResponse no_route = client->Get("/apis/nothing.example.com/v1");
  CHECK(no_route.status == 404);
  CHECK(no_route.body == "404 page not found\n");

  KubeConfig wrong = server.Config();
  wrong.token = BearerTokenSource::Fixed("not-a-valid-token");
  RestResponse unauthorized = MakeClient(wrong)->Get("/api/v1/pods");
  CHECK(unauthorized.status == 401);
  REQUIRE(ParseApiStatus(unauthorized.body, &status));
  CHECK(status.message == "Unauthorized");
}

TEST_CASE("large bodies arrive chunked and are reassembled", "[kube]") {
  ApiServerDouble server;
  REQUIRE(server.started());
  auto client = MakeClient(server.Config());
  server.Control("churn", R"({"resource":"pods","namespace":"ns","prefix":"p-","count":60})");
  RestResponse list = client->Get("/api/v1/pods");
  REQUIRE(list.status == 200);
  CHECK(list.body.size() > 2048);  // the double sends these with Transfer-Encoding: chunked
  ListPage page;
  REQUIRE(ParseListPage(list.body, &page).ok());
  CHECK(page.items.size() == 60);
}

TEST_CASE("no server gives a transport error instead of a status", "[kube]") {
  KubeConfig config;
  config.server = "http://127.0.0.1:1";  // nothing listens on port 1
  RestClientOptions options;
  options.request_timeout = std::chrono::seconds(5);
  std::unique_ptr<RestClient> client;
  REQUIRE(RestClient::Create(config, options, &client).ok());
  RestResponse response = client->Get("/api");
  CHECK(response.status == 0);
  CHECK(!response.error.empty());
}

TEST_CASE("a stop request aborts a slow call promptly", "[kube]") {
  ApiServerDouble server;
  REQUIRE(server.started());
  auto client = MakeClient(server.Config());
  server.Control("delay", R"({"ms":10000,"count":1,"path_prefix":"/api/v1/nodes"})");
  std::stop_source stop;
  std::thread stopper([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    stop.request_stop();
  });
  auto started = Clock::now();
  RestResponse response = client->Get("/api/v1/nodes", stop.get_token());
  stopper.join();
  CHECK(response.status == 0);
  CHECK(response.error == "cancelled");
  CHECK(Clock::now() - started < std::chrono::seconds(5));
}

// One asynchronous call with CallOptions; the future holds its response.
std::future<RestResponse> SendWith(RestClient& client, const std::string& pod,
                                   CallOptions options) {
  auto promise = std::make_shared<std::promise<RestResponse>>();
  auto future = promise->get_future();
  client.SendAsync(
      "POST", "/api/v1/namespaces/ns/pods", PodJson(pod), "application/json",
      [promise](RestResponse r) { promise->set_value(std::move(r)); }, std::move(options));
  return future;
}

TEST_CASE("send_by: a call still waiting for a connection at its deadline is never sent",
          "[kube]") {
  ApiServerDouble server;
  REQUIRE(server.started());
  RestClientOptions one_connection;
  one_connection.max_connections = 1;
  std::unique_ptr<RestClient> client;
  REQUIRE(RestClient::Create(server.Config(), one_connection, &client).ok());
  // The first create holds the only connection for 800 ms.
  REQUIRE_FALSE(
      server.Control("delay", R"({"ms":800,"count":1,"path_prefix":"/api/v1/namespaces/ns/pods"})")
          .empty());
  std::atomic<int> written_slow{0}, written_late{0}, written_patient{0};
  CallOptions slow;
  slow.on_written = [&] { ++written_slow; };
  auto slow_call = SendWith(*client, "p-slow", slow);
  CallOptions late;
  late.send_by = Clock::now() + std::chrono::milliseconds(100);
  late.on_written = [&] { ++written_late; };
  auto late_call = SendWith(*client, "p-late", late);
  CallOptions patient;
  patient.send_by = Clock::now() + std::chrono::seconds(30);
  patient.on_written = [&] { ++written_patient; };
  auto patient_call = SendWith(*client, "p-patient", patient);

  RestResponse late_response = late_call.get();
  CHECK(late_response.status == 0);
  CHECK(late_response.send_deadline_passed);
  CHECK_FALSE(late_response.sent);
  CHECK(late_response.error.find("not sent: its deadline passed") != std::string::npos);
  // Answered at its deadline, while the first call still held the connection.
  CHECK(slow_call.wait_for(std::chrono::seconds(0)) != std::future_status::ready);

  RestResponse slow_response = slow_call.get();
  CHECK(slow_response.status == 201);
  CHECK(slow_response.sent);
  RestResponse patient_response = patient_call.get();
  CHECK(patient_response.status == 201);
  CHECK(patient_response.sent);
  CHECK_FALSE(patient_response.send_deadline_passed);
  CHECK(patient_response.queued > slow_response.queued);  // it waited for the connection
  CHECK(written_slow.load() == 1);
  CHECK(written_late.load() == 0);
  CHECK(written_patient.load() == 1);
  const auto pods = server.Objects("pods");
  CHECK(pods.count("ns/p-slow") == 1);
  CHECK(pods.count("ns/p-patient") == 1);
  CHECK(pods.count("ns/p-late") == 0);
  CHECK(server.CountRequests("POST", "/api/v1/namespaces/ns/pods") == 2);
}

TEST_CASE("send_by: a call already past it is not sent even on an idle connection", "[kube]") {
  ApiServerDouble server;
  REQUIRE(server.started());
  auto client = MakeClient(server.Config());
  CallOptions past;
  past.send_by = Clock::now() - std::chrono::milliseconds(1);
  RestResponse response = SendWith(*client, "p-past", past).get();
  CHECK(response.send_deadline_passed);
  CHECK_FALSE(response.sent);
  // The connection is fine for the next call.
  RestResponse next = SendWith(*client, "p-next", {}).get();
  CHECK(next.status == 201);
  CHECK(server.CountRequests("POST", "/api/v1/namespaces/ns/pods") == 1);
}

TEST_CASE("a call written and never answered says it was sent", "[kube]") {
  ApiServerDouble server;
  REQUIRE(server.started());
  auto client = MakeClient(server.Config());
  REQUIRE_FALSE(
      server.Control("delay", R"({"ms":1500,"count":1,"path_prefix":"/api/v1/namespaces/ns/pods"})")
          .empty());
  CallOptions options;
  options.timeout = std::chrono::milliseconds(200);
  options.send_by = Clock::now() + std::chrono::seconds(30);
  RestResponse response = SendWith(*client, "p-slow", options).get();
  CHECK(response.status == 0);
  CHECK(response.sent);  // the server may act on it: it does, 1.3 s later
  CHECK_FALSE(response.send_deadline_passed);
  CHECK(response.error.find("timed out after 200 ms") != std::string::npos);
  CHECK(Eventually([&] { return server.Objects("pods").count("ns/p-slow") == 1; }));
}

TEST_CASE("TLS: the server is verified against the configured CA only", "[kube]") {
  TempDir dir;
  auto certs = testing::MakeTestCertificates(dir);
  INFO(certs.error);
  REQUIRE(certs.error.empty());
  ApiServerDouble::Options options;
  options.tls_cert = certs.server_cert;
  options.tls_key = certs.server_key;
  options.ca_for_clients = certs.ca_cert;
  ApiServerDouble server(options);
  INFO(server.error());
  REQUIRE(server.started());

  RestResponse pinned = MakeClient(server.Config())->Get("/api");
  CHECK(pinned.status == 200);
  CHECK(pinned.error.empty());

  KubeConfig system_roots = server.Config();
  system_roots.ca_pem.clear();  // the test CA is not a system root: must fail, never fall back
  RestResponse rejected = MakeClient(system_roots)->Get("/api");
  CHECK(rejected.status == 0);
  CHECK(!rejected.error.empty());

  TempDir other_dir;
  auto other = testing::MakeTestCertificates(other_dir);
  REQUIRE(other.error.empty());
  KubeConfig wrong_ca = server.Config();
  wrong_ca.ca_pem = testing::ReadFile(other.ca_cert);
  CHECK(MakeClient(wrong_ca)->Get("/api").status == 0);

  KubeConfig wrong_name = server.Config();  // certificate is for IP 127.0.0.1, not "localhost"
  wrong_name.server = "https://localhost:" + std::to_string(server.port());
  CHECK(MakeClient(wrong_name)->Get("/api").status == 0);

  KubeConfig insecure = system_roots;
  insecure.insecure_skip_tls_verify = true;
  CHECK(MakeClient(insecure)->Get("/api").status == 200);

  KubeConfig garbage = server.Config();
  garbage.ca_pem = "not a certificate";
  std::unique_ptr<RestClient> client;
  Status status = RestClient::Create(garbage, {}, &client);
  REQUIRE(!status.ok());
  CHECK(status.message().find("certificate") != std::string::npos);
}

// kill -9 of the API server closes its sockets under the client's idle keep-alive connections:
// reused, one fails before any response byte, over TLS as a truncated stream (no close_notify),
// over plain HTTP as an end of file. Either is a stale connection: the request goes again on a
// new one, once, and succeeds against the restarted server.
TEST_CASE("a request on a connection the killed server left is sent again", "[kube]") {
  const bool tls = GENERATE(true, false);
  INFO((tls ? "https" : "http"));
  TempDir dir;
  ApiServerDouble::Options options;
  if (tls) {
    auto certs = testing::MakeTestCertificates(dir);
    REQUIRE(certs.error.empty());
    options.tls_cert = certs.server_cert;
    options.tls_key = certs.server_key;
    options.ca_for_clients = certs.ca_cert;
  }
  ApiServerDouble server(options);
  REQUIRE(server.started());
  auto client = MakeClient(server.Config());

  REQUIRE(client->Get("/api").status == 200);  // its connection stays open, idle in the pool
  REQUIRE(client->Stats().stale_retries == 0);
  server.Crash();
  REQUIRE(server.Revive());

  RestResponse after = client->Get("/api");
  INFO(after.error);
  CHECK(after.status == 200);
  CHECK(client->Stats().stale_retries == 1);
  CHECK(client->Get("/api").status == 200);  // the new connection is kept alive in turn
  CHECK(client->Stats().stale_retries == 1);
}

TEST_CASE("TLS: a client certificate authenticates", "[kube]") {
  TempDir dir;
  auto certs = testing::MakeTestCertificates(dir);
  REQUIRE(certs.error.empty());
  ApiServerDouble::Options options;
  options.tls_cert = certs.server_cert;
  options.tls_key = certs.server_key;
  options.client_ca = certs.ca_cert;
  options.ca_for_clients = certs.ca_cert;
  ApiServerDouble server(options);
  REQUIRE(server.started());

  KubeConfig anonymous = server.Config();
  anonymous.token.reset();
  CHECK(MakeClient(anonymous)->Get("/api/v1/pods").status == 401);

  KubeConfig with_cert = anonymous;
  with_cert.client_cert_pem = testing::ReadFile(certs.client_cert);
  with_cert.client_key_pem = testing::ReadFile(certs.client_key);
  CHECK(MakeClient(with_cert)->Get("/api/v1/pods").status == 200);

  KubeConfig mismatched = with_cert;
  mismatched.client_key_pem = testing::ReadFile(certs.server_key);
  std::unique_ptr<RestClient> client;
  CHECK(!RestClient::Create(mismatched, {}, &client).ok());
}

TEST_CASE("Watch streams one line per event as it happens then ends normally", "[kube]") {
  ApiServerDouble server;
  REQUIRE(server.started());
  auto client = MakeClient(server.Config());
  long rv = server.ResourceVersion();
  std::atomic<int> lines{0};
  std::vector<std::string> types;
  std::mutex mutex;
  WatchResult result;
  std::thread watcher([&] {
    result = client->Watch(
        "/api/v1/pods?watch=1&allowWatchBookmarks=true&timeoutSeconds=2"
        "&resourceVersion=" +
            std::to_string(rv),
        std::chrono::seconds(10),
        [&](std::string_view line) {
          WatchEventEnvelope event;
          if (ParseWatchEvent(line, &event).ok()) {
            std::lock_guard<std::mutex> lock(mutex);
            types.push_back(event.type);
          }
          ++lines;
          return true;
        },
        {});
  });
  // Each event is delivered while the stream stays open (not at its end).
  for (int i = 0; i < 3; ++i) {
    REQUIRE(client->Post("/api/v1/namespaces/ns/pods", PodJson("w" + std::to_string(i))).status ==
            201);
    CHECK(Eventually([&] { return lines.load() == i + 1; }, std::chrono::seconds(1)));
  }
  watcher.join();
  CHECK(result.status == 200);
  CHECK(result.completed);
  CHECK(result.error.empty());
  CHECK(result.lines == 4);
  CHECK(types == std::vector<std::string>{"ADDED", "ADDED", "ADDED", "BOOKMARK"});
}

TEST_CASE("Watch: a dropped stream is an error and a partial event is never delivered", "[kube]") {
  ApiServerDouble server;
  REQUIRE(server.started());
  auto client = MakeClient(server.Config());
  long rv = server.ResourceVersion();
  std::atomic<int> parsed{0};
  std::atomic<int> broken{0};
  WatchResult result;
  std::thread watcher([&] {
    result = client->Watch(
        "/api/v1/pods?watch=1&timeoutSeconds=30&resourceVersion=" + std::to_string(rv),
        std::chrono::seconds(40),
        [&](std::string_view line) {
          WatchEventEnvelope event;
          (ParseWatchEvent(line, &event).ok() ? parsed : broken)++;
          return true;
        },
        {});
  });
  REQUIRE(Eventually(
      [&] { return server.ControlGet("state").find("\"watchers\":1") != std::string::npos; }));
  server.Control("drop_watches", R"({"after_events":3,"partial":true})");
  server.Control("churn", R"({"resource":"pods","namespace":"ns","prefix":"d-","count":10})");
  watcher.join();
  CHECK(result.status == 200);
  CHECK(!result.completed);
  CHECK(!result.error.empty());
  CHECK(parsed == 3);
  CHECK(broken == 0);
}

TEST_CASE("Watch: stop ends an idle stream promptly - the callback can end it too", "[kube]") {
  ApiServerDouble server;
  REQUIRE(server.started());
  auto client = MakeClient(server.Config());
  std::stop_source stop;
  WatchResult result;
  auto started = Clock::now();
  std::thread watcher([&] {
    result = client->Watch(
        "/api/v1/pods?watch=1&timeoutSeconds=300", std::chrono::seconds(330),
        [](std::string_view) { return true; }, stop.get_token());
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  stop.request_stop();
  watcher.join();
  CHECK(result.stopped);
  CHECK(result.error.empty());
  CHECK(Clock::now() - started < std::chrono::seconds(5));

  server.Control("churn", R"({"resource":"pods","namespace":"ns","prefix":"s-","count":5})");
  int seen = 0;
  WatchResult ended =
      client->Watch("/api/v1/pods?watch=1&timeoutSeconds=300", std::chrono::seconds(330),
                    [&](std::string_view) { return ++seen < 2; }, {});
  CHECK(ended.stopped);
  CHECK(seen == 2);
}

TEST_CASE("Watch: HTTP errors come back with status and body", "[kube]") {
  ApiServerDouble server;
  REQUIRE(server.started());
  KubeConfig wrong = server.Config();
  wrong.token = BearerTokenSource::Fixed("bad");
  WatchResult result = MakeClient(wrong)->Watch("/api/v1/pods?watch=1", std::chrono::seconds(5),
                                                [](std::string_view) { return true; }, {});
  CHECK(result.status == 401);
  CHECK(result.body.find("Unauthorized") != std::string::npos);
}

TEST_CASE("a token file rotated on disk is used after a 401", "[kube]") {
  ApiServerDouble server;
  REQUIRE(server.started());
  TempDir dir;
  dir.Write("token", "test-token\n");
  KubeConfig config = server.Config();
  // A long recheck interval: only the 401 can make the client look at the file again.
  REQUIRE(
      BearerTokenSource::FromFile(dir.File("token"), std::chrono::hours(1), &config.token).ok());
  auto client = MakeClient(config);
  CHECK(client->Get("/api/v1/pods").status == 200);

  server.Control("token", R"({"token":"rotated-token"})");
  CHECK(client->Get("/api/v1/pods").status == 401);  // the file still has the old token
  dir.Write("token", "rotated-token\n");
  CHECK(client->Get("/api/v1/pods").status == 200);  // 401 -> re-read -> one retry
  CHECK(client->Post("/api/v1/namespaces/ns/pods", PodJson("after-rotation")).status == 201);
}

}  // namespace
}  // namespace rest_client_test
}  // namespace capext::kube
