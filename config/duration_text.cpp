#include "config/duration_text.h"

#include <cstdint>
#include <limits>

#include <fmt/format.h>

namespace capext {
namespace {

constexpr int64_t kMaxMs = std::numeric_limits<int64_t>::max() / 1000;  // keeps steps exact

bool IsDigit(char c) {
  return c >= '0' && c <= '9';
}

}  // namespace

Status ParseDuration(std::string_view text, std::chrono::milliseconds* out) {
  const auto fail = [&](std::string_view why) {
    return Status::Invalid(
        fmt::format("duration \"{}\": {} (examples: 500ms, 60s, 2m, 1h30m)", text, why));
  };
  if (text == "0") {
    *out = std::chrono::milliseconds(0);
    return {};
  }
  if (text.empty()) return fail("empty");
  // Sum in microseconds so that "1.5ms" is seen as not whole rather than silently rounded.
  int64_t total_us = 0;
  std::size_t i = 0;
  while (i < text.size()) {
    int64_t whole = 0;
    int64_t fraction = 0;
    int64_t fraction_scale = 1;
    const std::size_t start = i;
    while (i < text.size() && IsDigit(text[i])) {
      if (whole > kMaxMs) return fail("too large");
      whole = whole * 10 + (text[i++] - '0');
    }
    if (i < text.size() && text[i] == '.') {
      ++i;
      while (i < text.size() && IsDigit(text[i])) {
        if (fraction_scale < 1'000'000'000) {
          fraction = fraction * 10 + (text[i] - '0');
          fraction_scale *= 10;
        } else if (text[i] != '0') {
          return fail("too many decimals");
        }
        ++i;
      }
    }
    if (i == start || (i == start + 1 && text[start] == '.')) {
      return fail(text[start] == '-' ? "must not be negative" : "expected a number");
    }
    int64_t unit_us = 0;
    if (text.substr(i, 2) == "ms") {
      unit_us = 1'000;
      i += 2;
    } else if (i < text.size() && text[i] == 'h') {
      unit_us = 3'600'000'000;
      ++i;
    } else if (i < text.size() && text[i] == 'm') {
      unit_us = 60'000'000;
      ++i;
    } else if (i < text.size() && text[i] == 's') {
      unit_us = 1'000'000;
      ++i;
    } else {
      return fail(i == text.size() ? "missing unit" : "unknown unit");
    }
    if (whole > kMaxMs * 1000 / unit_us) return fail("too large");
    const __int128 part_us = static_cast<__int128>(whole) * unit_us +
                             static_cast<__int128>(fraction) * unit_us / fraction_scale;
    if (static_cast<__int128>(fraction) * unit_us % fraction_scale != 0) {
      return fail("finer than a microsecond");
    }
    if (part_us + total_us > static_cast<__int128>(kMaxMs) * 1000) return fail("too large");
    total_us += static_cast<int64_t>(part_us);
  }
  if (total_us % 1000 != 0) return fail("not a whole number of milliseconds");
  *out = std::chrono::milliseconds(total_us / 1000);
  return {};
}

std::string FormatDuration(std::chrono::milliseconds duration) {
  const int64_t ms = duration.count();
  if (ms == 0) return "0s";
  if (ms % 3'600'000 == 0) return fmt::format("{}h", ms / 3'600'000);
  if (ms % 60'000 == 0) return fmt::format("{}m", ms / 60'000);
  if (ms % 1'000 == 0) return fmt::format("{}s", ms / 1'000);
  return fmt::format("{}ms", ms);
}

}  // namespace capext
