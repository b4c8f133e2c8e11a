// Quantity: an exact Kubernetes resource quantity (k8s.io/apimachinery resource.Quantity).
//
// Parsing accepts exactly what resource.ParseQuantity accepts: an optional sign, a decimal number
// ("1", "1.5", ".5", "5."), then optionally one suffix: a binary SI suffix (Ki Mi Gi Ti Pi Ei), a
// decimal SI suffix (n u m "" k M G T P E) or a decimal exponent (e3, E-2, e+4). No spaces.
// Values are kept exactly (no floating point); values more precise than 1n are rounded up to 1n,
// as Kubernetes does. Out-of-range values (beyond what Kubernetes can represent) are rejected.
//
// Thread-safety: a value type.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace capext {

class Quantity {
 public:
  enum class Format { kDecimalSI, kBinarySI, kDecimalExponent };

  Quantity() = default;  // zero, DecimalSI

  // Parses `text`. On success returns true and sets *out. On failure returns false and sets
  // *error to a reason that quotes the input, e.g. `quantity "1.2.3": unexpected character '.'`.
  static bool Parse(std::string_view text, Quantity* out, std::string* error);

  // An exact integer amount in the given format (FromMilli(1500) is "1500m").
  static Quantity FromInt(int64_t value, Format format = Format::kDecimalSI);
  static Quantity FromMilli(int64_t milli);

  // Kubernetes' canonical string (Quantity.String()): "100m", "1536Mi", "1e3", "100u", "-1".
  std::string ToString() const;

  // As Quantity.Value(): the value rounded up (towards +infinity) to an integer.
  // Saturates at INT64_MAX/INT64_MIN when out of range.
  int64_t Value() const;
  // As Quantity.MilliValue(): value*1000 rounded up (towards +infinity). Saturates likewise.
  int64_t MilliValue() const;

  bool IsNegative() const;
  bool IsZero() const;
  Format format() const { return format_; }

  // Exact comparison: negative, zero or positive like strcmp.
  int Compare(const Quantity& other) const;
  bool operator==(const Quantity& other) const { return Compare(other) == 0; }

 private:
  // value = mantissa_ * 10^scale_ (exact). The parser keeps mantissa_ within +-10^36.
  __int128 mantissa_ = 0;
  int32_t scale_ = 0;
  Format format_ = Format::kDecimalSI;
};

// The amount a scheduling decision uses for resource `name`: cpu in milli-units
// (MilliValue(), rounding up), every other resource in whole units (Value(), rounding up).
int64_t DecisionAmount(std::string_view resource_name, const Quantity& q);

// The Quantity that prints `amount` of resource `name` (the inverse of DecisionAmount):
// cpu as milli-units ("1500m", "2"), memory-like resources in BinarySI when exact ("32Gi"),
// everything else as a plain DecimalSI integer.
Quantity QuantityFromDecisionAmount(std::string_view resource_name, int64_t amount);

}  // namespace capext
