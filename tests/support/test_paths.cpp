// The build's paths, from the definitions tests/CMakeLists.txt gives this file alone.
#include "tests/support/test_paths.h"

namespace capext::test {

const std::string& SourceDir() {
  static const std::string dir = CE_SOURCE_DIR;
  return dir;
}

std::string SourcePath(std::string_view relative) {
  return SourceDir() + "/" + std::string(relative);
}

const std::string& BinaryDir() {
  static const std::string dir = CE_BINARY_DIR;
  return dir;
}

const std::string& ExtenderBinary() {
  static const std::string path = CE_EXTENDER_BIN;
  return path;
}

const std::string& SimBinary() {
  static const std::string path = CE_SIM_BIN;
  return path;
}

}  // namespace capext::test
