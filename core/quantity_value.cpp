// Quantity's values, printing and comparison (see quantity.h); parsing is in quantity.cpp.
#include <string>
#include <string_view>

#include "core/quantity.h"
#include "core/quantity_internal.h"

namespace capext {

using namespace quantity_internal;  // NOLINT: the arithmetic this file is built on

Quantity Quantity::FromInt(int64_t value, Format format) {
  return Quantity(value, 0, format);
}

Quantity Quantity::FromMilli(int64_t milli) {
  return Quantity(milli, -3, Format::kDecimalSI);
}

std::string Quantity::ToString() const {
  if (mantissa_ == 0) return "0";
  const bool negative = mantissa_ < 0;
  UInt128 magnitude = Magnitude(mantissa_);
  std::string out = negative ? "-" : "";

  // BinarySI only for integers of magnitude >= 1024; a value that large with more than 38 digits
  // cannot be BinarySI (parsing caps at 2^63-1), the guard only keeps the arithmetic in range.
  if (format_ == Format::kBinarySI && scale_ >= 0 &&
      DigitCount(magnitude) + static_cast<int64_t>(scale_) <= 38 &&
      CompareMagnitude(magnitude, scale_, 1024, 0) >= 0) {
    magnitude *= Pow10(scale_);
    static constexpr std::array<std::string_view, 7> kBinary = {"",   "Ki", "Mi", "Gi",
                                                                "Ti", "Pi", "Ei"};
    size_t power = 0;
    while (power + 1 < kBinary.size() && magnitude % 1024 == 0) {
      magnitude /= 1024;
      ++power;
    }
    return out + DigitsOf(magnitude) + std::string(kBinary[power]);
  }

  // Lower the exponent to a multiple of 3 (the mantissa stays an integer).
  int64_t exponent = scale_;
  const int64_t extra = ((exponent % 3) + 3) % 3;
  magnitude *= Pow10(static_cast<int>(extra));
  exponent -= extra;
  out += DigitsOf(magnitude);

  if (format_ != Format::kDecimalExponent && exponent >= -9 && exponent <= 18) {
    static constexpr std::array<std::string_view, 10> kDecimal = {"n", "u", "m", "",  "k",
                                                                  "M", "G", "T", "P", "E"};
    return out + std::string(kDecimal[static_cast<size_t>((exponent + 9) / 3)]);
  }
  // DecimalSI has no suffix beyond E (10^18): like current Kubernetes, use the exponent form.
  if (exponent != 0) out += "e" + std::to_string(exponent);
  return out;
}

int64_t Quantity::ScaledValue(int target) const {
  if (mantissa_ == 0) return 0;
  const bool negative = mantissa_ < 0;
  const UInt128 magnitude = Magnitude(mantissa_);
  const UInt128 limit = negative ? kInt64MinMagnitude : kInt64MinMagnitude - 1;
  const int64_t shift = static_cast<int64_t>(scale_) - target;
  const int64_t saturated =
      negative ? std::numeric_limits<int64_t>::min() : std::numeric_limits<int64_t>::max();

  UInt128 result = 0;
  if (shift >= 0) {
    // 10^19 alone exceeds the int64 range; below that, magnitude <= 2^63 keeps the product
    // below 2^127.
    if (shift > 18 || magnitude > limit) return saturated;
    result = magnitude * Pow10(static_cast<int>(shift));
  } else if (-shift > kMaxDigits) {
    result = 1;  // 0 < |value| < 10^36 * 10^shift <= 1 unit.
  } else {
    const UInt128 divisor = Pow10(static_cast<int>(-shift));
    result = magnitude / divisor + (magnitude % divisor != 0 ? 1 : 0);
  }
  if (result > limit) return saturated;
  return negative ? static_cast<int64_t>(-static_cast<Int128>(result))
                  : static_cast<int64_t>(result);
}

int64_t Quantity::Value() const {
  return ScaledValue(0);
}

int64_t Quantity::MilliValue() const {
  return ScaledValue(-3);
}

bool Quantity::IsNegative() const {
  return mantissa_ < 0;
}

bool Quantity::IsZero() const {
  return mantissa_ == 0;
}

int Quantity::Compare(const Quantity& other) const {
  const int sign = (mantissa_ > 0) - (mantissa_ < 0);
  const int other_sign = (other.mantissa_ > 0) - (other.mantissa_ < 0);
  if (sign != other_sign) return sign < other_sign ? -1 : 1;
  if (sign == 0) return 0;
  const int by_magnitude =
      CompareMagnitude(Magnitude(mantissa_), scale_, Magnitude(other.mantissa_), other.scale_);
  return sign > 0 ? by_magnitude : -by_magnitude;
}

int64_t DecisionAmount(std::string_view resource_name, const Quantity& q) {
  return resource_name == "cpu" ? q.MilliValue() : q.Value();
}

Quantity QuantityFromDecisionAmount(std::string_view resource_name, int64_t amount) {
  if (resource_name == "cpu") return Quantity::FromMilli(amount);
  if (resource_name == "memory" || resource_name == "ephemeral-storage" ||
      IsHugePages(resource_name)) {
    return Quantity::FromInt(amount, Quantity::Format::kBinarySI);
  }
  return Quantity::FromInt(amount, Quantity::Format::kDecimalSI);
}

}  // namespace capext
