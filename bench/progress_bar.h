// A progress bar on stderr, drawn only when stderr is a terminal (silent in pipes, CI logs and
// tests): "run capacity [########------------] 41%  412k/1.0M pods  123k pods/s  ETA 5s".
// Several simulations running at once (compare --jobs) report into slots; the bar shows their
// sum. Redraws at most every 100 ms. The wall clock is read for display only.
// Thread-safety: Update and Finish may be called from any thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

namespace capext {

class ProgressBar {
 public:
  // `enabled` defaults to "stderr is a TTY".
  ProgressBar(std::string label, int slots);
  ProgressBar(std::string label, int slots, bool enabled);

  void Update(int slot, int64_t done, int64_t total);
  // Clears the bar's line.
  void Finish();
  bool enabled() const { return enabled_; }

 private:
  void Draw(bool force);

  std::string label_;
  bool enabled_;
  std::mutex mu_;
  std::vector<int64_t> done_, total_;
  std::chrono::steady_clock::time_point start_, last_draw_;
  bool drawn_ = false;
};

}  // namespace capext
