// The fault suite's invariant checker (docs/faults.md#the-invariants): given a scenario's pods
// and quotas, the API-server double's request log of one run, its final objects and what
// kube-scheduler saw of each pending pod over time, the violations of
//   1. no pod evicted twice;
//   2. no eviction out of victim order (least important first within one reclaim);
//   3. no quota over max (replayed over the log, and in the final objects);
//   4. every pending pod's verdict converges, within a bound after the server is back;
//   5. status.used equals a recount of the bound pods.
// Pure: no I/O, no clock. ParseDoubleRequests/ParseDoublePods turn the double's JSON
// (GET /_double/requests, /_double/objects) into its inputs.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace capext::test {

struct ScenarioPod {
  std::string ns, name;
  int64_t cpu_milli = 0;
  int32_t priority = 0;
  std::string start;  // RFC 3339 status.startTime; "" for a pending pod
  std::string node;   // bound at the start of the run; "" for a pending pod
  std::string Key() const { return ns + "/" + name; }
};

struct ScenarioQuota {
  std::string ns;  // one quota per namespace, named after it
  int64_t max_cpu_milli = 0;
};

// What kube-scheduler saw of a pending pod at one poll: "bound:<node>", "passes:<n1,n2>" or
// "refused". `at_s` is in seconds on any clock shared with FaultRun::back_at_s.
struct VerdictSample {
  double at_s = 0;
  std::string verdict;
};

struct PendingExpectation {
  std::string key;            // ns/name
  std::string final_verdict;  // e.g. "bound:n2" or "refused"
  double created_at_s = 0;
  std::vector<VerdictSample> samples;  // in time order
};

// One entry of the double's request log.
struct LoggedRequest {
  int64_t seq = 0;
  std::string method, path, query, body, user_agent;
  int status = 0;  // 0: no answer (the connection was reset or the client went away)
};

// A pod in the double's final objects.
struct FinalPod {
  std::string ns, name, node;
  int64_t cpu_milli = 0;
  bool terminating = false;  // deletionTimestamp set
  bool terminal = false;     // Succeeded or Failed
};

struct FinalQuota {
  std::string ns;
  std::optional<int64_t> used_cpu_milli;  // status.used.cpu; nullopt when absent
};

struct FaultRun {
  std::vector<ScenarioPod> pods;  // every pod of the run: bound at the start, or pending
  std::vector<ScenarioQuota> quotas;
  std::vector<LoggedRequest> log;  // in the order answered (seq ascending)
  std::vector<FinalPod> final_pods;
  std::vector<FinalQuota> final_quotas;
  std::vector<PendingExpectation> pending;
  double back_at_s = 0;         // when the server was back (docs/faults.md#the-faults)
  double converge_bound_s = 8;  // invariant 4's bound
};

// Every violation found, one line each, naming the pod, quota or request; empty when none.
std::vector<std::string> CheckFaultRun(const FaultRun& run);

// The double's GET /_double/requests answer; `seq_offset` is added to each seq (a log fetched
// before a restart, followed by the restarted double's own).
std::vector<LoggedRequest> ParseDoubleRequests(const std::string& json, int64_t seq_offset = 0);
// The double's GET /_double/objects?resource=pods (and ?resource=elasticquotas&group=..) answers.
std::vector<FinalPod> ParseDoublePods(const std::string& objects_json);
std::vector<FinalQuota> ParseDoubleQuotas(const std::string& objects_json);
// "2", "1500m", "0.5" -> milli-cpu; nullopt when not such a quantity.
std::optional<int64_t> ParseCpuMilli(const std::string& quantity);

}  // namespace capext::test
