// Quantity: an exact Kubernetes resource quantity (k8s.io/apimachinery resource.Quantity).
//
// Parsing accepts what resource.ParseQuantity accepts: an optional sign, a decimal number
// ("1", "1.5", ".5", "5."), then optionally one suffix: a binary SI suffix (Ki Mi Gi Ti Pi Ei), a
// decimal SI suffix (n u m "" k M G T P E) or a decimal exponent (e3, E-2, e+4). No spaces.
// Values are kept exactly (no floating point); values more precise than 1n are rounded away from
// zero to a multiple of 1n, as Kubernetes does.
//
// Where this deliberately differs from ParseQuantity (all on inputs no real manifest uses):
// - The number needs at least one digit. ParseQuantity takes some digit-less strings as zero
//   ("Ki", "m", "e3", ".", "-") but not others ("Ei", "Pi"); the ElasticQuota CRD's OpenAPI
//   pattern rejects all of them, and so do we.
// - Decimal values are limited to 36 significant digits (after rounding to 1n) and exponents to
//   int32; beyond that Parse fails with "out of range". ParseQuantity has no such limit (it uses
//   big decimals) and silently wraps exponents outside int32.
// Binary SI values are silently capped at magnitude 2^63-1, exactly like ParseQuantity:
// "8Ei" and "9223372036854775808Ei" both parse as 9223372036854775807.
//
// Thread-safety: a value type.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/status.h"

namespace capext {

class Quantity {
 public:
  enum class Format { kDecimalSI, kBinarySI, kDecimalExponent };

  Quantity() = default;  // zero, DecimalSI

  // Parses `text`: the quantity, or an Invalid status whose message quotes the input, e.g.
  // `quantity "1.2.3": unexpected character '.' at offset 3`.
  static StatusOr<Quantity> Parse(std::string_view text);

  // An exact integer amount in the given format (FromMilli(1500) is "1500m").
  static Quantity FromInt(int64_t value, Format format = Format::kDecimalSI);
  static Quantity FromMilli(int64_t milli);

  // Kubernetes' canonical string (Quantity.CanonicalizeBytes): "100m", "1536Mi", "1e3", "100u",
  // "-1". Go's String() differs only by echoing some already-canonical-valued inputs verbatim
  // ("1E3", "+1", "5."); the value is the same. Parsing the result gives an equal Quantity.
  // A BinarySI value that is not a multiple of 1024 prints as a plain integer ("3000"), which
  // reparses as DecimalSI and then prints "3k" (Go does the same).
  std::string ToString() const;

  // As Quantity.Value(): the value rounded up in magnitude (away from zero) to an integer, as
  // Go's int64 representation does: 1.5 -> 2, -1.5 -> -2, 1n -> 1.
  // Saturates at INT64_MAX/INT64_MIN when out of range (Go overflows silently).
  int64_t Value() const;
  // As Quantity.MilliValue(): value*1000 rounded away from zero. Saturates likewise.
  int64_t MilliValue() const;

  bool IsNegative() const;
  bool IsZero() const;
  Format format() const { return format_; }

  // Exact comparison: negative, zero or positive like strcmp.
  int Compare(const Quantity& other) const;
  bool operator==(const Quantity& other) const { return Compare(other) == 0; }

 private:
  Quantity(__int128 mantissa, int64_t scale, Format format);

  // value * 10^-target rounded away from zero, saturated to int64.
  int64_t ScaledValue(int target) const;

  // value = mantissa_ * 10^scale_ (exact). Invariants: |mantissa_| < 10^36; mantissa_ has no
  // trailing decimal zero (so equal values have equal representations); zero is {0, 0}.
  __int128 mantissa_ = 0;
  int32_t scale_ = 0;
  Format format_ = Format::kDecimalSI;
};

// The amount a scheduling decision uses for resource `name`: cpu in milli-units
// (MilliValue(), rounding up), every other resource in whole units (Value(), rounding up).
int64_t DecisionAmount(std::string_view resource_name, const Quantity& q);

// The Quantity that prints `amount` of resource `name` (the inverse of DecisionAmount):
// cpu as milli-units ("1500m", "2"); memory, ephemeral-storage and hugepages-* in BinarySI
// ("32Gi"; a non-multiple of 1024 prints as a plain integer, "3000", and below 1024 as DecimalSI,
// so 1000 is "1k"); everything else in DecimalSI ("110", "1k"). Unlike the scheduler's
// ToResourceList, pods are DecimalSI too (1024 pods print "1024", not "1Ki").
Quantity QuantityFromDecisionAmount(std::string_view resource_name, int64_t amount);

}  // namespace capext
