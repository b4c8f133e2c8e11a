// The fault suite (docs/faults.md#the-faults): one reclaim scenario of seed-002's shape, run once
// under each fault on the API-server TEST DOUBLE (tests/apiserver_double/apiserver_double.py), with
// the real `capacity-extender serve` in live mode and the test playing kube-scheduler (/filter,
// then /bind of the first node that passes, every 150 ms). After each run the invariant checker
// (fault_invariants.h) judges the double's request log and final objects: no pod evicted twice,
// evictions least important first, no quota over max, every pending pod's verdict converged
// within 8 s of the server being back, status.used equal to a recount. The parameters are fixed
// (the fault rules' counts and the victim the restart interrupts come from the docs' table), so a
// run is reproducible up to thread timing; each case prints one line of what it saw for the
// closing table (`e2e_tests "[fault-suite]" -s`).
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <chrono>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "tests/e2e/fault_invariants.h"
#include "tests/support/apiserver_double_process.h"
#include "tests/support/extender_process.h"
#include "tests/support/http_client.h"
#include "tests/support/scheduler_leases.h"

namespace fault_suite_test {
namespace {

using capext::kube::RestResponse;
using capext::kube::testing::ApiServerDouble;
using capext::kube::testing::Eventually;
using capext::kube::testing::SchedulerLeases;
using capext::test::ExtenderProcess;
using capext::test::FaultRun;
using capext::test::LoggedRequest;
using capext::test::PendingExpectation;
using capext::test::ScenarioPod;
using capext::test::VerdictSample;
using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

constexpr char kToken[] = "fault-suite-token";
constexpr int kNotebook = 1000000;
// docs/faults.md#the-invariants, 4: 3 s after the reclaim's own backoff, which is 5 s after one
// failed attempt and 10 s after the second in a row.
constexpr double kConvergeBoundS = 8;
constexpr double kConvergeBoundAfterTwoFailuresS = 13;

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

double Seconds(Clock::time_point t) {
  return std::chrono::duration<double>(t.time_since_epoch()).count();
}

// docs/faults.md#the-scenario.
const std::vector<ScenarioPod>& RunningPods() {
  static const std::vector<ScenarioPod> pods = {
      {"eq1", "job-a", 2000, 0, "2026-01-01T00:00:00Z", "n1"},
      {"eq1", "job-b", 2000, 0, "2026-01-01T00:00:01Z", "n2"},
      {"eq2", "job-1", 3000, 0, "2026-01-01T00:00:02Z", "n1"},
      {"eq1", "job-c", 1000, 0, "2026-01-01T00:00:03Z", "n2"},
      {"eq1", "nb-a", 2000, kNotebook, "2026-01-01T00:01:00Z", "n1"},
      {"eq1", "nb-b", 2000, kNotebook, "2026-01-01T00:01:01Z", "n2"},
  };
  return pods;
}
const std::vector<ScenarioPod>& PendingPods() {
  static const std::vector<ScenarioPod> pods = {
      {"eq2", "job-2", 6000, 0, "", ""},
      {"eq1", "job-b2", 2000, 0, "", ""},
  };
  return pods;
}
const std::vector<std::pair<std::string, std::string>> kExpectedVerdicts = {
    {"eq2/job-2", "bound:n2"}, {"eq1/job-b2", "refused"}};

std::string NodeJson(const std::string& name, bool tainted = false) {
  return R"({"apiVersion":"v1","kind":"Node","metadata":{"name":")" + name +
         R"(","labels":{"kubernetes.io/hostname":")" + name + R"("}},"spec":{)" +
         (tainted
              ? R"("taints":[{"key":"node-role.kubernetes.io/control-plane","effect":"NoSchedule"}])"
              : "") +
         R"(},"status":{"allocatable":{"cpu":"8","memory":"32Gi","pods":"110"},)"
         R"("capacity":{"cpu":"8","memory":"32Gi","pods":"110"},)"
         R"("conditions":[{"type":"Ready","status":"True"}]}})";
}

std::string QuotaJson(const std::string& ns, int min, int max) {
  return R"({"apiVersion":"scheduling.x-k8s.io/v1alpha1","kind":"ElasticQuota","metadata":{"name":")" +
         ns + R"(","namespace":")" + ns + R"("},"spec":{"min":{"cpu":")" + std::to_string(min) +
         R"("},"max":{"cpu":")" + std::to_string(max) + R"("}}})";
}

// A running pod, or a pending one kube-scheduler marked unschedulable.
std::string PodJson(const ScenarioPod& p) {
  std::string spec =
      R"("containers":[{"name":"c","image":"nginx","resources":{"requests":{"cpu":")" +
      std::to_string(p.cpu_milli) + R"(m"}}}])";
  if (!p.node.empty()) spec += R"(,"nodeName":")" + p.node + R"(")";
  if (p.priority == kNotebook) spec += R"(,"priorityClassName":"notebook","priority":1000000)";
  const std::string status =
      p.node.empty()
          ? R"({"phase":"Pending","conditions":[{"type":"PodScheduled","status":"False",)"
            R"("reason":"Unschedulable","message":"0/3 nodes are available"}]})"
          : R"({"phase":"Running","startTime":")" + p.start +
                R"(","conditions":[{"type":"PodScheduled","status":"True"}]})";
  return R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":")" + p.name + R"(","namespace":")" +
         p.ns + R"("},"spec":{)" + spec + R"(},"status":)" + status + "}";
}

std::string Serialize(const rapidjson::Value& v) {
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
  v.Accept(writer);
  return buffer.GetString();
}

std::string StringAt(const rapidjson::Value& v, std::initializer_list<const char*> path) {
  const rapidjson::Value* at = &v;
  for (const char* key : path) {
    if (!at->IsObject() || !at->HasMember(key)) return "";
    at = &(*at)[key];
  }
  return at->IsString() ? at->GetString() : "";
}

bool IsList(const LoggedRequest& r) {
  return r.method == "GET" && r.path.rfind("/api", 0) == 0;
}
bool IsEviction(const LoggedRequest& r) {
  return r.method == "POST" && Contains(r.path, "/eviction");
}
bool IsRecordOrNudge(const LoggedRequest& r) {
  return r.method == "PATCH" && r.path == "/api/v1/namespaces/eq2/pods/job-2";
}
// "/api/v1/namespaces/eq1/pods/job-c/eviction" -> "eq1/job-c".
std::string PodOf(const std::string& path) {
  const std::string rest = path.substr(std::string("/api/v1/namespaces/").size());
  const std::size_t pods = rest.find("/pods/");
  const std::size_t name_end = rest.find('/', pods + 6);
  return rest.substr(0, pods) + "/" +
         rest.substr(pods + 6,
                     name_end == std::string::npos ? std::string::npos : name_end - pods - 6);
}

// One run of the scenario: the double, the extender(s), the test's kube-scheduler, the log.
class FaultScenario {
 public:
  FaultScenario() : api_(Options()) {
    INFO(api_.error());
    REQUIRE(api_.started());
    kubeconfig_ = dir_.Write("kubeconfig", api_.KubeconfigText());
    auto create = [&](const std::string& collection, const std::string& json) {
      RestResponse r = api_.ControlClient()->Post(collection, json);
      INFO(collection << " " << r.status << " " << r.body);
      REQUIRE(r.status == 201);
    };
    create("/api/v1/nodes", NodeJson("n1"));
    create("/api/v1/nodes", NodeJson("n2"));
    create("/api/v1/nodes", NodeJson("master", true));
    create("/apis/scheduling.k8s.io/v1/priorityclasses",
           R"({"apiVersion":"scheduling.k8s.io/v1","kind":"PriorityClass","metadata":)"
           R"({"name":"notebook"},"value":1000000,"preemptionPolicy":"Never"})");
    const std::string eq = "/apis/scheduling.x-k8s.io/v1alpha1/namespaces/";
    create(eq + "eq1/elasticquotas", QuotaJson("eq1", 4, 10));
    create(eq + "eq2/elasticquotas", QuotaJson("eq2", 12, 14));
    for (const auto& p : RunningPods())
      create("/api/v1/namespaces/" + p.ns + "/pods", PodJson(p));
    REQUIRE(api_.ControlClient()->Post("/_double/requests/clear", "{}").status == 200);
  }
  static ApiServerDouble::Options Options() {
    ApiServerDouble::Options options;
    options.token = kToken;
    return options;
  }

  std::vector<std::string> Args(const std::vector<std::string>& more = {}) const {
    std::vector<std::string> args = {"--kubeconfig",
                                     kubeconfig_,
                                     "--reclaim-interval",
                                     "200ms",
                                     "--status-update-interval",
                                     "200ms",
                                     "--max-out-of-sync",
                                     "1s",
                                     "--watch-idle-timeout",
                                     "3s"};
    args.insert(args.end(), more.begin(), more.end());
    return args;
  }
  // Starts one more extender and waits for its /readyz.
  ExtenderProcess& StartExtender(const std::vector<std::string>& more = {}) {
    extenders_.push_back(std::make_unique<ExtenderProcess>());
    ExtenderProcess& e = *extenders_.back();
    const bool started = e.Start(Args(more));
    INFO(e.error());
    REQUIRE(started);
    const bool ready = Eventually([&] { return Get(e, "/readyz").status == 200; }, 10s);
    INFO(e.Log());
    REQUIRE(ready);
    return e;
  }
  static capext::test::ClientResponse Get(ExtenderProcess& e, const std::string& target) {
    return capext::test::Fetch("127.0.0.1", e.port(), "GET", target);
  }

  // Fault rules and controls of the double (docs in its docstring).
  void Control(const std::string& name, const std::string& body) {
    const std::string answer = api_.Control(name, body);
    INFO(name << " " << body);
    REQUIRE_FALSE(answer.empty());
  }
  // The pending pods, as kube-scheduler left them, through the control endpoint (never logged
  // or faulted: a fault rule is the extender's to meet).
  void CreatePending() {
    std::string items;
    for (const auto& p : PendingPods())
      items += (items.empty() ? "" : ",") + PodJson(p);
    RestResponse r = api_.ControlClient()->Post("/_double/create_many",
                                                R"({"resource":"pods","items":[)" + items + "]}");
    INFO(r.body);
    REQUIRE(r.status == 201);
    created_at_ = Clock::now();
  }

  std::vector<LoggedRequest> Log() {
    std::vector<LoggedRequest> log = earlier_log_;
    for (auto& r : capext::test::ParseDoubleRequests(api_.ControlGet("requests"), seq_offset_))
      log.push_back(std::move(r));
    return log;
  }
  int64_t LastSeq() {
    const auto log = Log();
    return log.empty() ? 0 : log.back().seq;
  }
  // Waits until `n` requests after `since` match `match` (a fault rule's requests: once they
  // were answered, the rule is spent); returns when, or fails.
  Clock::time_point WaitForRequests(int64_t since, int n,
                                    const std::function<bool(const LoggedRequest&)>& match,
                                    std::chrono::milliseconds timeout = 20s) {
    const bool seen = Eventually(
        [&] {
          int count = 0;
          for (const auto& r : Log())
            count += r.seq > since && match(r) ? 1 : 0;
          return count >= n;
        },
        timeout);
    INFO(ExtenderLogs() << "--- requests after " << since << ":\n" << Requests(since));
    REQUIRE(seen);
    return Clock::now();
  }

  // Kills the double (SIGKILL) and starts it again `down` later from its saved objects, with
  // resourceVersion moved on: every watch gets 410. The log so far is kept.
  Clock::time_point KillAndRestart(std::chrono::milliseconds down) {
    earlier_log_ = Log();
    seq_offset_ = earlier_log_.empty() ? 0 : earlier_log_.back().seq;
    const std::string state = api_.Save();
    REQUIRE_FALSE(state.empty());
    api_.Crash();
    std::this_thread::sleep_for(down);
    REQUIRE(api_.Revive(state, 0, 5));
    return Clock::now();
  }

  // kube-scheduler for the pending pods, through the extender `scheduler_of()` names (the
  // leader's sidecar): one pass of /filter then /bind; samples what it saw.
  void SchedulePass(ExtenderProcess& e) {
    rapidjson::Document objects;
    objects.Parse(api_.ControlGet("objects?resource=pods").c_str());
    if (objects.HasParseError() || !objects.IsObject()) return;  // the double is down
    const double now = Seconds(Clock::now());
    for (const auto& item : objects["items"].GetArray()) {
      const std::string key =
          StringAt(item, {"metadata", "namespace"}) + "/" + StringAt(item, {"metadata", "name"});
      auto pending = samples_.find(key);
      if (pending == samples_.end()) continue;
      const std::string node = StringAt(item, {"spec", "nodeName"});
      if (!node.empty()) {
        pending->second.push_back({now, "bound:" + node});
        continue;
      }
      const std::string filter = capext::test::Fetch("127.0.0.1", e.port(), "POST", "/filter",
                                                     R"({"Pod":)" + Serialize(item) +
                                                         R"(,"NodeNames":["n1","n2","master"]})")
                                     .body;
      rapidjson::Document answer;
      answer.Parse(filter.c_str());
      std::vector<std::string> passed;
      if (answer.IsObject() && answer.HasMember("NodeNames") && answer["NodeNames"].IsArray())
        for (const auto& n : answer["NodeNames"].GetArray())
          passed.emplace_back(n.GetString());
      if (!StringAt(answer, {"Error"}).empty()) {
        pending->second.push_back({now, "error"});
        continue;
      }
      if (passed.empty()) {
        pending->second.push_back({now, "refused"});
        continue;
      }
      std::string list;
      for (const auto& n : passed)
        list += (list.empty() ? "" : ",") + n;
      pending->second.push_back({now, "passes:" + list});
      capext::test::Fetch("127.0.0.1", e.port(), "POST", "/bind",
                          R"({"PodName":")" + StringAt(item, {"metadata", "name"}) +
                              R"(","PodNamespace":")" + StringAt(item, {"metadata", "namespace"}) +
                              R"(","PodUID":")" + StringAt(item, {"metadata", "uid"}) +
                              R"(","Node":")" + passed.front() + R"("})");
    }
  }
  // Plays kube-scheduler until every pending pod shows its expected verdict for 1 s, or until
  // 4 s past the bound (a failing run then shows what it reached).
  void ScheduleUntilSettled(Clock::time_point back,
                            const std::function<ExtenderProcess&()>& scheduler_of,
                            double bound_s = kConvergeBoundS) {
    back_at_ = back;
    bound_s_ = bound_s;
    for (const auto& p : PendingPods())
      samples_[p.Key()];
    const Clock::time_point from = std::max(back, created_at_);
    const Clock::time_point deadline =
        from + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(bound_s)) +
        4s;
    Clock::time_point settled_since{};
    while (Clock::now() < deadline) {
      SchedulePass(scheduler_of());
      bool all = true;
      for (const auto& [key, verdict] : kExpectedVerdicts) {
        const auto& s = samples_[key];
        all = all && !s.empty() && s.back().verdict == verdict;
      }
      if (!all) settled_since = {};
      if (all && settled_since == Clock::time_point{}) settled_since = Clock::now();
      if (all && Clock::now() - settled_since >= 1s) break;
      std::this_thread::sleep_for(150ms);
    }
  }

  // Waits (at most 3 s) until status.used matches the bound pods, stops the extenders, and
  // checks every invariant over the log and the final objects.
  std::vector<std::string> Check(const std::string& fault) {
    auto final_run = [&] {
      FaultRun run;
      run.pods = RunningPods();
      for (const auto& p : PendingPods())
        run.pods.push_back(p);
      run.quotas = {{"eq1", 10000}, {"eq2", 14000}};
      run.final_pods = capext::test::ParseDoublePods(api_.ControlGet("objects?resource=pods"));
      run.final_quotas = capext::test::ParseDoubleQuotas(
          api_.ControlGet("objects?resource=elasticquotas&group=scheduling.x-k8s.io"));
      return run;
    };
    Eventually(
        [&] {
          FaultRun run = final_run();
          return capext::test::CheckFaultRun(run).empty();
        },
        3s);
    for (auto& e : extenders_)
      e->Stop();
    FaultRun run = final_run();
    run.log = Log();
    run.back_at_s = Seconds(back_at_);
    run.converge_bound_s = bound_s_;
    for (const auto& [key, verdict] : kExpectedVerdicts)
      run.pending.push_back({key, verdict, Seconds(created_at_), samples_[key]});

    // What the product did, for the closing table.
    std::string evicted;
    for (const auto& r : run.log)
      if (IsEviction(r)) evicted += " " + PodOf(r.path) + "=" + std::to_string(r.status);
    double bound_after = -1;
    for (const auto& s : samples_["eq2/job-2"])
      if (s.verdict == "bound:n2") {
        bound_after = s.at_s - std::max(Seconds(back_at_), Seconds(created_at_));
        break;
      }
    std::printf(
        "fault-suite | %s | evictions:%s | job-2 bound %.2f s after the server was back | "
        "%zu requests\n",
        fault.c_str(), evicted.c_str(), bound_after, run.log.size());
    return capext::test::CheckFaultRun(run);
  }
  // The evictions answered 2xx, in order, as "eq1/job-c eq1/job-b".
  std::vector<std::string> Evicted() {
    std::vector<std::string> out;
    for (const auto& r : Log())
      if (IsEviction(r) && r.status / 100 == 2) out.push_back(PodOf(r.path));
    return out;
  }
  // "seq method path?query status" per line, for a failure's message.
  std::string Requests(int64_t since) {
    std::string out;
    for (const auto& r : Log())
      if (r.seq > since)
        out += std::to_string(r.seq) + " " + r.method + " " + r.path + "?" + r.query + " " +
               std::to_string(r.status) + "\n";
    return out;
  }
  std::string ExtenderLogs() const {
    std::string out;
    for (const auto& e : extenders_)
      out += "--- extender log:\n" + e->Log();
    return out;
  }

  ApiServerDouble& api() { return api_; }
  ExtenderProcess& extender(std::size_t i = 0) { return *extenders_.at(i); }
  const std::string& kubeconfig() const { return kubeconfig_; }

 private:
  capext::kube::testing::TempDir dir_;
  ApiServerDouble api_;
  std::string kubeconfig_;
  std::vector<LoggedRequest> earlier_log_;  // before a restart
  int64_t seq_offset_ = 0;
  Clock::time_point created_at_{}, back_at_{};
  double bound_s_ = kConvergeBoundS;
  std::map<std::string, std::vector<VerdictSample>> samples_;
  std::vector<std::unique_ptr<ExtenderProcess>> extenders_;  // last: stopped before the double
};

void ExpectClean(FaultScenario& s, const std::string& fault) {
  const std::vector<std::string> violations = s.Check(fault);
  INFO(s.ExtenderLogs());
  for (const auto& v : violations)
    UNSCOPED_INFO(v);
  CHECK(violations.empty());
  // The scenario's plan (docs/faults.md): job-c, then job-b; never a NoteBook.
  CHECK(s.Evicted() == std::vector<std::string>{"eq1/job-c", "eq1/job-b"});
}

std::function<ExtenderProcess&()> First(FaultScenario& s) {
  return [&s]() -> ExtenderProcess& { return s.extender(0); };
}

TEST_CASE("fault suite: kill and restart mid-stream, an eviction in flight",
          "[e2e][faults][fault-suite]") {
  FaultScenario s;
  s.StartExtender();
  // Evictions wait 5 s in the double: the kill catches the first one unanswered.
  s.Control(
      "delay",
      R"({"ms":5000,"count":-1,"path_prefix":"/api/v1/namespaces/eq1/pods/","method":"POST"})");
  // Counted from before the pods exist: the reclaim's record may be written before CreatePending
  // returns.
  const int64_t since = s.LastSeq();
  s.CreatePending();
  s.WaitForRequests(since, 1, [](const LoggedRequest& r) {
    return IsRecordOrNudge(r) && Contains(r.body, "scheduling.capacity-extender.io/reclaim") &&
           r.status == 200;
  });
  std::this_thread::sleep_for(300ms);  // the first eviction is sent, and held by the delay
  const Clock::time_point back = s.KillAndRestart(1s);
  s.ScheduleUntilSettled(back, First(s));
  ExpectClean(s, "kill and restart mid-stream");
  // The unanswered first eviction evicted nothing: the log closes that reclaim before the next.
  CHECK(Contains(s.extender().Log(), "reclaim given up: its first eviction failed"));
}

TEST_CASE("fault suite: truncated list and watch bodies", "[e2e][faults][fault-suite]") {
  FaultScenario s;
  s.StartExtender();
  const int64_t since = s.LastSeq();
  s.Control("fail", R"({"count":3,"mode":"truncate","method":"GET","watch":false})");
  s.Control("drop_watches", R"({"after_events":1,"partial":true})");
  s.CreatePending();
  const Clock::time_point back = s.WaitForRequests(since, 3, [](const LoggedRequest& r) {
    return r.method == "GET" && !Contains(r.query, "watch=true");
  });
  s.ScheduleUntilSettled(back, First(s));
  ExpectClean(s, "truncated list and watch bodies");
}

TEST_CASE("fault suite: 410, every watch resumed from a compacted resourceVersion",
          "[e2e][faults][fault-suite]") {
  FaultScenario s;
  s.StartExtender();
  s.CreatePending();
  s.Control("compact", "{}");
  s.Control("drop_watches", R"({"after_events":0})");
  s.ScheduleUntilSettled(Clock::now(), First(s));
  ExpectClean(s, "410");
}

TEST_CASE("fault suite: 429 and 5xx with Retry-After", "[e2e][faults][fault-suite]") {
  FaultScenario s;
  s.StartExtender();
  const int64_t since = s.LastSeq();
  s.Control("fail", R"({"count":1,"code":500,"retry_after":1,"method":"PATCH",)"
                    R"("path_prefix":"/api/v1/namespaces/eq2/pods/job-2"})");
  s.Control("fail", R"({"count":1,"code":429,"retry_after":1,"method":"POST",)"
                    R"("path_prefix":"/api/v1/namespaces/eq1/pods/"})");
  s.Control("fail", R"({"count":2,"code":503,"retry_after":1,"method":"GET","watch":false,)"
                    R"("path_prefix":"/api"})");
  // Every watch resumes into a 410, so the informers relist, into the 503s.
  s.Control("compact", "{}");
  s.Control("drop_watches", R"({"after_events":0})");
  s.CreatePending();
  // Back when every rule is spent: the two 503s, the 500 (the record), the 429 (an eviction).
  s.WaitForRequests(since, 2, [](const LoggedRequest& r) { return r.status == 503; });
  s.WaitForRequests(since, 1, [](const LoggedRequest& r) { return r.status == 500; });
  const Clock::time_point back = s.WaitForRequests(
      since, 1, [](const LoggedRequest& r) { return IsEviction(r) && r.status == 429; });
  // The record's 500 and the eviction's 429 are two failed attempts in a row.
  s.ScheduleUntilSettled(back, First(s), kConvergeBoundAfterTwoFailuresS);
  ExpectClean(s, "429 and 5xx with Retry-After");
}

TEST_CASE("fault suite: the second eviction fails, the reclaim is cut short after the first",
          "[e2e][faults][fault-suite]") {
  FaultScenario s;
  s.StartExtender();
  const int64_t since = s.LastSeq();
  // job-c's eviction goes through; job-b's is answered 503 once, as a server going away would.
  s.Control("fail", R"({"count":1,"code":503,"method":"POST",)"
                    R"("path_prefix":"/api/v1/namespaces/eq1/pods/job-b/eviction"})");
  s.CreatePending();
  const Clock::time_point back = s.WaitForRequests(
      since, 1, [](const LoggedRequest& r) { return IsEviction(r) && r.status == 503; });
  // The room job-c freed stays job-2's; after the backoff (5 s) the plan is made again and
  // needs job-b alone (docs/capacity-semantics.md#8-the-reclaim-controller).
  s.ScheduleUntilSettled(back, First(s));
  ExpectClean(s, "the second eviction fails");
  CHECK(Contains(s.extender().Log(), "reclaim cut short: planned again after the backoff"));
}

TEST_CASE("fault suite: slow answers, binds included", "[e2e][faults][fault-suite]") {
  FaultScenario s;
  s.StartExtender();
  s.Control("delay", R"({"ms":300,"count":-1,"path_prefix":"/api"})");
  s.CreatePending();
  s.ScheduleUntilSettled(Clock::now(), First(s));
  // Binds were slow too.
  bool slow_bind = false;
  for (const auto& r : s.Log())
    slow_bind = slow_bind || (Contains(r.path, "/binding") && r.status == 201);
  CHECK(slow_bind);
  ExpectClean(s, "slow answers, binds included");
}

TEST_CASE("fault suite: connection resets", "[e2e][faults][fault-suite]") {
  FaultScenario s;
  // A Binding reset after it was sent is unanswered: its reservation is kept for
  // reservationTTL (docs/capacity-semantics.md#6-accounting-used-reservations-nominations), 3 s
  // here so that the run takes seconds.
  s.StartExtender({"--reservation-ttl", "3s"});
  const int64_t since = s.LastSeq();
  s.Control("fail", R"({"count":1,"mode":"reset","method":"PATCH",)"
                    R"("path_prefix":"/api/v1/namespaces/eq2/pods/job-2"})");
  s.Control("fail", R"({"count":1,"mode":"reset","method":"POST",)"
                    R"("path_prefix":"/api/v1/namespaces/eq1/pods/"})");
  s.Control("fail", R"({"count":1,"mode":"reset","method":"POST",)"
                    R"("path_prefix":"/api/v1/namespaces/eq2/pods/job-2/binding"})");
  s.Control("fail", R"({"count":2,"mode":"reset","method":"GET","watch":false,)"
                    R"("path_prefix":"/api"})");
  s.Control("compact", "{}");
  s.Control("drop_watches", R"({"after_events":0})");
  s.CreatePending();
  // A reset request is logged with no status (0). Back when the lists', the record's and the
  // eviction's resets are spent (the binding's comes later, at kube-scheduler's first try).
  s.WaitForRequests(since, 2, [](const LoggedRequest& r) { return IsList(r) && r.status == 0; });
  s.WaitForRequests(since, 1,
                    [](const LoggedRequest& r) { return IsRecordOrNudge(r) && r.status == 0; });
  const Clock::time_point back = s.WaitForRequests(
      since, 1, [](const LoggedRequest& r) { return IsEviction(r) && r.status == 0; });
  // The record's and the eviction's resets fail an attempt each unless they hit a kept-alive
  // connection (then they are sent again at once): up to 13 s, plus the Binding's 3 s TTL.
  s.ScheduleUntilSettled(back, First(s), kConvergeBoundAfterTwoFailuresS + 3);
  bool bind_reset = false;
  for (const auto& r : s.Log())
    bind_reset = bind_reset || (Contains(r.path, "/binding") && r.status == 0);
  CHECK(bind_reset);
  ExpectClean(s, "connection resets");
}

TEST_CASE("fault suite: a watch that hangs open", "[e2e][faults][fault-suite]") {
  FaultScenario s;
  s.StartExtender();
  s.Control("hang_watches", "{}");
  const Clock::time_point hung = Clock::now();
  s.CreatePending();
  // Back by the product's own detection bound: --watch-idle-timeout 3s.
  s.ScheduleUntilSettled(hung + 3s, First(s));
  ExpectClean(s, "a watch that hangs open");
}

TEST_CASE("fault suite: two replicas, the lease moving in the middle of a reclaim",
          "[e2e][faults][fault-suite]") {
  FaultScenario s;
  s.Control("graceful_deletion", R"({"seconds":2})");
  SchedulerLeases leases(&s.api());
  leases.Create("replica-a_8d1f5c2e-0a6b-4c1e-9f7d-2b3c4d5e6f70");
  auto replica = [](const std::string& identity) {
    return std::vector<std::string>{"--leader-election",      "follow-scheduler",
                                    "--leader-identity",      identity,
                                    "--lease-duration",       "2s",
                                    "--lease-renew-deadline", "1200ms",
                                    "--lease-check-interval", "100ms"};
  };
  ExtenderProcess& a = s.StartExtender(replica("replica-a"));
  ExtenderProcess& b = s.StartExtender(replica("replica-b"));
  bool b_leads = false;
  auto leader = [&]() -> ExtenderProcess& { return b_leads ? b : a; };
  const int64_t since = s.LastSeq();
  s.CreatePending();
  // Mid-reclaim: the first victim terminating, job-2 not bound. a's scheduler stops renewing;
  // b's acquires once the record stayed unchanged for the lease duration (2 s).
  s.WaitForRequests(since, 1,
                    [](const LoggedRequest& r) { return IsEviction(r) && r.status == 201; });
  leases.Pause();
  std::this_thread::sleep_until(leases.last_renewal() + 2100ms);
  leases.Acquire("replica-b_3e9a7b1c-5d2f-4e8a-b6c0-1f2e3d4c5b6a");
  b_leads = true;
  s.ScheduleUntilSettled(Clock::now(), leader);
  ExpectClean(s, "two replicas, the lease moving mid-reclaim");
}

}  // namespace
}  // namespace fault_suite_test
