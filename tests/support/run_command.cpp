// RunCommand (run_command.h): posix_spawnp with a close-on-exec pipe dup'ed onto fds 1 and 2,
// read with poll() until end of file or the deadline, then waitpid.
#include "tests/support/run_command.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>

extern char** environ;

namespace capext::test {
namespace {

// This process's environment with `overrides` applied ("NAME=value"; a later entry wins).
std::vector<std::string> MergedEnvironment(const std::vector<std::string>& overrides) {
  std::map<std::string, std::string> by_name;
  std::vector<std::string> order;
  auto put = [&](const std::string& entry) {
    const std::string name = entry.substr(0, entry.find('='));
    if (by_name.emplace(name, entry).second) {
      order.push_back(name);
    } else {
      by_name[name] = entry;
    }
  };
  for (char** e = environ; *e != nullptr; ++e)
    put(*e);
  for (const std::string& entry : overrides)
    put(entry);
  std::vector<std::string> merged;
  merged.reserve(order.size());
  for (const std::string& name : order)
    merged.push_back(by_name[name]);
  return merged;
}

int ExitCodeOf(int wait_status) {
  if (WIFEXITED(wait_status)) return WEXITSTATUS(wait_status);
  if (WIFSIGNALED(wait_status)) return 128 + WTERMSIG(wait_status);
  return -1;
}

}  // namespace

CommandResult RunCommand(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                         std::chrono::milliseconds timeout) {
  CommandResult result;
  if (argv.empty()) {
    result.output = "RunCommand: no program given";
    return result;
  }
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    result.output = std::string("RunCommand: pipe: ") + std::strerror(errno);
    return result;
  }
  std::vector<std::string> args = argv;
  std::vector<char*> c_args;
  for (std::string& a : args)
    c_args.push_back(a.data());
  c_args.push_back(nullptr);
  std::vector<std::string> environment = MergedEnvironment(env);
  std::vector<char*> c_env;
  for (std::string& e : environment)
    c_env.push_back(e.data());
  c_env.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDERR_FILENO);
  // The child starts with no blocked signals and default dispositions, whatever the test does.
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none, all;
  sigemptyset(&none);
  sigfillset(&all);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &all);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  pid_t pid = -1;
  const int rc = posix_spawnp(&pid, c_args[0], &actions, &attr, c_args.data(), c_env.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  close(fds[1]);
  if (rc != 0) {
    close(fds[0]);
    result.output = "RunCommand: cannot start " + argv[0] + ": " + std::strerror(rc);
    return result;
  }

  const auto deadline = std::chrono::steady_clock::now() + timeout;
  bool timed_out = false;
  char buffer[8192];
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      timed_out = true;
      kill(pid, SIGKILL);
      break;
    }
    pollfd p{fds[0], POLLIN, 0};
    const int ready = poll(&p, 1, static_cast<int>(std::min<int64_t>(left.count(), 1000)));
    if (ready < 0 && errno != EINTR) break;
    if (ready <= 0) continue;
    const ssize_t n = read(fds[0], buffer, sizeof buffer);
    if (n > 0) {
      result.output.append(buffer, static_cast<size_t>(n));
    } else if (n == 0 || errno != EINTR) {
      break;  // end of file: the child and whatever inherited the pipe are done with it
    }
  }
  close(fds[0]);
  // A child that closed its output may still be running: wait for it up to the deadline too.
  int status = 0;
  for (;;) {
    const pid_t done = waitpid(pid, &status, timed_out ? 0 : WNOHANG);
    if (done == pid || (done < 0 && errno != EINTR)) break;
    if (done == 0 && std::chrono::steady_clock::now() >= deadline) {
      timed_out = true;
      kill(pid, SIGKILL);
    } else if (done == 0) {
      usleep(10'000);
    }
  }
  result.exit_code = ExitCodeOf(status);
  if (timed_out) {
    result.exit_code = -1;
    result.output +=
        "\nRunCommand: " + argv[0] + " killed after " + std::to_string(timeout.count()) + " ms";
  }
  return result;
}

}  // namespace capext::test
