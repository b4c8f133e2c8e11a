// Internal to core/quantity*.cpp: the exact decimal arithmetic Quantity is built on.
#pragma once

#include <array>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

namespace capext::quantity_internal {

using Int128 = __int128;
using UInt128 = unsigned __int128;

// Most significant digits a parsed decimal value may keep: with 10^36 > |mantissa|, printing
// (which multiplies by at most 100) and comparing (which aligns to at most 36 digits) stay
// below 2^127.
constexpr int kMaxDigits = 36;
// Kubernetes keeps values to nano precision (resource.Nano).
constexpr int64_t kNanoScale = -9;
// ParseQuantity caps binary SI magnitudes here (math.go: maxAllowed).
constexpr UInt128 kBinaryCap = static_cast<UInt128>(std::numeric_limits<int64_t>::max());
constexpr UInt128 kInt64MinMagnitude = static_cast<UInt128>(1) << 63;

constexpr UInt128 Pow10(int n) {
  UInt128 result = 1;
  for (int i = 0; i < n; ++i)
    result *= 10;
  return result;
}

inline int DigitCount(UInt128 v) {
  int n = 1;
  while (v >= 10) {
    v /= 10;
    ++n;
  }
  return n;
}

inline UInt128 Magnitude(Int128 v) {
  return v < 0 ? -static_cast<UInt128>(v) : static_cast<UInt128>(v);
}

inline std::string DigitsOf(UInt128 v) {
  std::array<char, 40> buf{};
  size_t pos = buf.size();
  do {
    buf[--pos] = static_cast<char>('0' + static_cast<int>(v % 10));
    v /= 10;
  } while (v != 0);
  return std::string(buf.data() + pos, buf.size() - pos);
}

// Compares |a| * 10^sa with |b| * 10^sb, both magnitudes non-zero and below 10^36.
inline int CompareMagnitude(UInt128 a, int64_t sa, UInt128 b, int64_t sb) {
  const int64_t top_a = DigitCount(a) + sa;
  const int64_t top_b = DigitCount(b) + sb;
  if (top_a != top_b) return top_a < top_b ? -1 : 1;
  // Same leading digit position: aligning the smaller scale keeps both within 36 digits.
  if (sa > sb) a *= Pow10(static_cast<int>(sa - sb));
  if (sb > sa) b *= Pow10(static_cast<int>(sb - sa));
  if (a == b) return 0;
  return a < b ? -1 : 1;
}

inline bool IsHugePages(std::string_view name) {
  return name.substr(0, 10) == "hugepages-";
}

}  // namespace capext::quantity_internal
