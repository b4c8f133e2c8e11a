// main() of real_cluster_tests: Catch2's, except that the tests are skipped as a whole (exit
// 77, which CTest reports as skipped) when this machine cannot run a real control plane, with
// the reason on the first line of the output. Listing the tests works everywhere (CTest's test
// discovery lists them at build time).
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>
#include <iostream>

#include "tests/support/real_control_plane.h"

int main(int argc, char** argv) {
  Catch::Session session;
  if (const int rc = session.applyCommandLine(argc, argv); rc != 0) return rc;
  const Catch::ConfigData& config = session.configData();
  const bool only_listing = config.listTests || config.listTestNamesOnly || config.listTags ||
                            config.listReporters || config.showHelp;
  if (!only_listing) {
    const std::string why = capext::test::RealControlPlane::Unavailable();
    if (!why.empty()) {
      std::cout << "SKIPPED: no real control plane here: " << why << std::endl;
      return 77;
    }
  }
  return session.run();
}
