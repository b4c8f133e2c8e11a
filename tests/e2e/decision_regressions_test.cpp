// Fixed regression cases of the decision engine's differential test (decision_paths.h): the case
// that motivated issue 11, and every disagreement the generated clusters found. Each case is
// asserted twice: every path agrees (CompareDecisionPaths), and the verbs give the right answer.
#include <rapidjson/document.h>

#include <string>
#include <vector>

#include <fmt/format.h>
#include <catch2/catch.hpp>

#include "core/placement_search.h"
#include "core/preemption.h"
#include "core/reasons.h"
#include "core/reclaim_planner.h"
#include "extender/embedded/embedded_binder.h"
#include "extender/verbs/extender_service.h"
#include "tests/e2e/decision_paths.h"
#include "tests/support/builders.h"
#include "tests/support/cluster_case.h"

namespace capext::testing {
namespace decision_regressions_test {
namespace {

JsonTree Node(const std::string& name, const std::string& cpu) {
  JsonTree n = JsonTree::Object();
  n["apiVersion"] = "v1";
  n["kind"] = "Node";
  n["metadata"]["name"] = name;
  n["status"]["allocatable"]["cpu"] = cpu;
  n["status"]["allocatable"]["pods"] = "110";
  return n;
}

JsonTree Quota(const std::string& ns, const std::string& min_cpu, const std::string& max_cpu) {
  JsonTree q = JsonTree::Object();
  q["apiVersion"] = "scheduling.x-k8s.io/v1alpha1";
  q["kind"] = "ElasticQuota";
  q["metadata"]["name"] = ns;
  q["metadata"]["namespace"] = ns;
  q["spec"]["min"]["cpu"] = min_cpu;
  q["spec"]["max"]["cpu"] = max_cpu;
  return q;
}

JsonTree PendingPod(const std::string& ns, const std::string& name, int priority,
                    const std::string& cpu, const std::string& nominated = "",
                    const std::string& memory = "") {
  JsonTree p = JsonTree::Object();
  p["apiVersion"] = "v1";
  p["kind"] = "Pod";
  p["metadata"]["name"] = name;
  p["metadata"]["namespace"] = ns;
  p["metadata"]["uid"] = "uid-" + name;
  p["metadata"]["creationTimestamp"] = "2026-01-01T00:00:00Z";
  p["spec"]["priority"] = priority;
  JsonTree c = JsonTree::Object();
  c["name"] = "c";
  c["resources"]["requests"]["cpu"] = cpu;
  if (!memory.empty()) c["resources"]["requests"]["memory"] = memory;
  p["spec"]["containers"].Push(std::move(c));
  p["status"]["phase"] = "Pending";
  if (!nominated.empty()) p["status"]["nominatedNodeName"] = nominated;
  return p;
}

// What /filter and /bind of a real service answer for `pod` on `node`.
struct VerbAnswers {
  std::string filter;  // "pass", or the FailedNodes / FailedAndUnresolvableNodes reason
  std::string bind;    // the bind answer's Error
};

VerbAnswers AskVerbs(const ClusterCase& c, const JsonTree& pod, const std::string& node) {
  SchedulerCache cache(c.semantics, c.decode_options(), [] { return int64_t{1'800'000'000'000}; });
  cache.set_ready(true);
  ClusterState state;
  REQUIRE(BuildState(c, &state).ok());
  cache.Write([&](ClusterState& s) {
    s = state;
    return 0;
  });
  Metrics metrics;
  EmbeddedBinder binder(&cache);
  ExtenderService service(&cache, &metrics, NodeScoring::kLeastAllocated,
                          PriorityThenStartTimeOrder(), &binder, {});
  VerbAnswers out;
  std::string body =
      fmt::format(R"({{"Pod":{},"Nodes":null,"NodeNames":["{}"]}})", pod.ToJson(), node);
  rapidjson::Document doc;
  doc.Parse(service.Filter(body).body.c_str());
  REQUIRE(doc.IsObject());
  out.filter = "pass";
  for (const char* map : {"FailedNodes", "FailedAndUnresolvableNodes"}) {
    if (doc[map].IsObject() && doc[map].HasMember(node.c_str()))
      out.filter = doc[map][node.c_str()].GetString();
  }
  const JsonTree& meta = *pod.Find("metadata");
  std::string bind = fmt::format(
      R"({{"PodName":"{}","PodNamespace":"{}","PodUID":"{}","Node":"{}"}})",
      meta.Find("name")->str(), meta.Find("namespace")->str(), meta.Find("uid")->str(), node);
  service.Bind(bind, [&](http::Response r) {
    rapidjson::Document answer;
    answer.Parse(r.body.c_str());
    out.bind = answer["Error"].GetString();
  });
  return out;
}

void RequireAgreement(const ClusterCase& c, const JsonTree& question) {
  for (uint64_t seed = 0; seed < 16; ++seed) {
    for (const Disagreement& d : CompareDecisionPaths(c, question, seed)) {
      INFO("seed " << seed << ": " << d.path << ": " << d.detail);
      CHECK(false);
    }
  }
}

// The snapshot of issue 11: node n1 (8 cpu); eq1 {min cpu 4, max cpu 4}; a pending eq1/low
// (priority 0, cpu 2) nominated to n1.
ClusterCase Issue11Case(QuotaSemantics semantics) {
  ClusterCase c;
  c.semantics = semantics;
  c.objects = {Node("n1", "8"), Quota("eq1", "4", "4"), PendingPod("eq1", "low", 0, "2", "n1")};
  return c;
}

// Found by the differential test (seed 37): a node whose bound pods request ephemeral-storage it
// does not have (a snapshot may say so), and a pod requesting only cpu and memory.
ClusterCase OvercommittedCase() {
  ClusterCase c;
  JsonTree node = Node("n4", "16");
  node["status"]["allocatable"]["memory"] = "64Gi";
  JsonTree bound = PendingPod("f1", "disk", 0, "250m", "", "1Gi");
  bound["spec"].Erase("containers");
  JsonTree main = JsonTree::Object();
  main["name"] = "main";
  main["resources"]["requests"]["cpu"] = "250m";
  main["resources"]["requests"]["ephemeral-storage"] = "1Gi";
  bound["spec"]["containers"].Push(std::move(main));
  bound["spec"]["nodeName"] = "n4";
  bound["status"]["phase"] = "Running";
  c.objects = {node, bound};
  return c;
}

// Found by the differential test's tree checks (seed 312, reduced): team/team {min cpu 4} has a
// child a1/a1 {min cpu 4}, so team's own namespace has a min of 0; other/other {min cpu 2} is
// another root, borrowing with a terminating pod of 3 cpu on n1. A pod of team's own namespace
// nominated to n1 asks again.
ClusterCase TerminatingCousinCase(const std::string& terminating_cpu) {
  ClusterCase c;
  JsonTree child = Quota("a1", "4", "8");
  child["metadata"]["annotations"][kParentQuotaAnnotation] = "team/team";
  JsonTree x = PendingPod("other", "x", 0, terminating_cpu);
  x["spec"]["nodeName"] = "n1";
  x["status"]["phase"] = "Running";
  x["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:05Z";
  c.objects = {Node("n1", "8"), Quota("team", "4", "8"), child, Quota("other", "2", "8"), x};
  return c;
}

JsonTree BoundPod(const std::string& ns, const std::string& name, int priority,
                  const std::string& cpu, const std::string& node, const std::string& start) {
  JsonTree p = PendingPod(ns, name, priority, cpu);
  p["spec"]["nodeName"] = node;
  p["status"]["phase"] = "Running";
  p["status"]["startTime"] = start;
  return p;
}

// Issue 18, point 2 (docs/capacity-semantics.md#6-accounting-used-reservations-nominations, worked
// there): seed 002 after its first five events while /bind is placing eq1/job-b2 (priority 0, 2
// cpu) on n2; eq2/job-2 (5 cpu) then needs room. job-b2 was created first (it waited) but is
// reserved at 00:03:00, after every pod started.
ClusterCase Seed002WithBindInFlight() {
  ClusterCase c;
  c.objects = {Node("n1", "8"),
               Node("n2", "8"),
               Quota("eq1", "6", "10"),
               Quota("eq2", "12", "14"),
               BoundPod("eq1", "job-a", 0, "2", "n1", "2026-01-01T00:00:01Z"),
               BoundPod("eq1", "job-b", 0, "2", "n2", "2026-01-01T00:00:02Z"),
               BoundPod("eq2", "job-1", 0, "3", "n1", "2026-01-01T00:00:03Z"),
               BoundPod("eq1", "nb-a", 1000000, "2", "n1", "2026-01-01T00:01:00Z"),
               BoundPod("eq1", "nb-b", 1000000, "2", "n2", "2026-01-01T00:01:01Z"),
               PendingPod("eq1", "job-b2", 0, "2")};
  c.held.push_back({HeldRoom::Kind::kReservation, "uid-job-b2", "n2",
                    1'767'225'600'000 + 180'000});  // 2026-01-01T00:03:00Z
  return c;
}

// The question pod decoded from its JSON and normalised by `state`.
NormalizedPod NormalizedQuestion(const ClusterState& state, const JsonTree& pod) {
  Pod raw;
  rapidjson::Document doc;
  const std::string json = pod.ToJson();
  doc.Parse(json.c_str());
  REQUIRE(DecodePod(doc, {}, &raw).ok());
  return state.Normalize(raw);
}

PreemptionPlan PreemptionOf(const ClusterCase& c, const JsonTree& pod) {
  ClusterState state(c.semantics);
  REQUIRE(BuildState(c, &state).ok());
  const NormalizedPod normalized = NormalizedQuestion(state, pod);
  return FindPreemption(state, normalized, PriorityThenStartTimeOrder());
}

}  // namespace

TEST_CASE(
    "quota trees: a terminating pod that the tree's victim rule would take blocks preempting "
    "again",
    "[difftest][regression]") {
  // Before the fix, eligibility used the flat rule: the preemptor's own leaf (team's own
  // namespace, min 0) is above its min, so other's pods were not victims. In the tree the rule
  // is decided where the two sides meet (the virtual root): team, used 0 + 1 within its min 4,
  // may take from other, which borrows (3 > 2): x is already making room, so wait for it.
  const JsonTree p = PendingPod("team", "p", 0, "1", "n1");
  const ClusterCase borrowing = TerminatingCousinCase("3");
  RequireAgreement(borrowing, p);
  const PreemptionPlan plan = PreemptionOf(borrowing, p);
  CHECK(plan.outcome == PreemptionPlan::Outcome::kNotEligible);
  CHECK(plan.why.message() == reasons::kTerminatingVictimOnNominatedNode);
  // other within its min: x would not be a victim, so preempting may go on.
  const ClusterCase within = TerminatingCousinCase("2");
  RequireAgreement(within, p);
  CHECK(PreemptionOf(within, p).outcome != PreemptionPlan::Outcome::kNotEligible);
}

TEST_CASE("a node overcommitted on a resource the pod does not request still fits it",
          "[difftest][regression]") {
  const ClusterCase c = OvercommittedCase();
  const JsonTree pod = PendingPod("q4", "p-8", 0, "1", "", "128Mi");
  RequireAgreement(c, pod);
  const VerbAnswers a = AskVerbs(c, pod, "n4");
  CHECK(a.filter == "pass");
  CHECK(a.bind == "");
  // The simulator's placement (and FindPlacement) chose no node before the fix.
  ClusterState state;
  REQUIRE(BuildState(c, &state).ok());
  const NormalizedPod normalized = NormalizedQuestion(state, pod);
  CHECK(FindPlacement(state, normalized, {}).best == 0);
  state.EnableDenseNodes({});
  DensePlacement dense(state);
  CHECK(dense.Find(normalized, {}).best == 0);
}

TEST_CASE("issue 11: a lower-priority nomination counts neither in /filter nor in /bind",
          "[difftest][regression]") {
  for (const QuotaSemantics semantics :
       {QuotaSemantics::kCapacityExtender, QuotaSemantics::kSchedulerPlugins}) {
    const ClusterCase c = Issue11Case(semantics);
    SECTION("priority 1000 fits: the nomination has lower priority") {
      const JsonTree high = PendingPod("eq1", "high", 1000, "3");
      RequireAgreement(c, high);
      const VerbAnswers a = AskVerbs(c, high, "n1");
      CHECK(a.filter == "pass");
      CHECK(a.bind == "");
    }
    SECTION("priority 0 is rejected by both, with the nominated term in the reason") {
      const JsonTree peer = PendingPod("eq1", "peer", 0, "3");
      RequireAgreement(c, peer);
      const VerbAnswers a = AskVerbs(c, peer, "n1");
      CHECK(a.filter ==
            "pod eq1/peer rejected: ElasticQuota eq1/eq1 would exceed max: cpu used 0 + "
            "nominated 2 + request 3 > max 4");
      CHECK(a.bind == "capacity-extender: " + a.filter);
    }
    SECTION("the nominated pod itself is not counted twice") {
      const JsonTree low = PendingPod("eq1", "low", 0, "2", "n1");
      RequireAgreement(c, low);
      const VerbAnswers a = AskVerbs(c, low, "n1");
      CHECK(a.filter == "pass");
      CHECK(a.bind == "");
    }
  }
}

TEST_CASE(
    "issue 18: a pod whose bind is in flight is a victim like the pod bound; the NoteBook stays",
    "[difftest][regression][issue18]") {
  const ClusterCase c = Seed002WithBindInFlight();
  const JsonTree job2 = PendingPod("eq2", "job-2", 0, "5");
  // Every path agrees, the same state with job-b2 bound included ("reserved = bound").
  RequireAgreement(c, job2);
  ClusterState state;
  REQUIRE(BuildState(c, &state).ok());
  const NormalizedPod pod = NormalizedQuestion(state, job2);
  // Before the fix the reservation was room on n2 but not a pod there: the plan was job-b and
  // the NoteBook nb-b.
  const ReclaimPlanForPod plan = PlanReclaim(state, pod, PriorityThenStartTimeOrder(), {});
  REQUIRE(plan.decision == ReclaimDecision::kEvict);
  CHECK(plan.node == "n2");
  CHECK(KeysOf(plan.victims) == std::vector<std::string>{"eq1/job-b", "eq1/job-b2"});
  // /preempt names the reserved pod too (kube-scheduler holds it as assumed on n2).
  SchedulerCache cache(c.semantics, c.decode_options(), [] { return int64_t{1'800'000'000'000}; });
  cache.set_ready(true);
  cache.Write([&](ClusterState& s) {
    s = state;
    return 0;
  });
  Metrics metrics;
  EmbeddedBinder binder(&cache);
  ExtenderService service(&cache, &metrics, NodeScoring::kLeastAllocated,
                          PriorityThenStartTimeOrder(), &binder, {});
  std::string body = fmt::format(
      R"({{"Pod":{},"NodeNameToMetaVictims":{{"n1":{{"Pods":[]}},"n2":{{"Pods":[]}}}}}})",
      job2.ToJson());
  rapidjson::Document doc;
  doc.Parse(service.Preempt(body).body.c_str());
  REQUIRE(doc.IsObject());
  INFO(body);
  REQUIRE(doc["NodeNameToMetaVictims"].HasMember("n2"));
  std::vector<std::string> uids;
  for (const auto& v : doc["NodeNameToMetaVictims"]["n2"]["Pods"].GetArray())
    uids.push_back(v["UID"].GetString());
  CHECK(uids == std::vector<std::string>{"uid-job-b", "uid-job-b2"});
}

}  // namespace decision_regressions_test
}  // namespace capext::testing
