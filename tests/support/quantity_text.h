// Kubernetes spellings of amounts and times for generated objects: the same amount is written in
// the several ways the API accepts ("2", "2000m", "1.5"; "4Gi", "4096Mi", bytes), so decoding is
// part of what the generated tests exercise.
// Thread-safety: pure functions (the random source is the caller's).
#pragma once

#include <cstdint>
#include <ctime>
#include <string>

#include "tests/support/seeded_random.h"

namespace capext::testing {

inline constexpr int64_t kMiB = int64_t{1} << 20;
inline constexpr int64_t kGiB = int64_t{1} << 30;

// A cpu amount in milli-units.
inline std::string CpuText(SeededRandom& rng, int64_t milli) {
  if (milli % 1000 == 0 && rng.Chance(70)) return std::to_string(milli / 1000);
  if (milli % 100 == 0 && milli % 1000 != 0 && rng.Chance(50)) {
    return std::to_string(milli / 1000) + "." + std::to_string(milli % 1000 / 100);
  }
  return std::to_string(milli) + "m";
}

// A byte amount.
inline std::string MemoryText(SeededRandom& rng, int64_t bytes) {
  const int form = rng.Below(10);
  if (bytes % kGiB == 0 && form < 6) return std::to_string(bytes / kGiB) + "Gi";
  if (bytes % kMiB == 0 && form < 9) return std::to_string(bytes / kMiB) + "Mi";
  return std::to_string(bytes);
}

// RFC 3339 in UTC, whole seconds, as the API server writes timestamps.
inline std::string TimeText(int64_t ms) {
  const std::time_t seconds = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  gmtime_r(&seconds, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace capext::testing
