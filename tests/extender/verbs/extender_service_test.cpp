// In-process tests of the extender verbs (extender/verbs/extender_service.h): the answers' shapes
// as kube-scheduler reads them (extender-protocol.md) and the quota decisions they carry.
#include "extender/verbs/extender_service.h"

#include <rapidjson/document.h>

#include <atomic>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <catch2/catch.hpp>

#include "core/quantity.h"
#include "extender/embedded/embedded_binder.h"
#include "tests/support/builders.h"

namespace capext {
namespace extender_service_test {
namespace {

using testing::CpuList;
using testing::kGi;
using testing::MakeNode;
using testing::MakePod;
using testing::MakeQuota;

constexpr int64_t kStartMs = 1'800'000'000'000;

// Three 8-cpu nodes; quota "team" {min 4, max 6} using 3 cpu (one pod on n1); n3 is full (an
// 8-cpu pod of a namespace without a quota).
struct Fixture {
  explicit Fixture(ServiceOptions options = {})
      : cache(QuotaSemantics::kCapacityExtender, {}, [this] { return now.load(); }),
        binder(&cache),
        service(&cache, &metrics, NodeScoring::kLeastAllocated, PriorityThenStartTimeOrder(),
                &binder, options) {
    cache.set_ready(true);
    cache.Write([](ClusterState& s) {
      for (const char* n : {"n1", "n2", "n3"})
        s.UpsertNode(MakeNode(n, 8000, 32 * kGi));
      s.UpsertQuota(MakeQuota("team", CpuList(4000), CpuList(6000)));
      s.UpsertPod(MakePod("team", "running").Cpu(3000).BoundTo("n1").Started(kStartMs - 1000));
      s.UpsertPod(MakePod("other", "hog").Cpu(8000).BoundTo("n3").Started(kStartMs - 1000));
      return 0;
    });
  }
  std::atomic<int64_t> now{kStartMs};
  Metrics metrics;
  SchedulerCache cache;
  EmbeddedBinder binder;
  ExtenderService service;
};

std::string PodJson(const std::string& ns, const std::string& name, const std::string& cpu,
                    int priority = 0) {
  return fmt::format(
      R"({{"metadata":{{"name":"{}","namespace":"{}","uid":"uid-{}-{}",)"
      R"("creationTimestamp":"2027-01-01T00:00:00Z","managedFields":[{{"manager":"kubectl"}}]}},)"
      R"("spec":{{"containers":[{{"name":"c","image":"nginx","resources":{{"requests":)"
      R"({{"cpu":"{}","memory":"1Gi"}},"limits":{{"cpu":"{}"}}}}}}],"priority":{},)"
      R"("preemptionPolicy":"PreemptLowerPriority"}},"status":{{"phase":"Pending"}}}})",
      name, ns, ns, name, cpu, cpu, priority);
}

std::string NodeJson(const std::string& name) {
  return fmt::format(R"({{"metadata":{{"name":"{}","labels":{{"kubernetes.io/hostname":"{}"}}}},)"
                     R"("status":{{"allocatable":{{"cpu":"8","memory":"32Gi","pods":"110"}}}}}})",
                     name, name);
}

std::string NamesJson(const std::vector<std::string>& names) {
  std::string out = "[";
  for (const auto& n : names)
    out += (out.size() > 1 ? ",\"" : "\"") + n + "\"";
  return out + "]";
}

std::string NodeNamesBody(const std::string& pod, const std::vector<std::string>& names) {
  return fmt::format(R"({{"Pod":{},"Nodes":null,"NodeNames":{}}})", pod, NamesJson(names));
}

std::string FullNodesBody(const std::string& pod, const std::vector<std::string>& names) {
  std::string items;
  for (const auto& n : names)
    items += (items.empty() ? "" : ",") + NodeJson(n);
  return fmt::format(R"({{"Pod":{},"Nodes":{{"metadata":{{}},"items":[{}]}},"NodeNames":null}})",
                     pod, items);
}

rapidjson::Document ParseAnswer(const http::Response& response) {
  REQUIRE(response.status == 200);
  REQUIRE(response.content_type == "application/json");
  rapidjson::Document doc;
  doc.Parse(response.body.c_str());
  INFO(response.body);
  REQUIRE(!doc.HasParseError());
  return doc;
}

std::vector<std::string> Keys(const rapidjson::Value& object) {
  std::vector<std::string> out;
  for (auto m = object.MemberBegin(); m != object.MemberEnd(); ++m)
    out.emplace_back(m->name.GetString());
  return out;
}

std::set<std::string> Values(const rapidjson::Value& object) {
  std::set<std::string> out;
  for (auto m = object.MemberBegin(); m != object.MemberEnd(); ++m)
    out.insert(m->value.GetString());
  return out;
}

std::vector<std::string> Strings(const rapidjson::Value& array) {
  std::vector<std::string> out;
  for (const auto& v : array.GetArray())
    out.emplace_back(v.GetString());
  return out;
}

TEST_CASE("filter: NodeNames mode answers NodeNames, Nodes null", "[service]") {
  Fixture f;
  std::string body = NodeNamesBody(PodJson("team", "a", "1"), {"n1", "n2", "n3", "unknown"});
  rapidjson::Document doc = ParseAnswer(f.service.Filter(body));
  REQUIRE(doc["NodeNames"].IsArray());
  // n3 is full; a node our cache does not know passes (kube-scheduler already vetted it).
  CHECK(Strings(doc["NodeNames"]) == std::vector<std::string>{"n1", "n2", "unknown"});
  CHECK(doc["Nodes"].IsNull());
  CHECK(Keys(doc["FailedNodes"]) == std::vector<std::string>{"n3"});
  CHECK(std::string(doc["FailedNodes"]["n3"].GetString()).find("Insufficient cpu") !=
        std::string::npos);
  CHECK(doc["FailedAndUnresolvableNodes"].ObjectEmpty());
  CHECK(std::string(doc["Error"].GetString()).empty());
}

TEST_CASE("filter: full-node mode answers the same Node objects under Nodes.items", "[service]") {
  Fixture f;
  std::string body = FullNodesBody(PodJson("team", "a", "1"), {"n1", "n2", "n3"});
  rapidjson::Document doc = ParseAnswer(f.service.Filter(body));
  CHECK(doc["NodeNames"].IsNull());
  REQUIRE(doc["Nodes"].IsObject());
  REQUIRE(doc["Nodes"]["items"].IsArray());
  const auto& items = doc["Nodes"]["items"];
  REQUIRE(items.Size() == 2);
  CHECK(std::string(items[0]["metadata"]["name"].GetString()) == "n1");
  CHECK(std::string(items[1]["metadata"]["name"].GetString()) == "n2");
  // The objects are echoed whole, not rebuilt from our cache.
  rapidjson::Document expected;
  expected.Parse(NodeJson("n2").c_str());
  CHECK(items[1] == expected);
  CHECK(Keys(doc["FailedNodes"]) == std::vector<std::string>{"n3"});
  CHECK(std::string(doc["Error"].GetString()).empty());
}

TEST_CASE("filter: a quota rejection fails every node with one reason", "[service]") {
  Fixture f;
  SECTION("over max with the usage: resolvable, FailedNodes") {
    // team uses 3; 3 + 4 > max 6, but 4 alone fits max.
    std::string body = NodeNamesBody(PodJson("team", "b", "4"), {"n1", "n2", "n3"});
    rapidjson::Document doc = ParseAnswer(f.service.Filter(body));
    CHECK(Strings(doc["NodeNames"]).empty());
    CHECK(Keys(doc["FailedNodes"]) == std::vector<std::string>{"n1", "n2", "n3"});
    const auto reasons = Values(doc["FailedNodes"]);
    REQUIRE(reasons.size() == 1);
    CHECK(reasons.begin()->find("would exceed max") != std::string::npos);
    CHECK(doc["FailedAndUnresolvableNodes"].ObjectEmpty());
    CHECK(std::string(doc["Error"].GetString()).empty());
  }
  SECTION("request alone above max: FailedAndUnresolvableNodes") {
    std::string body = NodeNamesBody(PodJson("team", "huge", "7"), {"n1", "n2", "n3"});
    rapidjson::Document doc = ParseAnswer(f.service.Filter(body));
    CHECK(Strings(doc["NodeNames"]).empty());
    CHECK(doc["FailedNodes"].ObjectEmpty());
    CHECK(Keys(doc["FailedAndUnresolvableNodes"]) == std::vector<std::string>{"n1", "n2", "n3"});
    CHECK(Values(doc["FailedAndUnresolvableNodes"]).size() == 1);
    CHECK(std::string(doc["Error"].GetString()).empty());
  }
  SECTION("full-node mode: no Node object passes, every node is in FailedNodes") {
    std::string body = FullNodesBody(PodJson("team", "b", "4"), {"n1", "n2"});
    rapidjson::Document doc = ParseAnswer(f.service.Filter(body));
    REQUIRE(doc["Nodes"].IsObject());
    CHECK(doc["Nodes"]["items"].Empty());
    CHECK(Keys(doc["FailedNodes"]) == std::vector<std::string>{"n1", "n2"});
  }
}

TEST_CASE("filter: malformed bodies are a 400 with a JSON error", "[service]") {
  Fixture f;
  for (std::string body : {std::string("{"), std::string("[]"), std::string(R"({"Pod":3})"),
                           std::string(R"({"NodeNames":["n1"]})")}) {
    INFO(body);
    http::Response r = f.service.Filter(body);
    CHECK(r.status == 400);
    rapidjson::Document doc;
    doc.Parse(r.body.c_str());
    CHECK((doc.IsObject() && doc.HasMember("error")));
  }
}

TEST_CASE("filter: a cache that is not synced answers Error unless ignoreNotReady", "[service]") {
  SECTION("default") {
    Fixture f;
    f.cache.set_ready(false);
    std::string body = NodeNamesBody(PodJson("team", "a", "1"), {"n1", "n2"});
    rapidjson::Document doc = ParseAnswer(f.service.Filter(body));
    CHECK_FALSE(std::string(doc["Error"].GetString()).empty());
    CHECK(doc["NodeNames"].IsNull());
  }
  SECTION("ignore_not_ready") {
    ServiceOptions options;
    options.ignore_not_ready = true;
    Fixture f(options);
    f.cache.set_ready(false);
    std::string body = NodeNamesBody(PodJson("team", "a", "1"), {"n1", "n2"});
    rapidjson::Document doc = ParseAnswer(f.service.Filter(body));
    CHECK(std::string(doc["Error"].GetString()).empty());
    CHECK(Strings(doc["NodeNames"]) == std::vector<std::string>{"n1", "n2"});
  }
}

TEST_CASE("filter: the not-ready Error says why (the first list awaited)", "[service]") {
  Fixture f;
  f.cache.set_ready(false);
  f.cache.set_not_ready_reason("cluster cache not synced yet: waiting for the first list of nodes");
  std::string body = NodeNamesBody(PodJson("team", "a", "1"), {"n1"});
  rapidjson::Document doc = ParseAnswer(f.service.Filter(body));
  CHECK(std::string(doc["Error"].GetString()) ==
        "capacity-extender: cluster cache not synced yet: waiting for the first list of nodes");
}

TEST_CASE("filter: no ElasticQuota API served — refused with its own message, or allowed",
          "[service]") {
  const std::string missing =
      "no ElasticQuota API is served (install deploy/crd): neither scheduling.x-k8s.io/v1alpha1 "
      "nor scheduling.sigs.k8s.io/v1alpha1 lists elasticquotas";
  SECTION("missingQuotaAPI: refuse, even with ignoreNotReady") {
    ServiceOptions options;
    options.ignore_not_ready = true;
    Fixture f(options);
    // What live mode sets: not ready, for that reason.
    f.cache.set_quota_api({false, true, missing});
    f.cache.set_ready(false);
    f.cache.set_not_ready_reason(missing);
    std::string body = NodeNamesBody(PodJson("elsewhere", "a", "1"), {"n1", "n2"});
    rapidjson::Document doc = ParseAnswer(f.service.Filter(body));
    CHECK(std::string(doc["Error"].GetString()) == "capacity-extender: " + missing);
    CHECK(doc["NodeNames"].IsNull());
    CHECK(f.metrics.Render().find("outcome=\"no-quota-api\"} 1") != std::string::npos);
  }
  SECTION("missingQuotaAPI: allow places a pod of a namespace without a quota by node fit") {
    Fixture f;
    f.cache.Write([](ClusterState& s) {
      s.DeleteQuota("team", "team");  // no API, so no quota is known
      return 0;
    });
    f.cache.set_quota_api({false, false, missing});
    std::string body = NodeNamesBody(PodJson("team", "a", "7"), {"n1", "n2", "n3"});
    rapidjson::Document doc = ParseAnswer(f.service.Filter(body));
    CHECK(std::string(doc["Error"].GetString()).empty());
    CHECK(Strings(doc["NodeNames"]) == std::vector<std::string>{"n2"});  // n1 has 5 free, n3 0
  }
}

TEST_CASE("preempt: victims per node, and no candidate for a pod our reclaim already serves",
          "[service]") {
  Fixture f;
  // n2 is filled by a low-priority team pod; a high-priority team pod wants room there.
  f.cache.Write([](ClusterState& s) {
    s.UpsertQuota(MakeQuota("team", CpuList(8000), CpuList(16000)));
    s.UpsertPod(MakePod("team", "low").Cpu(8000).Priority(0).BoundTo("n2").Started(kStartMs));
    return 0;
  });
  const std::string preemptor = PodJson("team", "high", "4", 100);
  auto body = [&] {
    return fmt::format(
        R"({{"Pod":{},"NodeNameToVictims":null,"NodeNameToMetaVictims":{{"n2":{{"Pods":)"
        R"([{{"UID":"uid-team-low"}}],"NumPDBViolations":0}}}}}})",
        preemptor);
  };
  std::string first = body();
  rapidjson::Document doc = ParseAnswer(f.service.Preempt(first));
  REQUIRE(doc["NodeNameToMetaVictims"].IsObject());
  CHECK(Keys(doc["NodeNameToMetaVictims"]) == std::vector<std::string>{"n2"});
  const auto& n2 = doc["NodeNameToMetaVictims"]["n2"];
  REQUIRE(n2["Pods"].Size() == 1);
  CHECK(std::string(n2["Pods"][0]["UID"].GetString()) == "uid-team-low");
  CHECK(n2["NumPDBViolations"].GetInt() == 0);

  f.cache.Write([&](ClusterState& s) {
    s.Nominate("uid-team-high", "n1", f.now.load() + 60'000);
    return 0;
  });
  std::string second = body();
  rapidjson::Document served = ParseAnswer(f.service.Preempt(second));
  CHECK((!served.HasMember("NodeNameToMetaVictims") || served["NodeNameToMetaVictims"].IsNull() ||
         served["NodeNameToMetaVictims"].ObjectEmpty()));
  CHECK(!served.HasMember("NodeNameToVictims"));
}

TEST_CASE("prioritize: scores in 0..10 for every node, deterministic", "[service]") {
  Fixture f;
  const std::vector<std::string> names = {"n1", "n2", "n3", "unknown"};
  std::string body = NodeNamesBody(PodJson("team", "a", "1"), names);
  std::string again = body;
  http::Response first = f.service.Prioritize(body);
  rapidjson::Document doc = ParseAnswer(first);
  REQUIRE(doc.IsArray());
  REQUIRE(doc.Size() == names.size());
  for (rapidjson::SizeType i = 0; i < doc.Size(); ++i) {
    CHECK(std::string(doc[i]["Host"].GetString()) == names[i]);
    REQUIRE(doc[i]["Score"].IsInt());
    CHECK(doc[i]["Score"].GetInt() >= 0);
    CHECK(doc[i]["Score"].GetInt() <= 10);
  }
  // least-allocated: the empty n2 scores above the half-used n1, above the full n3.
  CHECK(doc[1]["Score"].GetInt() > doc[0]["Score"].GetInt());
  CHECK(doc[0]["Score"].GetInt() > doc[2]["Score"].GetInt());
  CHECK(doc[3]["Score"].GetInt() == 0);
  CHECK(f.service.Prioritize(again).body == first.body);
}

int64_t Amount(const rapidjson::Value& list, const char* resource) {
  REQUIRE(list.IsObject());
  REQUIRE(list.HasMember(resource));
  const StatusOr<Quantity> q = Quantity::Parse(list[resource].GetString());
  REQUIRE(q.ok());
  return DecisionAmount(resource, *q);
}

TEST_CASE("quotas: min, max, used, reserved, borrowed, lendable", "[service]") {
  Fixture f;
  f.cache.Write([](ClusterState& s) {
    s.UpsertQuota(MakeQuota("idle", CpuList(2000), CpuList(4000)));
    // team: 3 bound + 2 bound + 1 reserved = 6 used against min 4: borrowing 2.
    s.UpsertPod(MakePod("team", "second").Cpu(2000).BoundTo("n2").Started(kStartMs));
    s.UpsertPod(MakePod("team", "pending").Cpu(1000));
    s.Reserve("uid-team-pending", "n2", kStartMs, kStartMs + 60'000);
    return 0;
  });
  rapidjson::Document doc = ParseAnswer(f.service.Quotas());
  CHECK(std::string(doc["quotaSemantics"].GetString()) == "capacity-extender");
  REQUIRE(doc["quotas"].IsArray());
  REQUIRE(doc["quotas"].Size() == 2);
  const rapidjson::Value* team = nullptr;
  const rapidjson::Value* idle = nullptr;
  for (const auto& q : doc["quotas"].GetArray()) {
    const std::string ns = q["namespace"].GetString();
    if (ns == "team") team = &q;
    if (ns == "idle") idle = &q;
  }
  REQUIRE(team != nullptr);
  REQUIRE(idle != nullptr);
  CHECK(std::string((*team)["name"].GetString()) == "team");
  CHECK(Amount((*team)["min"], "cpu") == 4000);
  CHECK(Amount((*team)["max"], "cpu") == 6000);
  CHECK(Amount((*team)["used"], "cpu") == 6000);
  CHECK(Amount((*team)["reserved"], "cpu") == 1000);
  CHECK(Amount((*team)["borrowed"], "cpu") == 2000);
  CHECK(Amount((*team)["lendable"], "cpu") == 0);
  CHECK((*team)["borrowing"].GetBool());
  // Fair sharing (docs/fair-sharing.md): pool = the roots' mins 4 + 2; team borrows 2 of it.
  CHECK(std::string((*team)["weight"].GetString()) == "1");
  CHECK(std::string((*team)["share"].GetString()) == "0.333");
  CHECK(Amount((*team)["fairShare"], "cpu") == 2000);
  CHECK(std::string((*idle)["share"].GetString()) == "0.000");

  CHECK(Amount((*idle)["used"], "cpu") == 0);
  CHECK(Amount((*idle)["reserved"], "cpu") == 0);
  CHECK(Amount((*idle)["borrowed"], "cpu") == 0);
  CHECK(Amount((*idle)["lendable"], "cpu") == 2000);
  CHECK_FALSE((*idle)["borrowing"].GetBool());
  CHECK(doc["duplicates"].IsArray());
}

}  // namespace
}  // namespace extender_service_test
}  // namespace capext
