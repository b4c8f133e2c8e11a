// Quantity: see quantity.h. Semantics follow k8s.io/apimachinery/pkg/api/resource (ParseQuantity,
// CanonicalizeBytes, Value/MilliValue); the arithmetic is our own, on a bounded decimal mantissa.
#include "core/quantity.h"

#include <array>
#include <cassert>
#include <limits>
#include <string>
#include <string_view>

#include "core/quantity_internal.h"

namespace capext {
namespace {

using namespace quantity_internal;  // NOLINT: this file is its other half

[[maybe_unused]] constexpr UInt128 kMantissaLimit = Pow10(kMaxDigits);

bool IsDigit(char c) {
  return c >= '0' && c <= '9';
}
bool IsAlnum(char c) {
  return IsDigit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

// The input as it appears in error messages: quoted, escaped, and cut at 128 bytes so a huge
// input cannot produce a huge message.
std::string Quote(std::string_view text) {
  constexpr size_t kMaxShown = 128;
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out = "\"";
  for (size_t i = 0; i < text.size() && i < kMaxShown; ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
    } else {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 0xf];
    }
  }
  out += '"';
  if (text.size() > kMaxShown) out += "...";
  return out;
}

std::string QuoteChar(char c) {
  std::string quoted = Quote(std::string_view(&c, 1));
  quoted.front() = '\'';
  quoted.back() = '\'';
  return quoted;
}

struct Suffix {
  Quantity::Format format = Quantity::Format::kDecimalSI;
  // The value is number * 2^binary_exponent (BinarySI) or number * 10^decimal_exponent.
  int binary_exponent = 0;
  int64_t decimal_exponent = 0;
};

struct SuffixEntry {
  std::string_view text;
  Quantity::Format format;
  int exponent;
};

constexpr std::array<SuffixEntry, 16> kSuffixes = {{
    {"", Quantity::Format::kDecimalSI, 0},
    {"n", Quantity::Format::kDecimalSI, -9},
    {"u", Quantity::Format::kDecimalSI, -6},
    {"m", Quantity::Format::kDecimalSI, -3},
    {"k", Quantity::Format::kDecimalSI, 3},
    {"M", Quantity::Format::kDecimalSI, 6},
    {"G", Quantity::Format::kDecimalSI, 9},
    {"T", Quantity::Format::kDecimalSI, 12},
    {"P", Quantity::Format::kDecimalSI, 15},
    {"E", Quantity::Format::kDecimalSI, 18},
    {"Ki", Quantity::Format::kBinarySI, 10},
    {"Mi", Quantity::Format::kBinarySI, 20},
    {"Gi", Quantity::Format::kBinarySI, 30},
    {"Ti", Quantity::Format::kBinarySI, 40},
    {"Pi", Quantity::Format::kBinarySI, 50},
    {"Ei", Quantity::Format::kBinarySI, 60},
}};

// Interprets the text after the number. `offset` is where `suffix` starts in the input, for
// messages. On failure the status's message is the reason, without the input.
StatusOr<Suffix> InterpretSuffix(std::string_view suffix, size_t offset) {
  for (const SuffixEntry& entry : kSuffixes) {
    if (suffix != entry.text) continue;
    if (entry.format == Quantity::Format::kBinarySI) return Suffix{entry.format, entry.exponent, 0};
    return Suffix{entry.format, 0, entry.exponent};
  }
  const bool exponent_form = suffix.size() > 1 && (suffix[0] == 'e' || suffix[0] == 'E');
  if (exponent_form) {
    // Go parses the exponent with strconv.ParseInt: an optional sign, then decimal digits.
    size_t i = 1;
    bool negative = false;
    if (suffix[i] == '+' || suffix[i] == '-') {
      negative = suffix[i] == '-';
      ++i;
    }
    const size_t digits_begin = i;
    // Saturates just past the int32 range; leading zeros are harmless.
    constexpr int64_t kLimit = int64_t{1} << 31;
    int64_t magnitude = 0;
    while (i < suffix.size() && IsDigit(suffix[i])) {
      magnitude = magnitude * 10 + (suffix[i] - '0');
      if (magnitude > kLimit) magnitude = kLimit + 1;
      ++i;
    }
    if (i == suffix.size() && i > digits_begin) {
      const int64_t exponent = negative ? -magnitude : magnitude;
      if (exponent < std::numeric_limits<int32_t>::min() ||
          exponent > std::numeric_limits<int32_t>::max()) {
        return Status::Invalid("out of range: exponent " + std::string(suffix.substr(1)) +
                               " does not fit in 32 bits");
      }
      return Suffix{Quantity::Format::kDecimalExponent, 0, exponent};
    }
  }
  for (size_t i = 0; i < suffix.size(); ++i) {
    const char c = suffix[i];
    const bool exponent_sign = exponent_form && i == 1 && (c == '+' || c == '-');
    if (!IsAlnum(c) && !exponent_sign) {
      return Status::Invalid("unexpected character " + QuoteChar(c) + " at offset " +
                             std::to_string(offset + i));
    }
  }
  if (suffix == "e") return Status::Invalid("missing exponent digits after \"e\"");
  if (exponent_form) return Status::Invalid("invalid exponent " + Quote(suffix));
  return Status::Invalid("unknown suffix " + Quote(suffix) +
                         " (want one of n u m k M G T P E Ki Mi Gi Ti Pi Ei, or e<exponent>)");
}

// digits (ASCII '0'-'9', most significant first) *= 1024.
void MultiplyBy1024(std::string* digits) {
  unsigned carry = 0;
  for (size_t i = digits->size(); i-- > 0;) {
    const unsigned v = static_cast<unsigned>((*digits)[i] - '0') * 1024U + carry;
    (*digits)[i] = static_cast<char>('0' + v % 10);
    carry = v / 10;
  }
  std::string head;
  while (carry != 0) {
    head.insert(head.begin(), static_cast<char>('0' + carry % 10));
    carry /= 10;
  }
  digits->insert(0, head);
}

// digits += 1 (ASCII decimal, non-empty).
void Increment(std::string* digits) {
  for (size_t i = digits->size(); i-- > 0;) {
    if ((*digits)[i] != '9') {
      ++(*digits)[i];
      return;
    }
    (*digits)[i] = '0';
  }
  digits->insert(digits->begin(), '1');
}

// Removes trailing zeros from a digit string that has a non-zero digit, adding them to *exponent.
void StripTrailingZeros(std::string* digits, int64_t* exponent) {
  size_t end = digits->size();
  while (end > 1 && (*digits)[end - 1] == '0')
    --end;
  *exponent += static_cast<int64_t>(digits->size() - end);
  digits->resize(end);
}

UInt128 ParseDigits(std::string_view digits) {
  UInt128 v = 0;
  for (char c : digits)
    v = v * 10 + static_cast<unsigned>(c - '0');
  return v;
}

}  // namespace

Quantity::Quantity(Int128 mantissa, int64_t scale, Format format) : format_(format) {
  if (mantissa == 0) return;
  while (mantissa % 10 == 0) {
    mantissa /= 10;
    ++scale;
  }
  assert(Magnitude(mantissa) < kMantissaLimit);
  assert(scale >= std::numeric_limits<int32_t>::min() &&
         scale <= std::numeric_limits<int32_t>::max());
  mantissa_ = mantissa;
  scale_ = static_cast<int32_t>(scale);
}

StatusOr<Quantity> Quantity::Parse(std::string_view text) {
  const auto fail = [&](const std::string& reason) {
    return Status::Invalid("quantity " + Quote(text) + ": " + reason);
  };
  if (text.empty()) return fail("empty string");

  // <sign>? <digits> [ '.' <digits> ] <suffix>; at least one digit overall.
  size_t pos = 0;
  bool negative = false;
  if (text[0] == '+' || text[0] == '-') {
    negative = text[0] == '-';
    pos = 1;
  }
  const size_t int_begin = pos;
  while (pos < text.size() && IsDigit(text[pos]))
    ++pos;
  const std::string_view int_digits = text.substr(int_begin, pos - int_begin);
  std::string_view frac_digits;
  if (pos < text.size() && text[pos] == '.') {
    const size_t frac_begin = ++pos;
    while (pos < text.size() && IsDigit(text[pos]))
      ++pos;
    frac_digits = text.substr(frac_begin, pos - frac_begin);
  }
  if (int_digits.empty() && frac_digits.empty()) {
    if (pos == text.size()) return fail("no digits");
    return fail("expected a digit at offset " + std::to_string(pos) + ", found " +
                QuoteChar(text[pos]));
  }

  const StatusOr<Suffix> interpreted = InterpretSuffix(text.substr(pos), pos);
  if (!interpreted.ok()) return fail(interpreted.status().message());
  const Suffix suffix = *interpreted;
  const bool binary = suffix.format == Format::kBinarySI;

  // value = digits * 10^exponent, exactly; a binary suffix is folded into the digits.
  std::string digits;
  digits.reserve(int_digits.size() + frac_digits.size() + 19);
  digits.append(int_digits);
  digits.append(frac_digits);
  int64_t exponent = suffix.decimal_exponent - static_cast<int64_t>(frac_digits.size());
  for (int i = 0; i < suffix.binary_exponent / 10; ++i)
    MultiplyBy1024(&digits);

  const size_t first = digits.find_first_not_of('0');
  if (first == std::string::npos) {
    return Quantity(0, 0, suffix.format);
  }
  digits.erase(0, first);
  StripTrailingZeros(&digits, &exponent);

  // Round finer than nano away from zero. The dropped digits include the last (non-zero) one.
  if (exponent < kNanoScale) {
    const auto drop = static_cast<uint64_t>(kNanoScale - exponent);
    if (drop >= digits.size()) {
      digits = "1";
    } else {
      digits.resize(digits.size() - static_cast<size_t>(drop));
      Increment(&digits);
    }
    exponent = kNanoScale;
    StripTrailingZeros(&digits, &exponent);
  }

  Format format = suffix.format;
  if (binary) {
    // Binary SI magnitudes above 2^63-1 are capped, not rejected. Here value >= 1n and
    // exponent >= -9, so a value with at most 19 integer digits has at most 28 digits.
    const int64_t integer_digits = static_cast<int64_t>(digits.size()) + exponent;
    bool capped = integer_digits > 19;
    if (!capped && integer_digits > 0) {
      const UInt128 value = ParseDigits(digits);
      capped = exponent >= 0 ? value * Pow10(static_cast<int>(exponent)) > kBinaryCap
                             : value > kBinaryCap * Pow10(static_cast<int>(-exponent));
    }
    if (capped) {
      const auto cap = static_cast<Int128>(kBinaryCap);
      return Quantity(negative ? -cap : cap, 0, format);
    }
    // Below 1 in magnitude the value cannot be written with a binary suffix.
    if (integer_digits <= 0) format = Format::kDecimalSI;
  }
  if (digits.size() > static_cast<size_t>(kMaxDigits)) {
    return fail("out of range: more than " + std::to_string(kMaxDigits) + " significant digits");
  }
  if (exponent > std::numeric_limits<int32_t>::max()) {
    return fail("out of range: decimal exponent too large");
  }
  const auto magnitude = static_cast<Int128>(ParseDigits(digits));
  return Quantity(negative ? -magnitude : magnitude, exponent, format);
}

}  // namespace capext
