// The progress bar: silent when disabled (stderr not a terminal), and when drawn it shows the
// fraction, the rate and an ETA, and Finish clears its line.
#include "bench/sim/progress_bar.h"

#include <catch2/catch.hpp>
#include <cstdio>
#include <string>
#include <thread>

namespace capext {
namespace progress_bar_test {
namespace {

std::string Contents(std::FILE* f) {
  std::fflush(f);
  std::rewind(f);
  std::string out;
  char buf[512];
  for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;)
    out.append(buf, n);
  return out;
}

TEST_CASE("a disabled progress bar writes nothing", "[sim][progress]") {
  std::FILE* f = std::tmpfile();
  REQUIRE(f != nullptr);
  {
    ProgressBar bar("run capacity", 1, false, f);
    for (int i = 0; i <= 10; ++i)
      bar.Update(0, i * 1000, 10'000);
    bar.Finish();
  }
  CHECK(Contents(f).empty());
  std::fclose(f);
}

TEST_CASE("an enabled progress bar shows the rate and an ETA, then clears its line",
          "[sim][progress]") {
  std::FILE* f = std::tmpfile();
  REQUIRE(f != nullptr);
  ProgressBar bar("compare", 2, true, f);
  bar.Update(0, 0, 5000);
  std::this_thread::sleep_for(std::chrono::milliseconds(120));
  bar.Update(1, 2500, 5000);  // slots add up: 2500 of 10000
  const std::string all_drawn = Contents(f);
  CHECK(all_drawn.find("ETA ?") != std::string::npos);  // nothing done yet: no rate to go by
  const std::string drawn = all_drawn.substr(all_drawn.rfind('\r') + 1);  // the line on screen now
  CHECK(drawn.find("compare [") == 0);
  CHECK(drawn.find(" 25%") != std::string::npos);
  CHECK(drawn.find("2500/10k pods") != std::string::npos);
  CHECK(drawn.find("pods/s") != std::string::npos);
  CHECK(drawn.find("ETA ") != std::string::npos);
  CHECK(drawn.find("ETA ?") == std::string::npos);
  bar.Finish();
  const std::string all = Contents(f);
  CHECK(all.back() == '\r');  // the line is blanked and the cursor back at its start
  std::fclose(f);
}

}  // namespace
}  // namespace progress_bar_test
}  // namespace capext
