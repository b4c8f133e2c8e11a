#include "bench/sim/progress_bar.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>

#include <fmt/format.h>

#include "bench/report/svg_chart.h"

namespace capext {

namespace {

// "45s", "3m07s", "2h05m".
std::string EtaText(double seconds) {
  const int64_t s = static_cast<int64_t>(seconds + 0.5);
  if (s < 60) return fmt::format("{}s", s);
  if (s < 3600) return fmt::format("{}m{:02}s", s / 60, s % 60);
  return fmt::format("{}h{:02}m", s / 3600, (s % 3600) / 60);
}

}  // namespace

ProgressBar::ProgressBar(std::string label, int slots)
    : ProgressBar(std::move(label), slots, isatty(2) != 0) {}

ProgressBar::ProgressBar(std::string label, int slots, bool enabled, std::FILE* out)
    : label_(std::move(label)),
      enabled_(enabled),
      out_(out),
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

void ProgressBar::SetTotal(int slot, int64_t total) {
  std::lock_guard<std::mutex> lock(mu_);
  total_[slot] = total;
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
  const std::string line = fmt::format(
      "{} [{}] {:3}%  {}/{} pods  {} pods/s  ETA {}", label_, bar, static_cast<int>(fraction * 100),
      FormatNumber(static_cast<double>(done)), FormatNumber(static_cast<double>(total)),
      FormatNumber(rate), rate > 0 ? EtaText(eta) : std::string("?"));
  // Pad over the rest of a longer previous line.
  const std::size_t pad = drawn_width_ > line.size() ? drawn_width_ - line.size() : 0;
  std::fprintf(out_, "\r%s%*s", line.c_str(), static_cast<int>(pad), "");
  drawn_width_ = std::max(drawn_width_, line.size());
  std::fflush(out_);
}

void ProgressBar::Finish() {
  if (!enabled_) return;
  std::lock_guard<std::mutex> lock(mu_);
  if (drawn_) {
    std::fprintf(out_, "\r%*s\r", static_cast<int>(drawn_width_), "");
    std::fflush(out_);
  }
}

}  // namespace capext
