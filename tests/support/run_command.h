// RunCommand: runs a program to completion and returns its exit code and output, for tests that
// drive command-line tools (kubectl, scripts/control-plane.sh).
//
// The child gets this process's environment plus `env` ("NAME=value" entries, which win), stdin
// from /dev/null, and one pipe for stdout and stderr together (interleaved as written). The
// call returns when the child has exited and the pipe is closed; after `timeout` the child is
// killed (SIGKILL) and the result says so. Descendants that keep the pipe open (daemons that did
// not redirect their output) hold the call until `timeout`: redirect theirs.
// Thread-safety: may be called from several threads at once.
#pragma once

#include <chrono>
#include <string>
#include <vector>

namespace capext::test {

struct CommandResult {
  int exit_code = -1;  // the child's exit status; 128 + N when killed by signal N; -1 not run
  std::string output;  // stdout and stderr; on failure to start or a timeout, also why
  bool ok() const { return exit_code == 0; }
};

// argv[0] is looked up on PATH when it has no '/'.
CommandResult RunCommand(const std::vector<std::string>& argv,
                         const std::vector<std::string>& env = {},
                         std::chrono::milliseconds timeout = std::chrono::minutes(5));

}  // namespace capext::test
