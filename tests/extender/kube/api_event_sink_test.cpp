// ApiEventSink against the API-server double: the events.k8s.io/v1 Event it creates (every field
// the apiserver validates), the series patch, 404 for a vanished Event, 422 for a refused one,
// and the MicroTime format.
#include "extender/kube/api_event_sink.h"

#include <rapidjson/document.h>

#include <catch2/catch.hpp>
#include <string>

#include "tests/support/apiserver_double_process.h"

namespace capext::kube {
namespace api_event_sink_test {
namespace {

using testing::ApiServerDouble;

constexpr int64_t kT0us = 1'767'225'600'123'456;  // 2026-01-01T00:00:00.123456Z

EventObject BigEvent() {
  EventObject e;
  e.ns = "eq1";
  e.name = "big.18a2b3c4d5e6f708";
  e.pod_name = "big";
  e.pod_uid = "u-big";
  e.type = "Warning";
  e.reason = "QuotaExceeded";
  e.action = "QuotaCheck";
  e.note =
      "pod eq1/big rejected: ElasticQuota eq1/eq1 would exceed max: cpu used 8 + request 5 "
      "> max 10";
  e.reporting_controller = "capacity-extender";
  e.reporting_instance = "capacity-extender-host-1";
  e.event_time_us = kT0us;
  return e;
}

// The double and a sink writing to it.
struct Double {
  Double() {
    REQUIRE(server.started());
    REQUIRE(RestClient::Create(server.Config(), {}, &client).ok());
    sink = std::make_unique<ApiEventSink>(client.get());
  }
  ApiServerDouble server;
  std::unique_ptr<RestClient> client;
  std::unique_ptr<ApiEventSink> sink;
};

rapidjson::Document Stored(ApiServerDouble& server, const std::string& name) {
  rapidjson::Document doc;
  RestResponse r =
      server.ControlClient()->Get("/apis/events.k8s.io/v1/namespaces/eq1/events/" + name);
  doc.Parse(r.body.c_str());
  REQUIRE(r.status == 200);
  return doc;
}

TEST_CASE("ApiEventSink: MicroTime is RFC 3339 UTC with microseconds", "[kube][events]") {
  CHECK(ApiEventSink::MicroTime(kT0us) == "2026-01-01T00:00:00.123456Z");
  CHECK(ApiEventSink::MicroTime(0) == "1970-01-01T00:00:00.000000Z");
  CHECK(ApiEventSink::MicroTime(1'000'001) == "1970-01-01T00:00:01.000001Z");
}

TEST_CASE("ApiEventSink: create, then series patches, as the apiserver accepts them",
          "[kube][events]") {
  Double d;
  ApiServerDouble& server = d.server;
  ApiEventSink& sink = *d.sink;
  const EventObject e = BigEvent();
  EventWriteResult created = sink.Create(e);
  INFO(created.error);
  REQUIRE(created.code == EventWriteCode::kOk);
  CHECK(
      server.LastRequestBody("/apis/events.k8s.io/v1/namespaces/eq1/events") ==
      R"({"apiVersion":"events.k8s.io/v1","kind":"Event","metadata":{"name":"big.18a2b3c4d5e6f708",)"
      R"("namespace":"eq1"},"eventTime":"2026-01-01T00:00:00.123456Z","reportingController":)"
      R"("capacity-extender","reportingInstance":"capacity-extender-host-1","action":"QuotaCheck",)"
      R"("reason":"QuotaExceeded","regarding":{"kind":"Pod","namespace":"eq1","name":"big",)"
      R"("uid":"u-big","apiVersion":"v1"},"note":"pod eq1/big rejected: ElasticQuota eq1/eq1 )"
      R"(would exceed max: cpu used 8 + request 5 > max 10","type":"Warning"})");
  rapidjson::Document stored = Stored(server, e.name);
  CHECK(std::string(stored["reason"].GetString()) == "QuotaExceeded");
  CHECK_FALSE(stored.HasMember("series"));

  EventWriteResult patched = sink.PatchSeries("eq1", e.name, 2, kT0us + 30'000'000);
  INFO(patched.error);
  REQUIRE(patched.code == EventWriteCode::kOk);
  std::string content_type;
  CHECK(server.LastRequestBody("/events/" + e.name, &content_type) ==
        R"({"series":{"count":2,"lastObservedTime":"2026-01-01T00:00:30.123456Z"}})");
  CHECK(content_type == "application/strategic-merge-patch+json");
  REQUIRE(sink.PatchSeries("eq1", e.name, 3, kT0us + 60'000'000).code == EventWriteCode::kOk);
  stored = Stored(server, e.name);
  CHECK(stored["series"]["count"].GetInt() == 3);
  CHECK(std::string(stored["series"]["lastObservedTime"].GetString()) ==
        "2026-01-01T00:01:00.123456Z");
  CHECK(std::string(stored["note"].GetString()) == e.note);  // untouched by the patch
  CHECK(server.Objects("events").size() == 1);

  // Re-created after expiry: the series travels in the create.
  CHECK(server.Control("expire_events") != "");
  EventWriteResult gone = sink.PatchSeries("eq1", e.name, 4, kT0us + 90'000'000);
  CHECK(gone.code == EventWriteCode::kNotFound);
  EventObject again = e;
  again.name = "big.18a2b3c4d5e6f709";
  again.series_count = 4;
  again.series_last_observed_us = kT0us + 90'000'000;
  REQUIRE(sink.Create(again).code == EventWriteCode::kOk);
  stored = Stored(server, again.name);
  CHECK(stored["series"]["count"].GetInt() == 4);
}

TEST_CASE("ApiEventSink: a refused Event is kFailed with the apiserver's reason",
          "[kube][events]") {
  Double d;
  ApiEventSink& sink = *d.sink;
  EventObject bad = BigEvent();
  bad.reporting_controller = "";
  EventWriteResult r = sink.Create(bad);
  CHECK(r.code == EventWriteCode::kFailed);
  CHECK(r.error.find("HTTP 422 Invalid") != std::string::npos);
  CHECK(r.error.find("reportingController: Required value") != std::string::npos);
  // The same name twice: 409 AlreadyExists.
  REQUIRE(sink.Create(BigEvent()).code == EventWriteCode::kOk);
  r = sink.Create(BigEvent());
  CHECK(r.code == EventWriteCode::kFailed);
  CHECK(r.error.find("HTTP 409 AlreadyExists") != std::string::npos);
  // A series count below 2 is refused too (the recorder never sends one).
  r = sink.PatchSeries("eq1", BigEvent().name, 1, kT0us);
  CHECK(r.code == EventWriteCode::kFailed);
  CHECK(r.error.find("series.count") != std::string::npos);
}

}  // namespace
}  // namespace api_event_sink_test
}  // namespace capext::kube
