// SeededRandom: a small deterministic random source for generated test data (splitmix64). The
// standard distributions are implementation-defined; these helpers are plain arithmetic, so a
// seed names the same case on every platform and standard library.
// Thread-safety: a value type; one thread per object.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <vector>

namespace capext::testing {

class SeededRandom {
 public:
  explicit SeededRandom(uint64_t seed) : state_(seed ^ 0x5DEECE66DULL) {}

  uint64_t Next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }
  // Uniform in [0, n). REQUIRES: n > 0.
  int Below(int n) { return static_cast<int>(Next() % static_cast<uint64_t>(n)); }
  // Uniform in [lo, hi]. REQUIRES: lo <= hi.
  int Between(int lo, int hi) { return lo + Below(hi - lo + 1); }
  int64_t Between64(int64_t lo, int64_t hi) {
    return lo + static_cast<int64_t>(Next() % static_cast<uint64_t>(hi - lo + 1));
  }
  // True with probability percent / 100.
  bool Chance(int percent) { return Below(100) < percent; }
  template <typename T>
  const T& Pick(const std::vector<T>& from) {
    return from[static_cast<std::size_t>(Below(static_cast<int>(from.size())))];
  }
  template <typename T>
  T Pick(std::initializer_list<T> from) {
    return *(from.begin() + Below(static_cast<int>(from.size())));
  }

 private:
  uint64_t state_;
};

}  // namespace capext::testing
