// TokenBucket: a rate limit that allows bursts. Holds up to `burst` tokens, refilled at `rate`
// tokens per second; a write takes one. The clock is passed in (milliseconds), so tests and the
// simulator can drive it.
// Thread-safety: none; the owner serializes calls.
#pragma once

#include <algorithm>
#include <cstdint>

namespace capext {

class TokenBucket {
 public:
  // REQUIRES: rate > 0, burst >= 1. Starts full.
  TokenBucket(double rate_per_second, double burst)
      : rate_per_ms_(rate_per_second / 1000.0), burst_(burst), tokens_(burst) {}

  // Takes one token if there is one at `now_ms`. Time going backwards refills nothing.
  bool TryTake(int64_t now_ms) {
    Refill(now_ms);
    if (tokens_ < 1.0) return false;
    tokens_ -= 1.0;
    return true;
  }
  // Gives back a token taken but not used (capped at the burst).
  void GiveBack() { tokens_ = std::min(burst_, tokens_ + 1.0); }
  // True when at `now_ms` the bucket is full again (an idle bucket that can be dropped).
  bool Full(int64_t now_ms) const {
    const double elapsed =
        started_ && now_ms > last_ms_ ? static_cast<double>(now_ms - last_ms_) : 0;
    return tokens_ + elapsed * rate_per_ms_ >= burst_;
  }

 private:
  void Refill(int64_t now_ms) {
    if (!started_) {
      started_ = true;
      last_ms_ = now_ms;
      return;
    }
    if (now_ms <= last_ms_) return;
    tokens_ = std::min(burst_, tokens_ + static_cast<double>(now_ms - last_ms_) * rate_per_ms_);
    last_ms_ = now_ms;
  }

  double rate_per_ms_;
  double burst_;
  double tokens_;
  int64_t last_ms_ = 0;
  bool started_ = false;
};

}  // namespace capext
