#include "bench/progress_bar.h"

#include <unistd.h>

#include <cstdio>

#include <fmt/format.h>

#include "bench/svg_chart.h"

namespace capext {

ProgressBar::ProgressBar(std::string label, int slots) : ProgressBar(std::move(label), slots, isatty(2) != 0) {}

ProgressBar::ProgressBar(std::string label, int slots, bool enabled)
    : label_(std::move(label)),
      enabled_(enabled),
      done_(static_cast<std::size_t>(slots), 0),
      total_(static_cast<std::size_t>(slots), 0),
      start_(std::chrono::steady_clock::now()),
      last_draw_(start_) {}

void ProgressBar::Update(int slot, int64_t done, int64_t total) {
  if (!enabled_) return;
  std::lock_guard<std::mutex> lock(mu_);
  done_[slot] = done;
  total_[slot] = total;
  Draw(false);
}

void ProgressBar::Draw(bool force) {
  const auto now = std::chrono::steady_clock::now();
  if (!force && drawn_ && now - last_draw_ < std::chrono::milliseconds(100)) return;
  last_draw_ = now;
  drawn_ = true;
  int64_t done = 0, total = 0;
  for (std::size_t i = 0; i < done_.size(); ++i) {
    done += done_[i];
    total += total_[i];
  }
  const double fraction = total > 0 ? static_cast<double>(done) / static_cast<double>(total) : 0.0;
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  const double rate = elapsed > 0 ? static_cast<double>(done) / elapsed : 0.0;
  const double eta = rate > 0 ? static_cast<double>(total - done) / rate : 0.0;
  constexpr int kWidth = 24;
  const int filled = static_cast<int>(fraction * kWidth);
  std::string bar(static_cast<std::size_t>(filled), '#');
  bar.append(static_cast<std::size_t>(kWidth - filled), '-');
  std::fprintf(stderr, "\r%s [%s] %3d%%  %s/%s pods  %s pods/s  ETA %s   ", label_.c_str(), bar.c_str(),
               static_cast<int>(fraction * 100), FormatNumber(static_cast<double>(done)).c_str(),
               FormatNumber(static_cast<double>(total)).c_str(), FormatNumber(rate).c_str(),
               fmt::format("{:.0f}s", eta).c_str());
  std::fflush(stderr);
}

void ProgressBar::Finish() {
  if (!enabled_) return;
  std::lock_guard<std::mutex> lock(mu_);
  if (drawn_) {
    std::fprintf(stderr, "\r%*s\r", 100, "");
    std::fflush(stderr);
  }
}

}  // namespace capext
