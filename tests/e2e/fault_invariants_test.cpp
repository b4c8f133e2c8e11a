// The fault suite's invariant checker (fault_invariants.h, docs/faults.md#the-invariants) can
// fail: a hand-made clean run of the scenario passes, and the same run with each violation
// written into its log, final objects or samples is caught, naming what broke.
#include <algorithm>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "tests/e2e/fault_invariants.h"

namespace fault_invariants_test {
namespace {

using capext::test::CheckFaultRun;
using capext::test::FaultRun;
using capext::test::LoggedRequest;

const std::string kPods = "/api/v1/namespaces/";

LoggedRequest Evict(int64_t seq, const std::string& ns, const std::string& name, int status = 201) {
  return {seq, "POST", kPods + ns + "/pods/" + name + "/eviction", "", "{}", "x", status};
}
LoggedRequest Record(int64_t seq, const std::string& node,
                     const std::string& at = "2026-01-01T00:10:00Z") {
  return {seq,
          "PATCH",
          kPods + "eq2/pods/job-2",
          "",
          R"({"metadata":{"annotations":{"scheduling.capacity-extender.io/reclaim":")" + node +
              "@" + at + R"("}}})",
          "x",
          200};
}
LoggedRequest Bind(int64_t seq, const std::string& ns, const std::string& name,
                   const std::string& node) {
  return {seq,
          "POST",
          kPods + ns + "/pods/" + name + "/binding",
          "",
          R"({"apiVersion":"v1","kind":"Binding","metadata":{"name":")" + name +
              R"("},"target":{"kind":"Node","name":")" + node + R"("}})",
          "x",
          201};
}

// docs/faults.md's scenario after a clean reclaim: job-c then job-b evicted on n2, job-2 bound
// there 3 s after the server was back, job-b2 refused throughout; status.used recounted.
FaultRun CleanRun() {
  FaultRun run;
  run.pods = {
      {"eq1", "job-a", 2000, 0, "2026-01-01T00:00:00Z", "n1"},
      {"eq1", "job-b", 2000, 0, "2026-01-01T00:00:01Z", "n2"},
      {"eq2", "job-1", 3000, 0, "2026-01-01T00:00:02Z", "n1"},
      {"eq1", "job-c", 1000, 0, "2026-01-01T00:00:03Z", "n2"},
      {"eq1", "nb-a", 2000, 1000000, "2026-01-01T00:01:00Z", "n1"},
      {"eq1", "nb-b", 2000, 1000000, "2026-01-01T00:01:01Z", "n2"},
      {"eq2", "job-2", 6000, 0, "", ""},
      {"eq1", "job-b2", 2000, 0, "", ""},
  };
  run.quotas = {{"eq1", 10000}, {"eq2", 14000}};
  run.log = {Record(10, "n2"), Evict(11, "eq1", "job-c"), Evict(12, "eq1", "job-b"),
             Bind(20, "eq2", "job-2", "n2")};
  run.final_pods = {{"eq1", "job-a", "n1", 2000}, {"eq2", "job-1", "n1", 3000},
                    {"eq1", "nb-a", "n1", 2000},  {"eq1", "nb-b", "n2", 2000},
                    {"eq2", "job-2", "n2", 6000}, {"eq1", "job-b2", "", 2000}};
  run.final_quotas = {{"eq1", 6000}, {"eq2", 9000}};
  run.back_at_s = 100;
  run.converge_bound_s = 8;
  run.pending = {
      {"eq2/job-2",
       "bound:n2",
       99,
       {{100.5, "refused"}, {102.9, "passes:n2"}, {103, "bound:n2"}, {104, "bound:n2"}}},
      {"eq1/job-b2", "refused", 99, {{100.5, "refused"}, {103, "refused"}, {104, "refused"}}},
  };
  return run;
}

std::string Joined(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v)
    out += s + "\n";
  return out;
}

// Exactly one violation, containing each of `parts`.
void CaughtOnce(const FaultRun& run, std::initializer_list<const char*> parts) {
  const std::vector<std::string> violations = CheckFaultRun(run);
  INFO(Joined(violations));
  REQUIRE(violations.size() == 1);
  for (const char* part : parts)
    CHECK(violations[0].find(part) != std::string::npos);
}

TEST_CASE("fault invariants: a clean run of the scenario passes", "[e2e][faults]") {
  const FaultRun run = CleanRun();
  const std::vector<std::string> violations = CheckFaultRun(run);
  INFO(Joined(violations));
  CHECK(violations.empty());
}

TEST_CASE("fault invariants: each violation is caught", "[e2e][faults]") {
  SECTION("a pod evicted twice (a second 201; a refused or unanswered try does not count)") {
    FaultRun run = CleanRun();
    run.log.insert(run.log.begin() + 1, Evict(9, "eq1", "job-c", 0));
    run.log.insert(run.log.begin() + 1, Evict(8, "eq1", "job-c", 429));
    CHECK(CheckFaultRun(run).empty());
    run.log.push_back(Evict(21, "eq1", "job-c"));
    CaughtOnce(run, {"eq1/job-c evicted twice", "11 and 21"});
  }
  SECTION("evictions out of victim order: the earlier-started job-b before job-c") {
    FaultRun run = CleanRun();
    std::swap(run.log[1].path, run.log[2].path);
    CaughtOnce(run,
               {"out of victim order on n2", "eq1/job-c", "after the more important eq1/job-b"});
  }
  SECTION("evictions out of victim order: a NoteBook before a job") {
    FaultRun run = CleanRun();
    run.log = {Record(10, "n2"), Evict(11, "eq1", "nb-b"), Evict(12, "eq1", "job-c"),
               Bind(20, "eq2", "job-2", "n2")};
    run.final_pods[3] = {"eq1", "job-b", "n2", 2000};
    CaughtOnce(run,
               {"eq1/job-c (priority 0", "after the more important eq1/nb-b (priority 1000000"});
  }
  SECTION("a new reclaim record starts a new order: the same pods under two records pass") {
    FaultRun run = CleanRun();
    run.log = {Record(10, "n2"), Evict(11, "eq1", "job-b"),
               Record(12, "n2", "2026-01-01T00:10:05Z"), Evict(13, "eq1", "job-c"),
               Bind(20, "eq2", "job-2", "n2")};
    CHECK(CheckFaultRun(run).empty());
  }
  SECTION("a quota over max: eq1's job-b2 bound before the reclaim (9 + 2 > 10)") {
    FaultRun run = CleanRun();
    run.log.insert(run.log.begin(), Bind(5, "eq1", "job-b2", "n2"));
    run.final_pods.back().node = "n2";
    run.final_quotas[0].used_cpu_milli = 8000;
    run.pending[1].samples.back().verdict = "bound:n2";
    run.pending[1].final_verdict = "bound:n2";
    CaughtOnce(run, {"quota eq1 over max after request 5", "used 11 > max 10"});
  }
  SECTION("a quota over max in the final objects") {
    FaultRun run = CleanRun();
    run.quotas[1].max_cpu_milli = 8000;
    const std::vector<std::string> v = CheckFaultRun(run);
    INFO(Joined(v));
    REQUIRE(v.size() == 2);  // the replay at the binding, and the final objects
    CHECK(v[0].find("quota eq2 over max after request 20") != std::string::npos);
    CHECK(v[1].find("quota eq2 over max in the final objects: bound pods 9 > max 8") !=
          std::string::npos);
  }
  SECTION("status.used off the recount, or missing") {
    FaultRun run = CleanRun();
    run.final_quotas[1].used_cpu_milli = 3000;
    CaughtOnce(run, {"quota eq2: status.used cpu 3 but its bound pods request 9"});
    run.final_quotas[1].used_cpu_milli.reset();
    CaughtOnce(run, {"quota eq2: status.used cpu absent but its bound pods request 9"});
    run.final_quotas[1].used_cpu_milli = 9000;
    run.final_pods[4].terminating = true;  // a terminating pod no longer counts
    CaughtOnce(run, {"quota eq2: status.used cpu 9 but its bound pods request 3"});
  }
  SECTION("a verdict never reached") {
    FaultRun run = CleanRun();
    run.pending[0].samples.resize(2);
    CaughtOnce(run, {"eq2/job-2 never reached its verdict 'bound:n2': last seen 'passes:n2'"});
    run.pending[0].samples.clear();
    CaughtOnce(run, {"eq2/job-2 never reached", "last seen 'nothing'"});
  }
  SECTION("a verdict reached too late, or lost after it was reached") {
    FaultRun run = CleanRun();
    run.pending[1].samples = {{100.5, "refused"}, {105, "passes:n2"}, {108.6, "refused"}};
    CaughtOnce(run, {"eq1/job-b2 reached 'refused' 8.60 s after the server was back"});
    // Measured from the pod's creation when that is later than the server's return.
    run.pending[1].created_at_s = 101;
    CHECK(CheckFaultRun(run).empty());
  }
}

TEST_CASE("fault invariants: the double's log and objects parse", "[e2e][faults]") {
  const auto log = capext::test::ParseDoubleRequests(
      R"({"requests":[{"seq":3,"method":"POST","path":"/p","query":"","body":"{}",)"
      R"("user_agent":"ua","status":201,"arrived":1.0,"answered":1.1,"at":1.2,"content_type":""}]})",
      40);
  REQUIRE(log.size() == 1);
  CHECK(log[0].seq == 43);
  CHECK(log[0].status == 201);
  const auto pods = capext::test::ParseDoublePods(
      R"({"items":[{"metadata":{"namespace":"eq1","name":"a","deletionTimestamp":"x"},)"
      R"("spec":{"nodeName":"n1","containers":[{"resources":{"requests":{"cpu":"1500m"}}},)"
      R"({"resources":{"requests":{"cpu":"0.5"}}}]},"status":{"phase":"Running"}}]})");
  REQUIRE(pods.size() == 1);
  CHECK(pods[0].cpu_milli == 2000);
  CHECK(pods[0].terminating);
  CHECK(pods[0].node == "n1");
  const auto quotas = capext::test::ParseDoubleQuotas(
      R"({"items":[{"metadata":{"namespace":"eq1"},"status":{"used":{"cpu":"6"}}},)"
      R"({"metadata":{"namespace":"eq2"}}]})");
  REQUIRE(quotas.size() == 2);
  CHECK(quotas[0].used_cpu_milli == 6000);
  CHECK_FALSE(quotas[1].used_cpu_milli.has_value());
  CHECK(capext::test::ParseCpuMilli("2x") == std::nullopt);
}

}  // namespace
}  // namespace fault_invariants_test
