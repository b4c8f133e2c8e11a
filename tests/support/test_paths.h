// Where the tests find the repository, their build directory and the binaries they run.
//
// The paths are compiled into test_paths.cpp alone (CMake gives only that file the
// definitions): every other test file is then compiled with the same command line in any
// checkout, so a second checkout (test.sh's standalone copy, another worktree) reuses ccache's
// objects and recompiles one file. Every path is absolute; nothing here reads outside the
// repository and its build directory (docs/architecture.md#tests).
#pragma once

#include <string>
#include <string_view>

namespace capext::test {

// The repository root (the checkout the build was configured from).
const std::string& SourceDir();
// SourceDir() + "/" + relative, e.g. SourcePath("tests/fixtures/kube-scheduler").
std::string SourcePath(std::string_view relative);
// The CMake build directory (scratch files of a test may go there).
const std::string& BinaryDir();
// The `capacity-extender` and `capacity-sim` executables of this build.
const std::string& ExtenderBinary();
const std::string& SimBinary();

}  // namespace capext::test
