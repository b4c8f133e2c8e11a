// What one process costs over a window of wall time, read from /proc (bench_podcost_bench measures
// the `serve` process and the do-nothing extender this way, never itself):
//  * CPU: utime + stime of /proc/<pid>/stat (every thread, exited ones included; clock ticks);
//  * threads: `Threads:` at both ends, the most seen, and the threads created in the window;
//  * voluntary / nonvoluntary context switches of every thread;
//  * VmRSS and VmHWM of /proc/<pid>/status.
// /proc keeps per-thread context switches only while the thread lives and never counts thread
// creations, so with a TaskExitListener the window also adds the exit records of threads that
// ended inside it: created = tasks alive at the end or exited inside, that were not alive at the
// start; switches = (alive at the end + exited inside) - alive at the start. Without the listener
// both are lower bounds (live threads only, and distinct thread ids seen by a sampler every few
// ms), and the result says so.
// Thread-safety: one ProcessWindow per thread; its sampler thread is private.
#pragma once

#include <dirent.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "bench/micro/podcost_task_exits.h"

namespace capext::bench {

// utime + stime of a /proc stat file, in ms; -1 when it cannot be read.
inline double StatCpuMs(const std::string& path) {
  std::ifstream in(path);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::size_t close = text.rfind(')');
  if (close == std::string::npos) return -1;
  std::istringstream fields(text.substr(close + 2));
  std::string field;
  // After "pid (comm) ": state is field 3; utime and stime are fields 14 and 15.
  double utime = 0, stime = 0;
  for (int i = 3; i <= 15 && (fields >> field); ++i) {
    if (i == 14) utime = std::atof(field.c_str());
    if (i == 15) stime = std::atof(field.c_str());
  }
  return (utime + stime) * 1000.0 / static_cast<double>(sysconf(_SC_CLK_TCK));
}

// CPU time of the whole process (every thread, exited ones included), in ms; -1 when gone.
inline double ProcessCpuMs(int pid) {
  return StatCpuMs("/proc/" + std::to_string(pid) + "/stat");
}

// Busy CPU time of the whole machine (every process: user, nice, system, irq, softirq, steal of
// /proc/stat's "cpu" line), in ms. With the measured processes' own CPU subtracted, what else ran
// on the machine during a window: the noise next to a figure.
inline double MachineBusyMs() {
  std::ifstream in("/proc/stat");
  std::string label;
  int64_t user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0;
  in >> label >> user >> nice >> system >> idle >> iowait >> irq >> softirq >> steal;
  return static_cast<double>(user + nice + system + irq + softirq + steal) * 1000.0 /
         static_cast<double>(sysconf(_SC_CLK_TCK));
}

// The numeric fields of a /proc status file ("Threads", "VmRSS" in kB, ...).
inline std::map<std::string, int64_t> ReadStatusFields(const std::string& path) {
  std::map<std::string, int64_t> out;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    const std::size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    const char* value = line.c_str() + colon + 1;
    while (*value == ' ' || *value == '\t')
      ++value;
    if (*value >= '0' && *value <= '9') out[line.substr(0, colon)] = std::atoll(value);
  }
  return out;
}

inline std::vector<int> ListThreads(int pid) {
  std::vector<int> tids;
  DIR* dir = opendir(("/proc/" + std::to_string(pid) + "/task").c_str());
  if (dir == nullptr) return tids;
  while (dirent* entry = readdir(dir)) {
    if (entry->d_name[0] >= '0' && entry->d_name[0] <= '9')
      tids.push_back(std::atoi(entry->d_name));
  }
  closedir(dir);
  return tids;
}

struct TaskCounters {
  int64_t voluntary = 0;
  int64_t involuntary = 0;
  int64_t run_ns = 0;  // time on a CPU (schedstat), nanoseconds
};

// Context switches and CPU time of every live thread of `pid`.
inline std::map<int, TaskCounters> ReadThreadCounters(int pid) {
  std::map<int, TaskCounters> out;
  for (int tid : ListThreads(pid)) {
    const std::string dir = "/proc/" + std::to_string(pid) + "/task/" + std::to_string(tid);
    auto fields = ReadStatusFields(dir + "/status");
    if (fields.empty()) continue;  // exited meanwhile
    int64_t run_ns = 0;
    std::ifstream(dir + "/schedstat") >> run_ns;
    out[tid] = {fields["voluntary_ctxt_switches"], fields["nonvoluntary_ctxt_switches"], run_ns};
  }
  return out;
}

struct WindowStats {
  double wall_s = 0;
  double cpu_ms = 0;               // the whole process, clock-tick resolution (10 ms)
  double live_threads_cpu_ms = 0;  // threads alive at both ends only, ns resolution (schedstat)
  int64_t threads_before = 0, threads_after = 0, threads_max = 0;
  int64_t threads_created = 0;     // exact with the exit listener, else a lower bound
  int64_t thread_ids_sampled = 0;  // distinct new thread ids the sampler saw (lower bound)
  int64_t voluntary_switches = 0, involuntary_switches = 0;
  bool exact = false;  // threads_created and the switches are exact (exit records, none lost)
  int64_t rss_before_kb = 0, rss_after_kb = 0, hwm_after_kb = 0;
};

class ProcessWindow {
 public:
  // `exits` may be null or not running: then thread counts are lower bounds.
  ProcessWindow(int pid, TaskExitListener* exits,
                std::chrono::milliseconds sample_every = std::chrono::milliseconds(5))
      : pid_(pid), exits_(exits), sample_every_(sample_every) {
    if (exits_ && exits_->running()) exits_->Watch(pid_);
  }
  ProcessWindow(const ProcessWindow&) = delete;
  ProcessWindow& operator=(const ProcessWindow&) = delete;
  ~ProcessWindow() { StopSampler(); }

  void Begin() {
    const auto status = ReadStatusFields(StatusPath());
    stats_ = {};
    stats_.threads_before = Field(status, "Threads");
    stats_.rss_before_kb = Field(status, "VmRSS");
    lost_before_ = exits_ ? exits_->lost() : 0;
    start_ = ReadThreadCounters(pid_);
    started_ = std::chrono::steady_clock::now();
    cpu_before_ = ProcessCpuMs(pid_);
    // Exit records still on their way from before the snapshot belong to threads that are not
    // in it; records of threads in it ended inside the window.
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    exited_.clear();
    if (Exact())
      for (const auto& e : exits_->Take(pid_))
        if (start_.count(e.tid)) exited_.push_back(e);
    seen_.clear();
    for (const auto& [tid, unused] : start_)
      seen_.insert(tid);
    max_threads_ = stats_.threads_before;
    stop_ = false;
    sampler_ = std::thread([this] { Sample(); });
  }

  WindowStats End() {
    stats_.cpu_ms = ProcessCpuMs(pid_) - cpu_before_;
    stats_.wall_s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
    const auto end = ReadThreadCounters(pid_);
    const auto status = ReadStatusFields(StatusPath());
    StopSampler();
    stats_.threads_after = Field(status, "Threads");
    stats_.rss_after_kb = Field(status, "VmRSS");
    stats_.hwm_after_kb = Field(status, "VmHWM");
    std::set<int> created;
    int64_t voluntary = 0, involuntary = 0;
    for (const auto& [tid, s] : end) {
      voluntary += s.voluntary;
      involuntary += s.involuntary;
      auto before = start_.find(tid);
      if (before == start_.end())
        created.insert(tid);
      else
        stats_.live_threads_cpu_ms += static_cast<double>(s.run_ns - before->second.run_ns) / 1e6;
      seen_.insert(tid);
    }
    if (Exact()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      for (const auto& e : exits_->Take(pid_))
        if (!end.count(e.tid)) exited_.push_back(e);  // else it ended after the snapshot
      for (const auto& e : exited_) {
        voluntary += e.voluntary_switches;
        involuntary += e.involuntary_switches;
        if (!start_.count(e.tid)) created.insert(e.tid);
      }
    }
    for (const auto& [tid, s] : start_) {
      voluntary -= s.voluntary;
      involuntary -= s.involuntary;
    }
    stats_.exact = Exact() && exits_->lost() == lost_before_;
    stats_.voluntary_switches = voluntary;
    stats_.involuntary_switches = involuntary;
    {
      std::lock_guard lock(mutex_);
      stats_.thread_ids_sampled =
          static_cast<int64_t>(seen_.size()) - static_cast<int64_t>(start_.size());
      stats_.threads_max = std::max<int64_t>(max_threads_, stats_.threads_after);
    }
    stats_.threads_created = Exact() ? static_cast<int64_t>(created.size())
                                     : std::max<int64_t>(stats_.thread_ids_sampled,
                                                         static_cast<int64_t>(created.size()));
    return stats_;
  }

 private:
  bool Exact() const { return exits_ != nullptr && exits_->running(); }
  std::string StatusPath() const { return "/proc/" + std::to_string(pid_) + "/status"; }
  static int64_t Field(const std::map<std::string, int64_t>& fields, const std::string& key) {
    auto it = fields.find(key);
    return it == fields.end() ? 0 : it->second;
  }
  void Sample() {
    while (!stop_.load()) {
      const std::vector<int> tids = ListThreads(pid_);
      {
        std::lock_guard lock(mutex_);
        seen_.insert(tids.begin(), tids.end());
        max_threads_ = std::max<int64_t>(max_threads_, static_cast<int64_t>(tids.size()));
      }
      std::this_thread::sleep_for(sample_every_);
    }
  }
  void StopSampler() {
    stop_ = true;
    if (sampler_.joinable()) sampler_.join();
  }

  const int pid_;
  TaskExitListener* const exits_;
  const std::chrono::milliseconds sample_every_;
  WindowStats stats_;
  std::map<int, TaskCounters> start_;
  std::vector<ExitedTask> exited_;
  std::chrono::steady_clock::time_point started_;
  double cpu_before_ = 0;
  int64_t lost_before_ = 0;
  std::atomic<bool> stop_{false};
  std::thread sampler_;
  std::mutex mutex_;
  std::set<int> seen_;
  int64_t max_threads_ = 0;
};

}  // namespace capext::bench
