// The /mutate decision (docs/workloads-live.md#mutate-the-gate-admissionmode-gate): which pods get
// the gate, the JSONPatch that adds it, and 400s with reasons for malformed reviews.
#include "config/pod_mutation.h"

#include <rapidjson/document.h>

#include <catch2/catch.hpp>
#include <string>

namespace capext {
namespace pod_mutation_test {
namespace {

std::string Review(const std::string& ns, const std::string& spec,
                   const std::string& operation = "CREATE", const std::string& kind = "Pod") {
  return R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u-1",)"
         R"("kind":{"group":"","version":"v1","kind":")" +
         kind + R"("},"resource":{"group":"","version":"v1","resource":"pods"},"namespace":")" +
         ns + R"(","operation":")" + operation +
         R"(","object":{"apiVersion":"v1","kind":"Pod","metadata":{"generateName":"w-"},"spec":)" +
         spec + "}}}";
}

PodMutationOptions Options() {
  PodMutationOptions o;
  o.scheduler_names = {"default-scheduler", "capacity-scheduler"};
  o.governed = [](std::string_view ns) { return ns == "eq1" || ns == "child"; };
  return o;
}

struct Answer {
  Status status;
  PodMutationDecision decision;
  rapidjson::Document response;
};

Answer Mutate(const std::string& body, const PodMutationOptions& options = Options()) {
  Answer a;
  std::string json;
  a.status = ReviewPodMutation(body, options, &json, &a.decision);
  if (a.status.ok()) {
    a.response.Parse(json.c_str());
    REQUIRE_FALSE(a.response.HasParseError());
    REQUIRE(a.response["response"]["uid"].GetString() == std::string("u-1"));
    REQUIRE(a.response["response"]["allowed"].GetBool());
  }
  return a;
}

TEST_CASE("mutate: a new pod of a quota namespace gets the gate as a JSONPatch", "[config]") {
  Answer a = Mutate(Review("eq1", R"({"containers":[{"name":"c"}]})"));
  REQUIRE(a.status.ok());
  CHECK(a.decision.gated);
  CHECK(a.decision.pod == "eq1/w-*");
  CHECK(
      a.decision.patch ==
      R"([{"op":"add","path":"/spec/schedulingGates","value":[{"name":"scheduling.capacity-extender.io/quota"}]}])");
  const auto& response = a.response["response"];
  CHECK(response["patchType"].GetString() == std::string("JSONPatch"));
  // base64 of the patch text (RFC 4648, padded).
  CHECK(
      std::string(response["patch"].GetString()).rfind("W3sib3AiOiJhZGQiLCJwYXRoIjoiL3NwZWMv", 0) ==
      0);
}

TEST_CASE("mutate: other gates are kept: ours is appended", "[config]") {
  Answer a = Mutate(Review("child", R"({"schedulingGates":[{"name":"example.com/other"}]})"));
  REQUIRE(a.status.ok());
  CHECK(a.decision.gated);
  CHECK(
      a.decision.patch ==
      R"([{"op":"add","path":"/spec/schedulingGates/-","value":{"name":"scheduling.capacity-extender.io/quota"}}])");
}

TEST_CASE("mutate: pods that must not be gated pass untouched, with the reason", "[config]") {
  struct Case {
    std::string body, why;
  } cases[] = {
      {Review("free", "{}"), "namespace free has no ElasticQuota"},
      {Review("eq1", R"({"nodeName":"n1"})"), "spec.nodeName is set"},
      {Review("eq1", R"({"schedulerName":"other-scheduler"})"),
       "schedulerName other-scheduler is not gated"},
      {Review("eq1", R"({"schedulingGates":[{"name":"scheduling.capacity-extender.io/quota"}]})"),
       "already gated"},
      {Review("eq1", "{}", "UPDATE"), "not a Pod CREATE (UPDATE Pod)"},
      {Review("eq1", "{}", "CREATE", "Service"), "not a Pod CREATE (CREATE Service)"},
  };
  for (const auto& c : cases) {
    INFO(c.body);
    Answer a = Mutate(c.body);
    REQUIRE(a.status.ok());
    CHECK_FALSE(a.decision.gated);
    CHECK(a.decision.why_not == c.why);
    CHECK_FALSE(a.response["response"].HasMember("patch"));
  }
  // The named scheduler is gated, the empty name counts as default-scheduler.
  CHECK(Mutate(Review("eq1", R"({"schedulerName":"capacity-scheduler"})")).decision.gated);
  PodMutationOptions only_ours = Options();
  only_ours.scheduler_names = {"capacity-scheduler"};
  CHECK_FALSE(Mutate(Review("eq1", "{}"), only_ours).decision.gated);
  // Filter mode in force: a webhook left installed gates nothing.
  PodMutationOptions filter_mode = Options();
  filter_mode.gating = false;
  const Answer f = Mutate(Review("eq1", "{}"), filter_mode);
  CHECK_FALSE(f.decision.gated);
  CHECK(f.decision.why_not == "admission mode is filter");
}

TEST_CASE("mutate: malformed reviews are errors that say what is wrong", "[config]") {
  struct Case {
    std::string body, reason;
  } cases[] = {
      {"{not json", "request body is not JSON"},
      {"[]", "expected an AdmissionReview object"},
      {R"({"apiVersion":"admission.k8s.io/v1beta1","kind":"AdmissionReview"})",
       "expected apiVersion admission.k8s.io/v1"},
      {R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview"})", "request: missing"},
      {R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{}})",
       "request.uid: missing"},
      {R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":7}})",
       "request.uid"},
      {R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u","operation":"CREATE","kind":{"kind":"Pod"},"namespace":"eq1"}})",
       "request.object: missing"},
      {Review("eq1", "7"), "request.object.spec"},
      {Review("eq1", R"({"schedulingGates":{"name":"x"}})"), "request.object.spec.schedulingGates"},
      {Review("eq1", R"({"schedulingGates":[{"name":3}]})"),
       "request.object.spec.schedulingGates[0].name"},
      {Review("eq1", R"({"nodeName":false})"), "request.object.spec.nodeName"},
      {Review("", "{}"), "request.namespace: missing"},
  };
  for (const auto& c : cases) {
    INFO(c.body);
    Answer a = Mutate(c.body);
    REQUIRE_FALSE(a.status.ok());
    INFO(a.status.message());
    CHECK(a.status.message().find(c.reason) != std::string::npos);
  }
  // Deep nesting is parsed iteratively: an error, never a stack overflow.
  CHECK_FALSE(Mutate(std::string(100000, '[')).status.ok());
}

// A review with the pod's metadata and spec given whole, and more request fields (dryRun).
std::string ReviewOf(const std::string& metadata, const std::string& spec,
                     const std::string& request_extra = "") {
  return R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u-1",)"
         R"("kind":{"group":"","version":"v1","kind":"Pod"},"namespace":"eq1","operation":"CREATE",)" +
         request_extra + R"("object":{"apiVersion":"v1","kind":"Pod","metadata":)" + metadata +
         R"(,"spec":)" + spec + "}}}";
}

// Admits every pod it is asked about at 1000 ms, recording what it was asked.
struct AdmitAll {
  std::vector<Pod> asked;
  PodMutationOptions Options() {
    PodMutationOptions o = pod_mutation_test::Options();
    o.admit_at_creation = [this](Pod pod) {
      asked.push_back(pod);
      return CreationAdmission{CreationAdmission::Verdict::kAdmit, 1000, "1970-01-01T00:00:01.000Z",
                               ""};
    };
    return o;
  }
};

TEST_CASE("mutate: a pod admitted at creation gets admitted-at instead of the gate",
          "[config][admit-at-creation]") {
  AdmitAll admit;
  Answer a = Mutate(ReviewOf(R"({"generateName":"w-"})", R"({"containers":[{"name":"c"}]})"),
                    admit.Options());
  REQUIRE(a.status.ok());
  CHECK_FALSE(a.decision.gated);
  CHECK(a.decision.admitted);
  CHECK(
      a.decision.patch ==
      R"([{"op":"add","path":"/metadata/annotations","value":{"scheduling.capacity-extender.io/admitted-at":"1970-01-01T00:00:01.000Z"}}])");
  CHECK(a.response["response"]["patchType"].GetString() == std::string("JSONPatch"));
  REQUIRE(admit.asked.size() == 1);
  CHECK(admit.asked[0].ns == "eq1");  // the request's namespace: the object has none yet
  // Annotations present: the key is added to them, the others kept.
  a = Mutate(ReviewOf(R"({"name":"p","annotations":{"a":"b"}})", "{}"), admit.Options());
  CHECK(a.decision.admitted);
  CHECK(
      a.decision.patch ==
      R"([{"op":"add","path":"/metadata/annotations/scheduling.capacity-extender.io~1admitted-at","value":"1970-01-01T00:00:01.000Z"}])");
}

TEST_CASE("mutate: groups, other gates, claims and dry runs are gated without asking",
          "[config][admit-at-creation]") {
  struct Case {
    std::string body, why;
  } cases[] = {
      {ReviewOf(R"({"name":"p","labels":{"scheduling.x-k8s.io/pod-group":"g"}})", "{}"),
       "a member of a group"},
      {ReviewOf(R"({"name":"p","annotations":{"scheduling.capacity-extender.io/min-member":"3"}})",
                "{}"),
       "carries min-member"},
      {ReviewOf(R"({"name":"p"})", R"({"schedulingGates":[{"name":"example.com/other"}]})"),
       "has other scheduling gates"},
      {ReviewOf(R"({"name":"p"})",
                R"({"resourceClaims":[{"name":"gpu","source":{"resourceClaimName":"c"}}]})"),
       "has resource claims"},
      {ReviewOf(R"({"name":"p"})", "{}", R"("dryRun":true,)"), "a dry run"},
  };
  for (const auto& c : cases) {
    INFO(c.body);
    AdmitAll admit;
    Answer a = Mutate(c.body, admit.Options());
    REQUIRE(a.status.ok());
    CHECK(a.decision.gated);
    CHECK_FALSE(a.decision.admitted);
    CHECK(a.decision.why_not == c.why);
    CHECK(admit.asked.empty());
  }
}

TEST_CASE("mutate: admission at creation's verdicts: gate, and a re-invocation adds nothing",
          "[config][admit-at-creation]") {
  PodMutationOptions o = Options();
  CreationAdmission verdict{CreationAdmission::Verdict::kGate, 0, "", "2 pods wait in the queue"};
  o.admit_at_creation = [&verdict](Pod) { return verdict; };
  Answer a = Mutate(ReviewOf(R"({"name":"p"})", "{}"), o);
  CHECK(a.decision.gated);
  CHECK(a.decision.why_not == "2 pods wait in the queue");
  CHECK(a.decision.patch.find("schedulingGates") != std::string::npos);
  verdict = CreationAdmission{CreationAdmission::Verdict::kAlreadyAdmitted, 1000, "", ""};
  a = Mutate(ReviewOf(R"({"name":"p"})", "{}"), o);
  CHECK_FALSE(a.decision.gated);
  CHECK(a.decision.admitted);
  CHECK(a.decision.patch.empty());
  CHECK_FALSE(a.response["response"].HasMember("patch"));
  // Not asked at all where the gate rules say no (filter mode, another namespace).
  o.gating = false;
  a = Mutate(ReviewOf(R"({"name":"p"})", "{}"), o);
  CHECK_FALSE(a.decision.admitted);
  CHECK(a.decision.why_not == "admission mode is filter");
  // A malformed dryRun is the review's error, as any field.
  CHECK_FALSE(
      Mutate(ReviewOf(R"({"name":"p"})", "{}", R"("dryRun":"yes",)"), Options()).status.ok());
}

TEST_CASE("mutate: gateSchedulerNames splits on commas", "[config]") {
  CHECK(SplitSchedulerNames("a, b,,c ") == std::vector<std::string>{"a", "b", "c"});
  CHECK(SplitSchedulerNames("").empty());
}

}  // namespace
}  // namespace pod_mutation_test
}  // namespace capext
