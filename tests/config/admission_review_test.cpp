// Tests for the ElasticQuota admission webhook's decision (config/admission_review.h).
#include "config/admission_review.h"

#include <rapidjson/document.h>

#include <catch2/catch.hpp>
#include <string>

namespace capext {
namespace admission_review_test {
namespace {

// An AdmissionReview request for `object` (JSON text).
std::string Review(const std::string& operation, const std::string& object,
                   const std::string& ns = "team-a", const std::string& uid = "uid-1") {
  return R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":")" +
         uid +
         R"(","kind":{"group":"scheduling.x-k8s.io","version":"v1alpha1","kind":"ElasticQuota"},)" +
         R"("namespace":")" + ns + R"(","operation":")" + operation + R"(","object":)" + object +
         "}}";
}

std::string Quota(const std::string& ns, const std::string& name, const std::string& spec,
                  const std::string& annotations = "{}") {
  return R"({"apiVersion":"scheduling.x-k8s.io/v1alpha1","kind":"ElasticQuota","metadata":{"name":")" +
         name + R"(","namespace":")" + ns + R"(","annotations":)" + annotations + R"(},"spec":)" +
         spec + "}";
}

const std::string kSpec = R"({"min":{"cpu":"2","memory":"4Gi"},"max":{"cpu":"4","memory":"8Gi"}})";

ElasticQuota Existing(const std::string& ns, const std::string& name, ResourceList min,
                      ResourceList max, const std::string& parent = "") {
  ElasticQuota q;
  q.ns = ns;
  q.name = name;
  q.min = std::move(min);
  q.max = std::move(max);
  q.parent = parent;
  return q;
}

AdmissionDecision Decide(const std::string& body, const AdmissionClusterView& cluster = {}) {
  return DecideElasticQuotaAdmission(body, cluster);
}

TEST_CASE("a valid quota is allowed; the uid is echoed") {
  const AdmissionDecision d = Decide(Review("CREATE", Quota("team-a", "team-a", kSpec)));
  CHECK(d.allowed);
  CHECK(d.uid == "uid-1");
  CHECK(d.warnings.empty());
  rapidjson::Document response;
  response.Parse(WriteAdmissionResponse(d).c_str());
  REQUIRE_FALSE(response.HasParseError());
  CHECK(std::string(response["apiVersion"].GetString()) == "admission.k8s.io/v1");
  CHECK(std::string(response["kind"].GetString()) == "AdmissionReview");
  CHECK(std::string(response["response"]["uid"].GetString()) == "uid-1");
  CHECK(response["response"]["allowed"].GetBool());
  CHECK_FALSE(response["response"].HasMember("status"));
  CHECK_FALSE(response["response"].HasMember("warnings"));
}

TEST_CASE("an invalid object is denied with 400 and every reason") {
  const std::string spec =
      R"({"min":{"cpu":"abc","memory":"16Gi"},"max":{"cpu":"4","memory":"8Gi"},"minimum":{}})";
  const AdmissionDecision d = Decide(Review("CREATE", Quota("team-a", "team-a", spec)));
  CHECK_FALSE(d.allowed);
  CHECK(d.code == 400);
  CHECK(d.message.find(R"(spec.min.cpu: quantity "abc")") != std::string::npos);
  CHECK(d.message.find("spec.min.memory: min memory 16Gi is greater than max memory 8Gi") !=
        std::string::npos);
  CHECK(d.message.find(R"(spec.minimum: unknown field "minimum" (did you mean "min"?))") !=
        std::string::npos);
  rapidjson::Document response;
  response.Parse(WriteAdmissionResponse(d).c_str());
  const auto& status = response["response"]["status"];
  CHECK(status["code"].GetInt() == 400);
  CHECK(std::string(status["reason"].GetString()) == "BadRequest");
  CHECK(std::string(status["message"].GetString()) == d.message);
}

TEST_CASE("warnings come back in response.warnings and do not deny") {
  const AdmissionDecision d = Decide(
      Review("CREATE", Quota("team-a", "team-a", R"({"min":{"cpu":"2"},"max":{"cpu":"4"}})")));
  CHECK(d.allowed);
  REQUIRE(d.warnings.size() == 1);
  CHECK(d.warnings[0].find("spec.max: max lists cpu but not memory") == 0);
  rapidjson::Document response;
  response.Parse(WriteAdmissionResponse(d).c_str());
  CHECK(response["response"]["warnings"].Size() == 1);
}

TEST_CASE("the request's namespace and name stand in for absent metadata") {
  const std::string object =
      R"({"apiVersion":"scheduling.x-k8s.io/v1alpha1","kind":"ElasticQuota","metadata":{},"spec":)" +
      kSpec + "}";
  std::string body = Review("CREATE", object);
  body.insert(body.find(R"("operation")"), R"("name":"generated-1",)");
  const AdmissionDecision d = Decide(body);
  CHECK(d.allowed);
  CHECK(d.warnings.empty());
}

TEST_CASE("a second quota in a namespace is denied with 403; updating the same one is not") {
  AdmissionClusterView cluster;
  cluster.existing_quotas.push_back(
      Existing("team-a", "first", {{"cpu", 1000}, {"memory", 1 << 30}}, {{"cpu", 2000}}));
  AdmissionDecision d = Decide(Review("CREATE", Quota("team-a", "second", kSpec)), cluster);
  CHECK_FALSE(d.allowed);
  CHECK(d.code == 403);
  CHECK(d.message ==
        "namespace team-a already has ElasticQuota team-a/first: one ElasticQuota per namespace");
  rapidjson::Document response;
  response.Parse(WriteAdmissionResponse(d).c_str());
  CHECK(std::string(response["response"]["status"]["reason"].GetString()) == "Forbidden");
  d = Decide(Review("UPDATE", Quota("team-a", "first", kSpec)), cluster);
  CHECK(d.allowed);
}

TEST_CASE("sum of mins above the cluster's allocatable is a warning") {
  AdmissionClusterView cluster;
  cluster.total_allocatable = {{"cpu", 8000}, {"memory", int64_t{64} << 30}};
  cluster.existing_quotas.push_back(Existing("other", "other", {{"cpu", 7000}}, {}));
  // On UPDATE the old version of this quota (min cpu 6) is replaced, not added.
  cluster.existing_quotas.push_back(Existing("team-a", "team-a", {{"cpu", 6000}}, {}));
  const AdmissionDecision d = Decide(Review("UPDATE", Quota("team-a", "team-a", kSpec)), cluster);
  CHECK(d.allowed);
  REQUIRE(d.warnings.size() == 1);
  CHECK(d.warnings[0].find("min cpu sums to 9, more than the cluster's allocatable 8") !=
        std::string::npos);
  // Unknown allocatable (cache not synced): no warning.
  cluster.total_allocatable = {};
  CHECK(Decide(Review("UPDATE", Quota("team-a", "team-a", kSpec)), cluster).warnings.empty());
}

TEST_CASE("hierarchy: a missing parent or a cycle is denied; the children must fit") {
  const std::string parent_b = R"({"scheduling.capacity-extender.io/parent":"team-b/team-b"})";
  AdmissionClusterView cluster;
  AdmissionDecision d =
      Decide(Review("CREATE", Quota("team-a", "team-a", kSpec, parent_b)), cluster);
  CHECK_FALSE(d.allowed);
  CHECK(d.code == 403);
  CHECK(d.message.find("the parent ElasticQuota team-b/team-b is not defined in the cluster") !=
        std::string::npos);

  cluster.existing_quotas.push_back(
      Existing("team-b", "team-b", {{"cpu", 4000}}, {{"cpu", 8000}}, "team-a/team-a"));
  d = Decide(Review("CREATE", Quota("team-a", "team-a", kSpec, parent_b)), cluster);
  CHECK_FALSE(d.allowed);
  CHECK(d.message.find(
            "the hierarchy has a cycle: team-a/team-a -> team-b/team-b -> team-a/team-a") !=
        std::string::npos);

  // A child whose min does not fit: the problem is the parent's, and names the child.
  cluster.existing_quotas = {Existing("org", "org", {{"cpu", 1000}}, {{"cpu", 2000}})};
  const std::string parent_org = R"({"scheduling.capacity-extender.io/parent":"org/org"})";
  d = Decide(Review("CREATE", Quota("team-a", "team-a", kSpec, parent_org)), cluster);
  CHECK_FALSE(d.allowed);
  CHECK(d.message.find("ElasticQuota org/org: spec.min.cpu: the children's min cpu sums to 2 "
                       "(team-a/team-a 2), more than this parent's min cpu 1") !=
        std::string::npos);
  // Its max above the parent's is only a warning, even next to an error.
  CHECK(d.message.find("exceeds the parent") == std::string::npos);
  CHECK(d.warnings ==
        std::vector<std::string>{"spec.max.cpu: max cpu 4 exceeds the parent org/org's max cpu 2: "
                                 "the parent caps it anyway"});
}

TEST_CASE("hierarchy: a child's max above its parent's max is allowed with a warning") {
  AdmissionClusterView cluster;
  const int64_t gi = int64_t{1} << 30;
  cluster.existing_quotas = {Existing("org", "org", {{"cpu", 4000}, {"memory", 8 * gi}},
                                      {{"cpu", 6000}, {"memory", 8 * gi}})};
  const std::string parent_org = R"({"scheduling.capacity-extender.io/parent":"org/org"})";
  AdmissionDecision d =
      Decide(Review("CREATE",
                    Quota("team-a", "team-a",
                          R"({"min":{"cpu":"2","memory":"4Gi"},"max":{"cpu":"8","memory":"8Gi"}})",
                          parent_org)),
             cluster);
  CHECK(d.allowed);
  CHECK(d.warnings == std::vector<std::string>{"spec.max.cpu: max cpu 8 exceeds the parent "
                                               "org/org's max cpu 6: the parent caps it anyway"});
  rapidjson::Document response;
  response.Parse(WriteAdmissionResponse(d).c_str());
  REQUIRE(response["response"]["warnings"].IsArray());
  CHECK(response["response"]["warnings"].Size() == 1);

  // Lowering the parent's max below an existing child's warns about the child, by name.
  cluster.existing_quotas.push_back(Existing("team-a", "team-a", {{"cpu", 2000}, {"memory", gi}},
                                             {{"cpu", 6000}, {"memory", gi}}, "org/org"));
  d = Decide(Review("UPDATE",
                    Quota("org", "org",
                          R"({"min":{"cpu":"4","memory":"8Gi"},"max":{"cpu":"5","memory":"8Gi"}})"),
                    "org"),
             cluster);
  CHECK(d.allowed);
  CHECK(d.warnings == std::vector<std::string>{"ElasticQuota team-a/team-a: spec.max.cpu: max cpu "
                                               "6 exceeds the parent org/org's max cpu 5: the "
                                               "parent caps it anyway"});
}

TEST_CASE("hierarchy: a parent in the other API group is denied") {
  AdmissionClusterView cluster;
  const int64_t gi = int64_t{1} << 30;
  ElasticQuota org = Existing("org", "org", {{"cpu", 4000}, {"memory", 8 * gi}},
                              {{"cpu", 8000}, {"memory", 8 * gi}});
  org.api_group = "scheduling.sigs.k8s.io";
  cluster.existing_quotas = {org};
  const std::string parent_org = R"({"scheduling.capacity-extender.io/parent":"org/org"})";
  AdmissionDecision d =
      Decide(Review("CREATE", Quota("team-a", "team-a", kSpec, parent_org)), cluster);
  CHECK_FALSE(d.allowed);
  CHECK(d.code == 403);
  CHECK(d.message ==
        "metadata.annotations[scheduling.capacity-extender.io/parent]: the parent ElasticQuota "
        "org/org is a scheduling.sigs.k8s.io quota and this one a scheduling.x-k8s.io quota: a "
        "parent must be in the same API group");
  // The same parent in the same group is fine.
  cluster.existing_quotas[0].api_group = "scheduling.x-k8s.io";
  CHECK(Decide(Review("CREATE", Quota("team-a", "team-a", kSpec, parent_org)), cluster).allowed);
}

TEST_CASE("problems the cluster already had are not blamed on an unrelated quota") {
  AdmissionClusterView cluster;
  cluster.existing_quotas.push_back(
      Existing("orphan", "orphan", {{"cpu", 1000}}, {{"cpu", 2000}}, "gone/gone"));
  CHECK(Decide(Review("CREATE", Quota("team-a", "team-a", kSpec)), cluster).allowed);
}

TEST_CASE(
    "the fair-share weight: a decimal to 1000 is allowed; anything else denied with the reason") {
  const auto weight = [](const std::string& w) {
    return R"({"scheduling.capacity-extender.io/fair-share-weight":")" + w + R"("})";
  };
  CHECK(Decide(Review("CREATE", Quota("team-a", "team-a", kSpec, weight("2.5")))).allowed);
  CHECK(Decide(Review("CREATE", Quota("team-a", "team-a", kSpec, weight("0")))).allowed);
  const AdmissionDecision d =
      Decide(Review("CREATE", Quota("team-a", "team-a", kSpec, weight("-1"))));
  CHECK_FALSE(d.allowed);
  CHECK(d.code == 400);  // the object itself is invalid (403: a cluster rule)
  CHECK(d.message.find("metadata.annotations[scheduling.capacity-extender.io/fair-share-weight]: "
                       "annotation scheduling.capacity-extender.io/fair-share-weight \"-1\" is "
                       "not a weight: a decimal from 0 to 1000 with at most 3 decimals") !=
        std::string::npos);
  CHECK_FALSE(Decide(Review("CREATE", Quota("team-a", "team-a", kSpec, weight("1e3")))).allowed);
}

TEST_CASE("DELETE and CONNECT are allowed unchecked") {
  std::string body = Review("DELETE", "null");
  CHECK(Decide(body).allowed);
}

TEST_CASE("a malformed review is denied with 400 and says what is wrong") {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"[]", "expected an AdmissionReview object"},
      {R"({"apiVersion":"admission.k8s.io/v1beta1","kind":"AdmissionReview","request":{"uid":"u"}})",
       "expected apiVersion admission.k8s.io/v1 and kind AdmissionReview"},
      {R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview"})", "request: missing"},
      {R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{}})",
       "request.uid: missing"},
      {Review("PATCH", "{}"), "request.operation: unexpected \"PATCH\""},
      {Review("CREATE", "\"text\""), "request.object: missing"},
      {Review("CREATE", R"({"kind":"ElasticQuota","metadata":{"name":"x"}})"),
       "apiVersion: missing"},
      {"{not json", "request body is not JSON"},
  };
  for (const auto& [body, expected] : cases) {
    INFO(body);
    const AdmissionDecision d = Decide(body);
    CHECK_FALSE(d.allowed);
    CHECK(d.code == 400);
    CHECK(d.message.find(expected) != std::string::npos);
  }
}

TEST_CASE("deeply nested input is refused without exhausting the stack") {
  const std::string deep = std::string(200000, '[') + std::string(200000, ']');
  AdmissionDecision d = Decide(Review("CREATE", R"({"spec":)" + deep + "}"));
  CHECK_FALSE(d.allowed);
  CHECK(d.message == "request.object: nests deeper than 64 levels");
  d = Decide(Review("CREATE", "{}") + deep);  // trailing garbage after the review
  CHECK(d.message.find("request body is not JSON") == 0);
}

TEST_CASE("ReviewElasticQuotaAdmission: not JSON is an error Status, anything else a response") {
  std::string response = "untouched";
  Status s = ReviewElasticQuotaAdmission("{oops", {}, &response);
  CHECK_FALSE(s.ok());
  CHECK(s.message().find("request body is not JSON") == 0);
  CHECK(response == "untouched");

  AdmissionDecision decision;
  s = ReviewElasticQuotaAdmission(R"({"kind":"AdmissionReview"})", {}, &response, &decision);
  CHECK(s.ok());
  CHECK_FALSE(decision.allowed);
  rapidjson::Document d;
  d.Parse(response.c_str());
  REQUIRE_FALSE(d.HasParseError());
  CHECK(std::string(d["response"]["uid"].GetString()).empty());
  CHECK_FALSE(d["response"]["allowed"].GetBool());
  CHECK(d["response"]["status"]["code"].GetInt() == 400);

  s = ReviewElasticQuotaAdmission(
      Review("CREATE", Quota("team-a", "team-a", kSpec), "team-a", "abc"), {}, &response,
      &decision);
  CHECK(s.ok());
  CHECK(decision.allowed);
  CHECK(
      response ==
      R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","response":{"uid":"abc","allowed":true}})");
}

}  // namespace
}  // namespace admission_review_test
}  // namespace capext
