// A progress bar on stderr, drawn only when stderr is a terminal (silent in pipes, CI logs and
// tests): "run capacity [########------------] 41%  412k/1.0M pods  123k pods/s  ETA 1m05s"
// (pods = arrivals replayed so far; rate and ETA from the wall clock since the start).
// Several simulations running at once (compare --jobs) report into slots; the bar shows their
// sum. Redraws at most every 100 ms. The wall clock is read for display only.
// Thread-safety: Update and Finish may be called from any thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <mutex>
#include <string>
#include <vector>

namespace capext {

class ProgressBar {
 public:
  // `enabled` defaults to "stderr is a TTY". `out` (default stderr) is where the bar is drawn.
  ProgressBar(std::string label, int slots);
  ProgressBar(std::string label, int slots, bool enabled, std::FILE* out = stderr);

  void Update(int slot, int64_t done, int64_t total);
  // Announces a slot's total before it starts (nothing is drawn).
  void SetTotal(int slot, int64_t total);
  // Clears the bar's line.
  void Finish();
  bool enabled() const { return enabled_; }

 private:
  void Draw(bool force);

  std::string label_;
  bool enabled_;
  std::FILE* out_;
  std::size_t drawn_width_ = 0;  // of the last line drawn, for Finish to clear
  std::mutex mu_;
  std::vector<int64_t> done_, total_;
  std::chrono::steady_clock::time_point start_, last_draw_;
  bool drawn_ = false;
};

}  // namespace capext
