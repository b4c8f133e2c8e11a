// End to end: malformed requests against the real `capacity-extender serve` binary (bundled
// example cluster). Each must get a 4xx with a JSON body {"error": "..."} saying what was wrong,
// and the server must go on answering (GET /healthz 200 after every one):
// docs/extender-protocol.md#errors.
#include <rapidjson/document.h>

#include <algorithm>
#include <cctype>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "tests/support/extender_process.h"
#include "tests/support/http_client.h"

namespace extender_bad_input_test {
namespace {

using capext::test::ClientResponse;
using capext::test::ExtenderProcess;
using capext::test::Fetch;
using capext::test::SendRawBytes;

// A valid pod of a namespace without quota, small enough to fit n1 or n2 of the example.
std::string PodWith(const std::string& metadata_extra, const std::string& spec_extra,
                    const std::string& requests = R"({"cpu":"100m","memory":"64Mi"})") {
  return R"({"metadata":{"name":"bad-input","namespace":"default","uid":"u-bad-input",)"
         R"("creationTimestamp":"2026-01-01T00:00:00Z")" +
         metadata_extra + R"(},"spec":{"containers":[{"name":"c","image":"nginx",)" +
         R"("resources":{"requests":)" + requests + R"(}}])" + spec_extra + "}}";
}
const std::string kPod = PodWith("", "");

std::string FilterArgs(const std::string& pod, const std::string& names = R"(["n1","n2"])") {
  return R"({"Pod":)" + pod + R"(,"Nodes":null,"NodeNames":)" + names + "}";
}

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

struct BadCase {
  std::string name;
  std::string method;
  std::string path;
  std::string body;
  int status;                      // expected status
  std::vector<std::string> hints;  // the error message must contain each (case-insensitive)
};

std::vector<BadCase> Cases() {
  const std::string deep(100000, '[');
  std::vector<BadCase> c = {
      {"truncated JSON",
       "POST",
       "/filter",
       R"({"Pod":{"metadata":{"name":"x")",
       400,
       {"invalid json"}},
      {"empty body", "POST", "/filter", "", 400, {"empty"}},
      {"top level array", "POST", "/filter", "[]", 400, {"object"}},
      {"top level string", "POST", "/filter", R"("str")", 400, {"object"}},
      {"top level null", "POST", "/filter", "null", 400, {"object"}},
      {"Pod missing", "POST", "/filter", R"({"NodeNames":["n1"]})", 400, {"pod"}},
      {"Pod as a string", "POST", "/filter", FilterArgs(R"("a pod")"), 400, {"pod", "object"}},
      {"Pod as a number", "POST", "/filter", FilterArgs("42"), 400, {"pod", "object"}},
      {"Pod as an array", "POST", "/filter", FilterArgs("[{}]"), 400, {"pod", "object"}},
      {"NodeNames as an object",
       "POST",
       "/filter",
       FilterArgs(kPod, R"({"n1":true})"),
       400,
       {"nodenames", "array"}},
      {"NodeNames with numbers",
       "POST",
       "/filter",
       FilterArgs(kPod, "[1,2]"),
       400,
       {"nodenames", "string"}},
      {"Nodes.items not an array",
       "POST",
       "/filter",
       R"({"Pod":)" + kPod + R"(,"Nodes":{"metadata":{},"items":{"a":1}},"NodeNames":null})",
       400,
       {"items", "array"}},
      {"node item without metadata.name",
       "POST",
       "/filter",
       R"({"Pod":)" + kPod +
           R"(,"Nodes":{"metadata":{},"items":[{"metadata":{"labels":{}}}]},"NodeNames":null})",
       400,
       {"items[0]", "name"}},
      {"containers as an object",
       "POST",
       "/filter",
       FilterArgs(
           R"({"metadata":{"name":"p","namespace":"default"},"spec":{"containers":{"name":"c"}}})"),
       400,
       {"containers"}},
      {"requests cpu as an object",
       "POST",
       "/filter",
       FilterArgs(PodWith("", "", R"({"cpu":{"value":1}})")),
       400,
       {"cpu"}},
      {"priority as the string abc",
       "POST",
       "/filter",
       FilterArgs(PodWith("", R"(,"priority":"abc")")),
       400,
       {"priority"}},
      {"labels as a list",
       "POST",
       "/filter",
       FilterArgs(PodWith(R"(,"labels":["a","b"])", "")),
       400,
       {"labels"}},
      {"negative quantity",
       "POST",
       "/filter",
       FilterArgs(PodWith("", "", R"({"cpu":"-1"})")),
       400,
       {"cpu", "negative"}},
      {"bad quantity 1Gb",
       "POST",
       "/filter",
       FilterArgs(PodWith("", "", R"({"memory":"1Gb"})")),
       400,
       {"memory", "1gb"}},
      {"invalid UTF-8 in a string",
       "POST",
       "/filter",
       FilterArgs(PodWith(std::string(R"(,"labels":{"a":"b)") + "\xff\xfe" + R"("})", "")),
       400,
       {"encoding"}},
      {"100,000 nested [", "POST", "/filter", deep, 400, {"invalid json"}},
      {"100,000 nested [ inside a node item",
       "POST",
       "/filter",
       R"({"Pod":)" + kPod + R"(,"Nodes":{"items":[{"metadata":{"name":"n1"},"x":)" + deep +
           std::string(100000, ']') + "}]}}",
       400,
       {"deep"}},
      {"unknown verb", "POST", "/nope", FilterArgs(kPod), 404, {"/nope"}},
      {"GET on a POST verb", "GET", "/filter", "", 405, {"method"}},
      {"POST on a GET endpoint", "POST", "/quotas", "{}", 405, {"method"}},
      {"a path prefix that is not configured",
       "POST",
       "/scheduler/filter",
       FilterArgs(kPod),
       404,
       {"/scheduler/filter"}},
      {"bind without PodName",
       "POST",
       "/bind",
       R"({"PodNamespace":"default","PodUID":"u1","Node":"n1"})",
       400,
       {"podname"}},
      {"bind without Node",
       "POST",
       "/bind",
       R"({"PodName":"p","PodNamespace":"default","PodUID":"u1"})",
       400,
       {"node"}},
      {"bind with PodName as a number",
       "POST",
       "/bind",
       R"({"PodName":7,"PodNamespace":"default","PodUID":"u1","Node":"n1"})",
       400,
       {"podname", "string"}},
      {"bind with a top-level array", "POST", "/bind", "[]", 400, {"object"}},
      {"preempt with NodeNameToMetaVictims as an array",
       "POST",
       "/preempt",
       R"({"Pod":)" + kPod + R"(,"NodeNameToVictims":null,"NodeNameToMetaVictims":[{"n1":{}}]})",
       400,
       {"nodenametometavictims", "object"}},
      {"preempt with a victim entry as a string",
       "POST",
       "/preempt",
       R"({"Pod":)" + kPod + R"(,"NodeNameToMetaVictims":{"n1":"u-job-a"}})",
       400,
       {"nodenametometavictims", "n1"}},
      {"preempt without Pod", "POST", "/preempt", R"({"NodeNameToMetaVictims":{}})", 400, {"pod"}},
      // Go's extender/v1 types: Pods is a list, MetaPod.UID a string, NumPDBViolations an int64,
      // and every NodeNameToVictims entry a Victims object.
      {"preempt with Pods as an object",
       "POST",
       "/preempt",
       R"({"Pod":)" + kPod + R"(,"NodeNameToMetaVictims":{"n1":{"Pods":{"UID":"u-job-a"}}}})",
       400,
       {"nodenametometavictims.n1.pods", "array"}},
      {"preempt with a victim UID as a number",
       "POST",
       "/preempt",
       R"({"Pod":)" + kPod + R"(,"NodeNameToMetaVictims":{"n1":{"Pods":[{"UID":7}]}}})",
       400,
       {"pods[0].uid", "string"}},
      {"preempt with NumPDBViolations as a string",
       "POST",
       "/preempt",
       R"({"Pod":)" + kPod +
           R"(,"NodeNameToMetaVictims":{"n1":{"Pods":[],"NumPDBViolations":"0"}}})",
       400,
       {"numpdbviolations", "int64"}},
      {"preempt with NumPDBViolations as a fraction",
       "POST",
       "/preempt",
       R"({"Pod":)" + kPod + R"(,"NodeNameToMetaVictims":{"n1":{"NumPDBViolations":0.5}}})",
       400,
       {"numpdbviolations", "int64"}},
      {"preempt with a NodeNameToVictims entry as a number",
       "POST",
       "/preempt",
       R"({"Pod":)" + kPod + R"(,"NodeNameToVictims":{"n1":7},"NodeNameToMetaVictims":null})",
       400,
       {"nodenametovictims.n1", "object"}},
      {"preempt with a full victim's metadata.uid as a number",
       "POST",
       "/preempt",
       R"({"Pod":)" + kPod +
           R"(,"NodeNameToVictims":{"n1":{"Pods":[{"metadata":{"uid":1}}]}},"NodeNameToMetaVictims":null})",
       400,
       {"metadata.uid", "string"}},
      {"prioritize with truncated JSON",
       "POST",
       "/prioritize",
       R"({"Pod":)",
       400,
       {"invalid json"}},
      {"prioritize with NodeNames as a string",
       "POST",
       "/prioritize",
       FilterArgs(kPod, R"("n1")"),
       400,
       {"nodenames"}},
      {"explain with garbage", "POST", "/explain", "garbage!", 400, {"invalid json"}},
      {"explain with an array", "POST", "/explain", "[1,2,3]", 400, {"object"}},
      {"spec as an array",
       "POST",
       "/filter",
       FilterArgs(R"({"metadata":{"name":"p","namespace":"default"},"spec":[]})"),
       400,
       {"spec"}},
      {"metadata as a string",
       "POST",
       "/filter",
       FilterArgs(R"({"metadata":"p","spec":{}})"),
       400,
       {"metadata"}},
  };
  return c;
}

// CHECKs only (no REQUIRE), so that one wrong answer does not hide the cases after it.
void CheckJsonError(const ClientResponse& r, int status, const std::vector<std::string>& hints) {
  INFO("status " << r.status << " body " << r.body.substr(0, 500) << " error " << r.error);
  CHECK(r.ok());
  if (!r.ok()) return;
  CHECK(r.status == status);
  CHECK(r.status >= 400);
  CHECK(r.status < 500);
  CHECK(r.Header("content-type").find("application/json") != std::string::npos);
  rapidjson::Document d;
  d.Parse(r.body.c_str());
  const bool shaped =
      !d.HasParseError() && d.IsObject() && d.HasMember("error") && d["error"].IsString();
  CHECK(shaped);  // {"error": "..."}
  if (!shaped) return;
  const std::string message = d["error"].GetString();
  CHECK_FALSE(message.empty());
  for (const auto& hint : hints) {
    INFO("the message must mention \"" << hint << "\": " << message);
    CHECK(Lower(message).find(Lower(hint)) != std::string::npos);
  }
}

void CheckHealthy(const ExtenderProcess& server) {
  const ClientResponse h = Fetch("127.0.0.1", server.port(), "GET", "/healthz");
  INFO("healthz: " << h.status << " " << h.body << " " << h.error);
  CHECK(h.status == 200);
}

TEST_CASE("malformed requests get a 4xx with a JSON error and the server keeps serving", "[e2e]") {
  ExtenderProcess server;
  INFO(server.error());
  REQUIRE(server.Start({"--reclaim", "off"}));

  // The valid baseline passes, so each failure below is about the one thing broken.
  {
    const ClientResponse ok =
        Fetch("127.0.0.1", server.port(), "POST", "/filter", FilterArgs(kPod));
    INFO(ok.body);
    REQUIRE(ok.status == 200);
    rapidjson::Document d;
    d.Parse(ok.body.c_str());
    REQUIRE_FALSE(d.HasParseError());
    CHECK(d["NodeNames"].IsArray());
    CHECK(d["NodeNames"].Size() == 2);
  }

  const std::vector<BadCase> cases = Cases();
  REQUIRE(cases.size() >= 30);
  for (const BadCase& c : cases) {
    INFO("case: " << c.name << " (" << c.method << " " << c.path << ", " << c.body.size()
                  << " bytes)");
    const ClientResponse r = Fetch("127.0.0.1", server.port(), c.method, c.path, c.body);
    CheckJsonError(r, c.status, c.hints);
    CheckHealthy(server);
  }

  SECTION("deep nesting in fields the extender ignores is ignored, not a crash") {
    const std::string deep = std::string(100000, '[') + std::string(100000, ']');
    for (const std::string& body :
         {FilterArgs(PodWith(R"(,"managedFields":)" + deep, "")),
          FilterArgs(PodWith("", R"(,"affinityX":)" + deep)),
          R"({"Pod":)" + kPod + R"(,"NodeNames":["n1"],"Unknown":)" + deep + "}"}) {
      const ClientResponse r = Fetch("127.0.0.1", server.port(), "POST", "/filter", body);
      INFO("status " << r.status << " body " << r.body.substr(0, 300) << " " << r.error);
      REQUIRE(r.ok());
      CHECK(r.status == 200);
      CheckHealthy(server);
    }
    const ClientResponse r = Fetch("127.0.0.1", server.port(), "POST", "/explain",
                                   PodWith(R"(,"managedFields":)" + deep, ""));
    INFO("explain: " << r.status << " " << r.body.substr(0, 300) << " " << r.error);
    REQUIRE(r.ok());
    CHECK(r.status == 200);
    CheckHealthy(server);
  }
  SECTION("a 20 MiB body is over the default 16 MiB limit: 413") {
    std::string body = FilterArgs(kPod);
    body.insert(body.size() - 1, R"(,"padding":")" + std::string(20u << 20, 'x') + "\"");
    const ClientResponse r = Fetch("127.0.0.1", server.port(), "POST", "/filter", body);
    CheckJsonError(r, 413, {"limit"});
    CheckHealthy(server);
  }
  SECTION("a valid body just under the 16 MiB limit is served") {
    std::string body = FilterArgs(kPod);
    const std::size_t limit = 16u << 20;
    const std::string open = R"(,"padding":")";
    const std::size_t pad = limit - 1024 - body.size() - open.size() - 1;
    body.insert(body.size() - 1, open + std::string(pad, 'x') + "\"");
    REQUIRE(body.size() < limit);
    REQUIRE(body.size() > limit - 2048);
    const ClientResponse r = Fetch("127.0.0.1", server.port(), "POST", "/filter", body);
    INFO("status " << r.status << " body " << r.body.substr(0, 300) << " " << r.error);
    CHECK(r.status == 200);
    rapidjson::Document d;
    d.Parse(r.body.c_str());
    REQUIRE_FALSE(d.HasParseError());
    CHECK(d["NodeNames"].IsArray());
    CheckHealthy(server);
  }
  SECTION("garbage HTTP bytes on a raw socket: 400") {
    const std::string reply =
        SendRawBytes("127.0.0.1", server.port(), "\x16\x03\x01 GARBAGE \x01\x02\r\n\r\n");
    INFO(reply);
    CHECK(reply.rfind("HTTP/1.1 400", 0) == 0);
    CHECK(reply.find(R"({"error":")") != std::string::npos);
    CheckHealthy(server);
    const std::string reply2 = SendRawBytes("127.0.0.1", server.port(),
                                            "POST /filter HTTP/9.9\r\nContent-Length: x\r\n\r\n");
    INFO(reply2);
    CHECK(reply2.rfind("HTTP/1.1 400", 0) == 0);
    CheckHealthy(server);
  }
  // Nothing above may have taken the server down.
  CHECK(server.Running());
  CHECK(server.Stop() == 0);
}

TEST_CASE("with --path-prefix /scheduler the verbs answer under the prefix", "[e2e]") {
  ExtenderProcess server;
  INFO(server.error());
  REQUIRE(server.Start({"--path-prefix", "/scheduler", "--reclaim", "off"}));
  const ClientResponse r =
      Fetch("127.0.0.1", server.port(), "POST", "/scheduler/filter", FilterArgs(kPod));
  INFO("status " << r.status << " body " << r.body);
  CHECK(r.status == 200);
  rapidjson::Document d;
  d.Parse(r.body.c_str());
  REQUIRE_FALSE(d.HasParseError());
  REQUIRE(d.IsObject());
  CHECK(d["NodeNames"].IsArray());
  CHECK(d["NodeNames"].Size() == 2);
  CHECK(
      Fetch("127.0.0.1", server.port(), "POST", "/scheduler/prioritize", FilterArgs(kPod)).status ==
      200);
  // A prefix other than the configured one is unknown.
  CheckJsonError(Fetch("127.0.0.1", server.port(), "POST", "/other/filter", FilterArgs(kPod)), 404,
                 {"/other/filter"});
  CheckHealthy(server);
  // The prefix is a whole path segment: /schedulerfilter is not /scheduler/filter.
  // BUG: the router strips the prefix with a plain starts_with, so
  // POST /schedulerfilter is served as /filter (200) and /scheduler-x/filter is routed as
  // verb "-x/filter".
  CheckJsonError(Fetch("127.0.0.1", server.port(), "POST", "/schedulerfilter", FilterArgs(kPod)),
                 404, {"/schedulerfilter"});
}

// One sample line of the Prometheus text format: name, optional {label="value",...} with
// values escaped (\\, \", \n only), a value.
bool ValidSampleLine(const std::string& line) {
  static const std::regex sample(
      R"re(^[a-zA-Z_:][a-zA-Z0-9_:]*(\{[a-zA-Z_][a-zA-Z0-9_]*="([^"\\\n]|\\[\\"n])*"(,[a-zA-Z_][a-zA-Z0-9_]*="([^"\\\n]|\\[\\"n])*")*\})? ([-+]?[0-9.eE+-]+|NaN|[-+]Inf)( [0-9]+)?$)re");
  return std::regex_match(line, sample);
}

TEST_CASE("odd and unknown request paths neither corrupt nor bloat /metrics", "[e2e]") {
  ExtenderProcess server;
  INFO(server.error());
  REQUIRE(server.Start({"--reclaim", "off"}));
  // A scanner's paths, some with characters that need escaping in a label value.
  for (const std::string target :
       {"/nope", "/random-1", "/random-2", "/wp-login.php", R"(/a"b)", R"(/q\x)", "/x%0Ay"}) {
    const std::string reply =
        SendRawBytes("127.0.0.1", server.port(),
                     "GET " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
    INFO(target << " -> " << reply);
    CHECK(reply.rfind("HTTP/1.1 404", 0) == 0);
  }
  CHECK(Fetch("127.0.0.1", server.port(), "POST", "/filter", FilterArgs(kPod)).status == 200);
  const ClientResponse metrics = Fetch("127.0.0.1", server.port(), "GET", "/metrics");
  REQUIRE(metrics.status == 200);
  std::istringstream lines(metrics.body);
  std::string line;
  std::set<std::string> unknown_verbs;
  std::vector<std::string> invalid;
  const std::set<std::string> known = {"filter",  "prioritize", "preempt", "bind",
                                       "explain", "admit",      "quotas",  "healthz",
                                       "readyz",  "metrics",    "root"};
  static const std::regex verb_label(R"re(verb="((?:[^"\\]|\\.)*)")re");
  int samples = 0;
  while (std::getline(lines, line)) {
    if (line.empty() || line[0] == '#') continue;
    ++samples;
    if (!ValidSampleLine(line)) invalid.push_back(line);
    std::smatch m;
    if (line.rfind("capacity_extender_request", 0) == 0 && std::regex_search(line, m, verb_label) &&
        known.count(m[1].str()) == 0) {
      unknown_verbs.insert(m[1].str());
    }
  }
  CHECK(samples > 0);
  {
    // BUG: the path becomes the verb label unescaped, e.g.
    // capacity_extender_requests_total{verb="a"b",code="404"} 1 and {verb="q\x",...}, which
    // makes Prometheus reject the whole scrape.
    std::string shown;
    for (std::size_t i = 0; i < invalid.size() && i < 6; ++i)
      shown += invalid[i] + "\n";
    INFO(invalid.size() << " invalid sample lines, e.g.:\n" << shown);
    CHECK(invalid.empty());
  }
  {
    // BUG: every distinct unknown path gets its own series (unbounded
    // label cardinality: memory and /metrics grow with every scanner request). Unknown paths
    // must share one catch-all label value at most.
    std::string shown;
    for (const auto& v : unknown_verbs)
      shown += "verb=\"" + v + "\" ";
    INFO("verb labels of unknown paths: " << shown);
    CHECK(unknown_verbs.size() <= 1);
  }
  CheckHealthy(server);
}

TEST_CASE("a client that stalls mid-request holds up nobody and is cut off", "[e2e]") {
  ExtenderProcess server;
  INFO(server.error());
  REQUIRE(server.Start({"--reclaim", "off", "--request-timeout", "300ms"}));
  // Headers promise 1000 bytes of body; only one arrives.
  capext::test::RawConnection stalled;
  REQUIRE(stalled.Connect("127.0.0.1", server.port()));
  REQUIRE(
      stalled.Write("POST /filter HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: "
                    "application/json\r\nContent-Length: 1000\r\n\r\n{"));
  // Others are served meanwhile.
  CheckHealthy(server);
  CHECK(Fetch("127.0.0.1", server.port(), "POST", "/filter", FilterArgs(kPod)).status == 200);
  // The stalled request is dropped after the request timeout (bounded wait well above it).
  const auto result = stalled.ReadUntilClosed(std::chrono::milliseconds(10000));
  INFO("server sent: " << result.data);
  CHECK(result.closed_by_peer);
  CHECK(result.data.find("200 OK") == std::string::npos);
  CheckHealthy(server);
}

}  // namespace
}  // namespace extender_bad_input_test
