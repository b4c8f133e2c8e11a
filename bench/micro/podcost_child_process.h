// ChildProcess: a program bench_podcost_bench starts and measures (the API-server double, the real
// `capacity-extender serve`, the do-nothing extender). stdout and stderr go to one log file; the
// child gets SIGKILL if the benchmark dies (PR_SET_PDEATHSIG), and Stop() ends it by its PID
// (SIGTERM, then SIGKILL after a grace period). Every wait is bounded.
// Thread-safety: one object per thread.
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace capext::bench {

inline std::string ReadWholeFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

// Polls `condition` every `step` until true or `timeout`; returns its last value.
inline bool PollUntil(const std::function<bool()>& condition, std::chrono::milliseconds timeout,
                      std::chrono::milliseconds step = std::chrono::milliseconds(20)) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!condition()) {
    if (std::chrono::steady_clock::now() >= deadline) return condition();
    std::this_thread::sleep_for(step);
  }
  return true;
}

class ChildProcess {
 public:
  ChildProcess() = default;
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;
  ~ChildProcess() { Stop(std::chrono::milliseconds(3000)); }

  // Starts argv[0] (searched in PATH when it has no '/') with `argv`, output to `log_path`.
  bool Start(const std::vector<std::string>& argv, const std::string& log_path) {
    log_path_ = log_path;
    // Emptied here, before the child exists: a reader polling the log must never see the
    // previous run's lines (e.g. a "listening" line with a port nobody listens on any more).
    std::ofstream(log_path, std::ios::trunc).flush();
    std::vector<std::string> args = argv;
    std::vector<char*> pointers;
    for (auto& a : args)
      pointers.push_back(a.data());
    pointers.push_back(nullptr);
    const pid_t parent = getpid();
    pid_ = fork();
    if (pid_ == 0) {
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (getppid() != parent) _exit(127);
      const int fd = open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
      if (fd >= 0) {
        dup2(fd, 1);
        dup2(fd, 2);
        close(fd);
      }
      const int devnull = open("/dev/null", O_RDONLY);
      if (devnull >= 0) dup2(devnull, 0);
      execvp(pointers[0], pointers.data());
      _exit(127);
    }
    return pid_ > 0;
  }

  pid_t pid() const { return pid_; }
  std::string Log() const { return ReadWholeFile(log_path_); }

  // True while the child runs (reaps it when it has exited).
  bool Running() {
    if (pid_ <= 0) return false;
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) == 0) return true;
    pid_ = -1;
    exit_status_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    return false;
  }

  // SIGTERM, up to `grace` to exit, then SIGKILL. Returns the exit status (-1: no child).
  int Stop(std::chrono::milliseconds grace = std::chrono::milliseconds(10000)) {
    if (pid_ <= 0) return exit_status_;
    kill(pid_, SIGTERM);
    if (!PollUntil([&] { return !Running(); }, grace, std::chrono::milliseconds(5))) {
      kill(pid_, SIGKILL);
      int status = 0;
      waitpid(pid_, &status, 0);
      pid_ = -1;
      exit_status_ = 128 + SIGKILL;
    }
    return exit_status_;
  }

  // Waits for the child to write its listening port into `port_file` (its --port-file); the
  // port, or 0 when the child exited or `timeout` passed first.
  uint16_t WaitForPortFile(const std::string& port_file, std::chrono::milliseconds timeout) {
    std::string text;
    PollUntil(
        [&] {
          text = ReadWholeFile(port_file);
          return !text.empty() || !Running();
        },
        timeout);
    return static_cast<uint16_t>(std::atoi(text.c_str()));
  }

  // Waits for the log to contain `needle`; returns the text after it up to the end of its line.
  std::optional<std::string> WaitForLogLine(const std::string& needle,
                                            std::chrono::milliseconds timeout) {
    std::optional<std::string> found;
    PollUntil(
        [&] {
          const std::string log = Log();
          const std::size_t at = log.find(needle);
          if (at != std::string::npos) {
            const std::size_t end = log.find('\n', at);
            if (end != std::string::npos)
              found = log.substr(at + needle.size(), end - at - needle.size());
          }
          return found.has_value() || !Running();
        },
        timeout);
    return found;
  }

 private:
  pid_t pid_ = -1;
  int exit_status_ = -1;
  std::string log_path_;
};

}  // namespace capext::bench
