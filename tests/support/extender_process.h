// ExtenderProcess: runs the real `capacity-extender serve` binary for end-to-end tests,
// header-only. The child listens on 127.0.0.1 with --port 0 (a free port); its stderr (the log)
// goes to a file in a private temp dir, and Start() reads that file until the `extender listening`
// line names the port (bounded wait; a child that exits early is reported with its log). Stop()
// sends SIGTERM to the child's PID and waits, then SIGKILL after a deadline. Every wait is bounded.
// Thread-safety: one object per thread.
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "tests/support/temp_dir.h"
#include "tests/support/test_paths.h"

extern char** environ;

namespace capext::test {

class ExtenderProcess {
 public:
  using Clock = std::chrono::steady_clock;

  ExtenderProcess() = default;
  ExtenderProcess(const ExtenderProcess&) = delete;
  ExtenderProcess& operator=(const ExtenderProcess&) = delete;
  ~ExtenderProcess() { Stop(); }

  // Starts `binary serve --listen-address 127.0.0.1 --port 0 <args>` and waits (up to
  // `timeout`) for the listening line. False with error() (and the log) on failure; the child
  // is stopped then.
  bool Start(const std::vector<std::string>& args,
             std::chrono::milliseconds timeout = std::chrono::milliseconds(20000),
             const std::string& binary = ExtenderBinary()) {
    Stop();
    error_.clear();
    log_path_ = dir_.Write("extender.log", "");
    stdout_path_ = dir_.Write("extender.out", "");
    std::vector<std::string> argv_storage = {binary,      "serve",  "--listen-address",
                                             "127.0.0.1", "--port", "0"};
    argv_storage.insert(argv_storage.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& a : argv_storage)
      argv.push_back(a.data());
    argv.push_back(nullptr);

    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, stdout_path_.c_str(),
                                     O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, log_path_.c_str(),
                                     O_WRONLY | O_CREAT | O_TRUNC, 0644);
    // The test process may block signals (Catch2 does not, but be safe): the child starts clean.
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    sigset_t none;
    sigemptyset(&none);
    posix_spawnattr_setsigmask(&attr, &none);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK);
    pid_t pid = -1;
    const int rc = posix_spawn(&pid, argv[0], &actions, &attr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
    if (rc != 0) {
      error_ = "posix_spawn " + binary + " failed: " + std::to_string(rc);
      return false;
    }
    pid_ = pid;
    exit_status_.reset();

    auto found = WaitForListening("extender", timeout);
    if (!found) {
      const std::string why = error_;
      Stop();
      error_ = why + "\n--- log ---\n" + Log();
      return false;
    }
    port_ = *found;
    return true;
  }

  // Waits for the `<what> listening` log line (what = "extender" or "webhook") and returns its
  // port; nullopt (error() set) on timeout or if the child exited.
  std::optional<uint16_t> WaitForListening(const std::string& what,
                                           std::chrono::milliseconds timeout) {
    const auto deadline = Clock::now() + timeout;
    const std::string needle = what + " listening";
    for (;;) {
      const std::string log = Log();
      std::istringstream lines(log);
      std::string line;
      while (std::getline(lines, line)) {
        if (line.find(needle) == std::string::npos) continue;
        if (auto port = PortOf(line)) return port;
      }
      if (!Running()) {
        error_ = "capacity-extender exited before listening (status " +
                 std::to_string(exit_status_.value_or(-1)) + ")";
        return std::nullopt;
      }
      if (Clock::now() >= deadline) {
        error_ = "no '" + needle + "' line within " + std::to_string(timeout.count()) + " ms";
        return std::nullopt;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }

  // Polls the log until it contains `needle` or `timeout` passes.
  bool WaitForLog(std::string_view needle,
                  std::chrono::milliseconds timeout = std::chrono::milliseconds(5000)) const {
    const auto deadline = Clock::now() + timeout;
    for (;;) {
      if (Log().find(needle) != std::string::npos) return true;
      if (Clock::now() >= deadline) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }

  // True while the child has not exited (reaps it when it has).
  bool Running() {
    if (pid_ <= 0) return false;
    int status = 0;
    const pid_t r = waitpid(pid_, &status, WNOHANG);
    if (r == 0) return true;
    if (r == pid_)
      Reaped(status);
    else
      pid_ = -1;
    return false;
  }

  // SIGTERM, wait up to `grace`, then SIGKILL and wait. Returns the exit code (128+signal when
  // killed by a signal), -1 if there was no child.
  int Stop(std::chrono::milliseconds grace = std::chrono::milliseconds(10000)) {
    if (pid_ > 0) {
      if (Running()) kill(pid_, SIGTERM);
      const auto deadline = Clock::now() + grace;
      while (Running() && Clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      if (Running()) {
        killed_ = true;
        kill(pid_, SIGKILL);
        int status = 0;
        if (waitpid(pid_, &status, 0) == pid_) Reaped(status);
        pid_ = -1;
      }
    }
    return exit_status_.value_or(-1);
  }

  // The captured stderr (the log) so far.
  std::string Log() const { return ReadAll(log_path_); }
  std::string Stdout() const { return ReadAll(stdout_path_); }

  uint16_t port() const { return port_; }
  pid_t pid() const { return pid_; }
  const std::string& error() const { return error_; }
  // Exit code after Stop() (nullopt while running).
  std::optional<int> exit_status() const { return exit_status_; }
  bool was_killed() const { return killed_; }
  // A private directory that lives as long as this object (certificates, snapshots...).
  const capext::testing::TempDir& dir() const { return dir_; }

 private:
  static std::string ReadAll(const std::string& path) {
    if (path.empty()) return "";
    std::ifstream in(path, std::ios::binary);
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }

  // "address=127.0.0.1:PORT" (logfmt) or "\"address\":\"127.0.0.1:PORT\"" (json).
  static std::optional<uint16_t> PortOf(const std::string& line) {
    std::size_t at = line.find("address=");
    if (at == std::string::npos) at = line.find("\"address\":");
    if (at == std::string::npos) return std::nullopt;
    const std::size_t colon = line.find(':', line.find_first_of("=:", at) + 1);
    if (colon == std::string::npos) return std::nullopt;
    unsigned long value = 0;
    std::size_t i = colon + 1;
    const std::size_t start = i;
    while (i < line.size() && line[i] >= '0' && line[i] <= '9' && value < 100000)
      value = value * 10 + static_cast<unsigned long>(line[i++] - '0');
    if (i == start || value == 0 || value > 65535) return std::nullopt;
    return static_cast<uint16_t>(value);
  }

  void Reaped(int status) {
    if (WIFEXITED(status))
      exit_status_ = WEXITSTATUS(status);
    else if (WIFSIGNALED(status))
      exit_status_ = 128 + WTERMSIG(status);
    pid_ = -1;
  }

  capext::testing::TempDir dir_;
  std::string log_path_;
  std::string stdout_path_;
  pid_t pid_ = -1;
  uint16_t port_ = 0;
  std::optional<int> exit_status_;
  bool killed_ = false;
  std::string error_;
};

}  // namespace capext::test
