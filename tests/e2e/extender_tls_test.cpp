// End to end: HTTPS, mutual TLS and the ElasticQuota admission webhook of the real
// `capacity-extender serve` binary. Certificates: tests/support/test_certificates.h.
#include <rapidjson/document.h>

#include <chrono>
#include <string>

#include <catch2/catch.hpp>

#include "tests/support/extender_process.h"
#include "tests/support/free_port.h"
#include "tests/support/http_client.h"
#include "tests/support/test_certificates.h"

namespace extender_tls_test {
namespace {

using capext::test::ClientOptions;
using capext::test::ClientResponse;
using capext::test::ExtenderProcess;
using capext::test::Fetch;
using namespace std::chrono_literals;

const std::string kHost = "127.0.0.1";

using Certificates = capext::test::TestCertificates;
using capext::test::FreeLoopbackPort;
using capext::test::SharedTestCertificates;

const std::string kFilterBody =
    R"({"Pod":{"metadata":{"name":"tls-pod","namespace":"default","uid":"u-tls-pod"},)"
    R"("spec":{"containers":[{"name":"c","image":"nginx","resources":{"requests":{"cpu":"100m"}}}]}},)"
    R"("Nodes":null,"NodeNames":["n1","n2"]})";

ClientOptions Tls(const Certificates& c, bool with_client_cert = false) {
  ClientOptions o;
  o.tls = true;
  o.ca_file = c.ca;
  if (with_client_cert) {
    o.cert_file = c.client_cert;
    o.key_file = c.client_key;
  }
  o.timeout = 5000ms;
  return o;
}

void CheckFilterOk(const ClientResponse& r) {
  INFO("filter: " << r.status << " " << r.body << " " << r.error);
  REQUIRE(r.ok());
  CHECK(r.status == 200);
  rapidjson::Document d;
  d.Parse(r.body.c_str());
  REQUIRE_FALSE(d.HasParseError());
  REQUIRE(d.IsObject());
  CHECK(d["NodeNames"].IsArray());
  CHECK(d["NodeNames"].Size() == 2);
}

TEST_CASE("HTTPS: the verbs and /healthz answer over TLS; plain HTTP to that port fails", "[e2e]") {
  const Certificates& c = SharedTestCertificates();
  ExtenderProcess server;
  INFO(server.error());
  REQUIRE(
      server.Start({"--tls-cert", c.server_cert, "--tls-key", c.server_key, "--reclaim", "off"}));
  CHECK(server.Log().find("tls=on") != std::string::npos);

  const ClientResponse health = Fetch(kHost, server.port(), "GET", "/healthz", "", Tls(c));
  INFO("healthz: " << health.status << " " << health.body << " " << health.error);
  CHECK(health.ok());
  CHECK(health.status == 200);
  CheckFilterOk(Fetch(kHost, server.port(), "POST", "/filter", kFilterBody, Tls(c)));

  // Every endpoint is served over HTTPS.
  for (const char* path : {"/readyz", "/quotas", "/metrics"}) {
    const ClientResponse r = Fetch(kHost, server.port(), "GET", path, "", Tls(c));
    INFO(path << ": " << r.status << " " << r.error);
    CHECK(r.status == 200);
  }

  // Several requests on one TLS keep-alive connection.
  capext::test::HttpConnection connection(Tls(c));
  REQUIRE(connection.Connect(kHost, server.port()));
  for (int i = 0; i < 3; ++i)
    CheckFilterOk(connection.Post("/filter", kFilterBody));

  // Plain HTTP to the HTTPS port gets no HTTP answer.
  ClientOptions plain;
  plain.timeout = 3000ms;
  const ClientResponse r = Fetch(kHost, server.port(), "GET", "/healthz", "", plain);
  INFO("plain HTTP: " << r.status << " " << r.body << " " << r.error);
  CHECK_FALSE((r.ok() && r.status == 200));
  // And the server is still fine.
  CHECK(Fetch(kHost, server.port(), "GET", "/healthz", "", Tls(c)).status == 200);
  CHECK(server.Stop() == 0);
}

TEST_CASE("mutual TLS: a client certificate signed by --client-ca works, none or a rogue one fails",
          "[e2e]") {
  const Certificates& c = SharedTestCertificates();
  ExtenderProcess server;
  INFO(server.error());
  REQUIRE(server.Start({"--tls-cert", c.server_cert, "--tls-key", c.server_key, "--client-ca", c.ca,
                        "--reclaim", "off"}));
  CHECK(server.Log().find("tls=mutual") != std::string::npos);

  const ClientResponse good = Fetch(kHost, server.port(), "GET", "/healthz", "", Tls(c, true));
  INFO("with certificate: " << good.status << " " << good.error);
  CHECK(good.ok());
  CHECK(good.status == 200);
  CheckFilterOk(Fetch(kHost, server.port(), "POST", "/filter", kFilterBody, Tls(c, true)));

  const ClientResponse none = Fetch(kHost, server.port(), "GET", "/healthz", "", Tls(c, false));
  INFO("without certificate: " << none.status << " " << none.body << " " << none.error);
  CHECK_FALSE(none.ok());  // handshake failure or closed connection, never an answer

  ClientOptions rogue = Tls(c);
  rogue.cert_file = c.rogue_cert;
  rogue.key_file = c.rogue_key;
  const ClientResponse bad = Fetch(kHost, server.port(), "GET", "/healthz", "", rogue);
  INFO("rogue certificate: " << bad.status << " " << bad.body << " " << bad.error);
  CHECK_FALSE(bad.ok());

  // Still serving the good client.
  CHECK(Fetch(kHost, server.port(), "GET", "/healthz", "", Tls(c, true)).status == 200);
  CHECK(server.Stop() == 0);
}

std::string Review(const std::string& uid, const std::string& ns, const std::string& name,
                   const std::string& spec) {
  return R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":")" +
         uid +
         R"(","kind":{"group":"scheduling.x-k8s.io","version":"v1alpha1","kind":"ElasticQuota"},)"
         R"("resource":{"group":"scheduling.x-k8s.io","version":"v1alpha1","resource":"elasticquotas"},)"
         R"("namespace":")" +
         ns + R"(","name":")" + name +
         R"(","operation":"CREATE","userInfo":{"username":"admin"},)" +
         R"("object":{"apiVersion":"scheduling.x-k8s.io/v1alpha1","kind":"ElasticQuota",)" +
         R"("metadata":{"name":")" + name + R"(","namespace":")" + ns + R"("},"spec":)" + spec +
         R"(},"oldObject":null,"dryRun":false}})";
}

struct AdmitAnswer {
  bool allowed = false;
  std::string uid;
  std::string message;
  int code = 0;
};

AdmitAnswer Admit(uint16_t port, const Certificates& c, const std::string& review) {
  const ClientResponse r = Fetch(kHost, port, "POST", "/admit", review, Tls(c));
  INFO("admit: " << r.status << " " << r.body << " " << r.error);
  REQUIRE(r.ok());
  REQUIRE(r.status == 200);
  rapidjson::Document d;
  d.Parse(r.body.c_str());
  REQUIRE_FALSE(d.HasParseError());
  REQUIRE(d.IsObject());
  CHECK(std::string(d["apiVersion"].GetString()) == "admission.k8s.io/v1");
  CHECK(std::string(d["kind"].GetString()) == "AdmissionReview");
  REQUIRE(d.HasMember("response"));
  const auto& response = d["response"];
  AdmitAnswer a;
  REQUIRE(response.HasMember("allowed"));
  REQUIRE(response["allowed"].IsBool());
  a.allowed = response["allowed"].GetBool();
  if (response.HasMember("uid") && response["uid"].IsString()) a.uid = response["uid"].GetString();
  if (response.HasMember("status") && response["status"].IsObject()) {
    const auto& status = response["status"];
    if (status.HasMember("message") && status["message"].IsString())
      a.message = status["message"].GetString();
    if (status.HasMember("code") && status["code"].IsInt()) a.code = status["code"].GetInt();
  }
  return a;
}

TEST_CASE("admission webhook over HTTPS on its own port; /admit over plain HTTP is refused",
          "[e2e]") {
  const Certificates& c = SharedTestCertificates();
  const uint16_t webhook_port = FreeLoopbackPort();
  ExtenderProcess server;
  INFO(server.error());
  // The bundled example cluster: it already has eq1/eq1 and eq2/eq2.
  REQUIRE(server.Start({"--webhook-port", std::to_string(webhook_port), "--webhook-tls-cert",
                        c.server_cert, "--webhook-tls-key", c.server_key, "--reclaim", "off",
                        "--admission-mode", "gate"}));
  const auto listening = server.WaitForListening("webhook", 10000ms);
  INFO(server.error() << "\n" << server.Log());
  REQUIRE(listening.has_value());
  CHECK(*listening == webhook_port);

  SECTION("a valid ElasticQuota for a new namespace is allowed") {
    const AdmitAnswer a =
        Admit(webhook_port, c,
              Review("uid-valid", "team-a", "team-a", R"({"min":{"cpu":"1"},"max":{"cpu":"2"}})"));
    CHECK(a.allowed);
    CHECK(a.uid == "uid-valid");
  }
  SECTION("min > max is denied with the reason in response.status.message") {
    const AdmitAnswer a =
        Admit(webhook_port, c,
              Review("uid-minmax", "team-b", "team-b", R"({"min":{"cpu":"4"},"max":{"cpu":"2"}})"));
    CHECK_FALSE(a.allowed);
    CHECK(a.uid == "uid-minmax");
    INFO("message: " << a.message);
    CHECK(a.message.find("min") != std::string::npos);
    CHECK(a.message.find("max") != std::string::npos);
    CHECK(a.message.find("cpu") != std::string::npos);
    CHECK(a.code >= 400);
  }
  SECTION("a second ElasticQuota in namespace eq1 is denied") {
    const AdmitAnswer a = Admit(
        webhook_port, c,
        Review("uid-second", "eq1", "eq1-second", R"({"min":{"cpu":"1"},"max":{"cpu":"2"}})"));
    CHECK_FALSE(a.allowed);
    INFO("message: " << a.message);
    CHECK(a.message.find("eq1") != std::string::npos);
    CHECK(a.code >= 400);
  }
  SECTION("a review that is not JSON is a 400 with a JSON error") {
    const ClientResponse r =
        Fetch(kHost, webhook_port, "POST", "/admit", "{not an AdmissionReview", Tls(c));
    INFO(r.status << " " << r.body << " " << r.error);
    CHECK(r.status == 400);
    rapidjson::Document d;
    d.Parse(r.body.c_str());
    REQUIRE_FALSE(d.HasParseError());
    REQUIRE(d.IsObject());
    CHECK(d.HasMember("error"));
  }
  SECTION("/mutate gates a new pod of a quota namespace, passes others, 400s malformed reviews") {
    auto pod_review = [](const std::string& ns) {
      return R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{)"
             R"("uid":"u-)" +
             ns + R"(","kind":{"group":"","version":"v1","kind":"Pod"},"namespace":")" + ns +
             R"(","operation":"CREATE","object":{"metadata":{"name":"p"},"spec":{}}}})";
    };
    for (const std::string ns : {"eq1", "no-quota"}) {
      const ClientResponse r =
          Fetch(kHost, webhook_port, "POST", "/mutate", pod_review(ns), Tls(c));
      INFO(ns << ": " << r.status << " " << r.body << " " << r.error);
      REQUIRE(r.status == 200);
      rapidjson::Document d;
      d.Parse(r.body.c_str());
      REQUIRE_FALSE(d.HasParseError());
      CHECK(d["response"]["allowed"].GetBool());
      CHECK(std::string(d["response"]["uid"].GetString()) == "u-" + ns);
      CHECK(d["response"].HasMember("patch") == (ns == "eq1"));
    }
    const ClientResponse bad = Fetch(kHost, webhook_port, "POST", "/mutate",
                                     R"({"apiVersion":"admission.k8s.io/v1"})", Tls(c));
    INFO(bad.status << " " << bad.body);
    CHECK(bad.status == 400);
    CHECK(bad.body.find("AdmissionReview") != std::string::npos);
    const ClientResponse plain = Fetch(kHost, server.port(), "POST", "/mutate", pod_review("eq1"));
    CHECK(plain.status == 403);
  }
  SECTION("the extender verbs are not served on the webhook port") {
    const ClientResponse r = Fetch(kHost, webhook_port, "POST", "/filter", kFilterBody, Tls(c));
    INFO(r.status << " " << r.body << " " << r.error);
    CHECK(r.status == 404);
  }
  SECTION("/admit over plain HTTP on the extender port is 403 with a JSON error") {
    const ClientResponse r =
        Fetch(kHost, server.port(), "POST", "/admit",
              Review("uid-plain", "team-a", "team-a", R"({"min":{"cpu":"1"},"max":{"cpu":"2"}})"));
    INFO(r.status << " " << r.body << " " << r.error);
    REQUIRE(r.ok());
    CHECK(r.status == 403);
    rapidjson::Document d;
    d.Parse(r.body.c_str());
    REQUIRE_FALSE(d.HasParseError());
    REQUIRE(d.IsObject());
    REQUIRE(d.HasMember("error"));
    REQUIRE(d["error"].IsString());
    CHECK(std::string(d["error"].GetString()).find("HTTPS") != std::string::npos);
  }
  CHECK(Fetch(kHost, server.port(), "GET", "/healthz").status == 200);
}

TEST_CASE("a key that does not match the certificate stops serve with a clear error", "[e2e]") {
  const Certificates& c = SharedTestCertificates();
  ExtenderProcess server;
  CHECK_FALSE(server.Start({"--tls-cert", c.server_cert, "--tls-key", c.client_key}, 10000ms));
  INFO(server.error());
  CHECK(server.exit_status().has_value());
  CHECK(server.exit_status().value_or(0) != 0);
  CHECK(server.Log().find("cannot start the extender listener") != std::string::npos);
}

}  // namespace
}  // namespace extender_tls_test
