// The API-server double as bench_podcost_bench runs it (--no-request-log, --tcp-nodelay, bearer
// token) and its bulk control endpoint /_double/create_many: items are created as POST on their
// collection would create them (uids, defaults, one ADDED event each, in order, visible to a
// watch from an earlier resourceVersion), invalid items get the API server's errors, and the
// benchmark's HTTP client reads chunked answers (bodies over 2 KB) and watch streams.
#include "bench/micro/podcost_apiserver_double.h"

#include <rapidjson/document.h>

#include <catch2/catch.hpp>

#include "bench/micro/podcost_cluster_objects.h"
#include "tests/support/temp_dir.h"
#include "tests/support/test_paths.h"

namespace capext::bench {
namespace podcost_apiserver_double_test {
namespace {

const std::string kScript = capext::test::SourcePath("tests/apiserver_double/apiserver_double.py");
const std::string kFixtures = capext::test::SourcePath("tests/fixtures/kube-scheduler");

std::string PodItem(const ClusterObjects& objects, const std::string& name, const std::string& ns) {
  return objects.Pod({name, ns, "", "", "", R"({"phase":"Pending","qosClass":"Guaranteed"})"});
}

TEST_CASE("create_many creates like POST, in order, visible to watches", "[podcost][double]") {
  capext::testing::TempDir dir;
  ApiServerDouble api;
  REQUIRE(api.Start(kScript, dir.path()).ok());
  ClusterObjects objects;
  REQUIRE(objects.Load(kFixtures).ok());
  std::string state;
  REQUIRE(api.Control("state", "", &state) == 200);
  rapidjson::Document doc;
  doc.Parse(state.c_str());
  const int64_t rv_before = doc["resourceVersion"].GetInt64();

  REQUIRE(
      api.CreateMany("pods", {PodItem(objects, "a-1", "team-0"), PodItem(objects, "a-2", "team-1")})
          .ok());
  HttpConnection client;
  REQUIRE(client.Connect(api.port()));
  // A single pod is over 2 KB: the double answers chunked, as Go's net/http does.
  REQUIRE(client.RoundTrip(HttpConnection::GoRequest("GET", "/api/v1/namespaces/team-1/pods/a-2",
                                                     api.port(), "",
                                                     ApiServerDouble::AuthHeader())) == 200);
  doc.Parse(client.body().c_str());
  REQUIRE_FALSE(doc.HasParseError());
  CHECK(std::string(doc["metadata"]["name"].GetString()) == "a-2");
  CHECK(std::string(doc["metadata"]["uid"].GetString()).size() == 36);
  CHECK(std::string(doc["spec"]["schedulerName"].GetString()) == "default-scheduler");
  CHECK(doc["spec"]["priority"].GetInt() == 100);  // from the capture, kept

  // A watch from before the bulk create replays both ADDED events, then ends at timeoutSeconds.
  REQUIRE(
      client.RoundTrip(HttpConnection::GoRequest(
          "GET",
          "/api/v1/pods?watch=true&timeoutSeconds=1&resourceVersion=" + std::to_string(rv_before),
          api.port(), "", ApiServerDouble::AuthHeader())) == 200);
  const std::string events = client.body();
  const std::size_t first = events.find(R"({"type":"ADDED","object":{"kind":"Pod")");
  REQUIRE(first != std::string::npos);
  CHECK(events.find("\"a-1\"") < events.find("\"a-2\""));
  CHECK(events.find(R"({"type":"ADDED")", first + 1) != std::string::npos);

  // The request log is off: nothing kept.
  std::string requests;
  REQUIRE(api.Control("requests", "", &requests) == 200);
  CHECK(requests.find(R"("requests":[])") != std::string::npos);
  api.Stop();
}

TEST_CASE("create_many answers the API server's errors for bad items", "[podcost][double]") {
  capext::testing::TempDir dir;
  ApiServerDouble api;
  REQUIRE(api.Start(kScript, dir.path()).ok());
  std::string answer;
  CHECK(api.Control("create_many", R"({"resource":"pods","items":[{"metadata":{"name":"x"}}]})",
                    &answer) == 400);
  CHECK(answer.find("metadata.namespace") != std::string::npos);
  CHECK(api.Control(
            "create_many",
            R"({"resource":"pods","items":[{"metadata":{"name":"Bad_Name","namespace":"n"}}]})",
            &answer) == 422);
  CHECK(api.Control("create_many", R"({"resource":"pods","items":{}})", &answer) == 400);
  // Cluster-scoped resources need no namespace; a second create of the same name is 409.
  const std::string node = R"({"metadata":{"name":"n1"}})";
  CHECK(api.Control("create_many", R"({"resource":"nodes","items":[)" + node + "]}", &answer) ==
        201);
  CHECK(answer.find(R"("created":1)") != std::string::npos);
  CHECK(api.Control("create_many", R"({"resource":"nodes","items":[)" + node + "]}", &answer) ==
        409);
  api.Stop();
}

}  // namespace
}  // namespace podcost_apiserver_double_test
}  // namespace capext::bench
