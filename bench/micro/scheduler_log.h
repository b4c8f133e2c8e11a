// What kube-scheduler's own log says about a throughput run (bench_throughput_bench), read as it
// grows. kube-scheduler 1.26 at --v=2 (deploy/'s verbosity) writes klog text lines:
//   I0102 15:04:05.000000  123 schedule_one.go:252] "Successfully bound pod to node"
//       pod="ns/p-1" node="n-1" evaluatedNodes=500 feasibleNodes=500
//   E0102 15:04:05.000000  123 schedule_one.go:896] "Error scheduling pod; retrying"
//       err="Post \"http://127.0.0.1:8888/bind\": context deadline exceeded
//       (Client.Timeout exceeded while awaiting headers)" pod="ns/p-1"
//   I0102 ... "Unable to schedule pod; no fit; waiting" pod="ns/p-1" err="..."
// (each on one line). Every failed scheduling or binding attempt that is not a "no fit" is an
// "Error scheduling pod; retrying", the extender's errors and timeouts included. A timeout is an
// error whose text says the HTTP client's deadline passed (Go: "Client.Timeout exceeded",
// "context deadline exceeded", "i/o timeout"); it is attributed to the extender verb named at the
// end of the URL it was posting to.
// A pod bound by the extender after kube-scheduler gave up on its /bind has no "Successfully
// bound" line: the count of bound pods here is a lower bound, exact only in runs without errors.
// Thread-safety: one reader per thread.
#pragma once

#include <fstream>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace capext::bench {

struct SchedulerLogCounts {
  std::set<std::string> bound;  // distinct "ns/name" of "Successfully bound pod to node"
  int errors = 0;               // "Error scheduling pod; retrying"
  int timeouts = 0;             // the errors that are HTTP timeouts
  std::map<std::string, int> timeouts_by_verb;  // filter, prioritize, preempt, bind, other
  int unschedulable = 0;                        // "Unable to schedule pod; no fit; waiting"
  std::vector<std::string> first_errors;        // the first few error lines, for the report
};

// The value of `key="..."` in a klog line (Go-quoted: \" and \\ inside), or "" when absent.
inline std::string KlogValue(std::string_view line, std::string_view key) {
  const std::string needle = " " + std::string(key) + "=\"";
  const std::size_t at = line.find(needle);
  if (at == std::string_view::npos) return "";
  std::string value;
  for (std::size_t i = at + needle.size(); i < line.size(); ++i) {
    if (line[i] == '\\' && i + 1 < line.size()) {
      value += line[++i];
    } else if (line[i] == '"') {
      return value;
    } else {
      value += line[i];
    }
  }
  return value;
}

// Folds one log line into `counts`.
inline void CountSchedulerLogLine(std::string_view line, SchedulerLogCounts* counts) {
  if (line.find("\"Successfully bound pod to node\"") != std::string_view::npos) {
    const std::string pod = KlogValue(line, "pod");
    if (!pod.empty()) counts->bound.insert(pod);
  } else if (line.find("\"Error scheduling pod; retrying\"") != std::string_view::npos) {
    ++counts->errors;
    if (counts->first_errors.size() < 5) counts->first_errors.emplace_back(line);
    const std::string err = KlogValue(line, "err");
    if (err.find("Client.Timeout exceeded") != std::string::npos ||
        err.find("context deadline exceeded") != std::string::npos ||
        err.find("i/o timeout") != std::string::npos) {
      ++counts->timeouts;
      std::string verb = "other";
      for (const char* v : {"filter", "prioritize", "preempt", "bind"}) {
        if (err.find("/" + std::string(v) + "\"") != std::string::npos) verb = v;
      }
      ++counts->timeouts_by_verb[verb];
    }
  } else if (line.find("\"Unable to schedule pod; no fit; waiting\"") != std::string_view::npos) {
    ++counts->unschedulable;
  }
}

// Follows one log file: each ReadNew() folds the complete lines written since the last call.
class SchedulerLogReader {
 public:
  explicit SchedulerLogReader(std::string path) : path_(std::move(path)) {}

  const SchedulerLogCounts& ReadNew() {
    std::ifstream in(path_, std::ios::binary);
    if (!in) return counts_;
    in.seekg(static_cast<std::streamoff>(offset_));
    std::string chunk((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    offset_ += chunk.size();
    partial_ += chunk;
    std::size_t start = 0;
    for (std::size_t end; (end = partial_.find('\n', start)) != std::string::npos;
         start = end + 1) {
      CountSchedulerLogLine(std::string_view(partial_).substr(start, end - start), &counts_);
    }
    partial_.erase(0, start);  // a line still being written waits for the next call
    return counts_;
  }
  const SchedulerLogCounts& counts() const { return counts_; }

 private:
  std::string path_;
  std::size_t offset_ = 0;
  std::string partial_;
  SchedulerLogCounts counts_;
};

}  // namespace capext::bench
