#include "core/fair_share_weight.h"

#include <fmt/format.h>

namespace capext {

Status ParseFairShareWeight(std::string_view text, int64_t* weight_milli) {
  auto invalid = [&] {
    return Status::Invalid(fmt::format(
        "annotation {} \"{}\" is not a weight: a decimal from 0 to 1000 with at most 3 decimals",
        kFairShareWeightAnnotation, text));
  };
  // Digits, then optionally '.' and one to three digits; nothing else (no sign, no exponent,
  // no spaces).
  std::size_t i = 0;
  int64_t whole = 0;
  int whole_digits = 0;
  while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
    if (whole_digits >= 4) return invalid();  // above 1000 anyway; keeps whole small
    whole = whole * 10 + (text[i] - '0');
    ++whole_digits;
    ++i;
  }
  if (whole_digits == 0) return invalid();
  int64_t fraction = 0;
  if (i < text.size() && text[i] == '.') {
    ++i;
    int fraction_digits = 0;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
      if (fraction_digits >= 3) return invalid();
      fraction = fraction * 10 + (text[i] - '0');
      ++fraction_digits;
      ++i;
    }
    if (fraction_digits == 0) return invalid();
    for (int d = fraction_digits; d < 3; ++d)
      fraction *= 10;
  }
  if (i != text.size()) return invalid();
  const int64_t milli = whole * 1000 + fraction;
  if (milli > kMaxWeightMilli) return invalid();
  *weight_milli = milli;
  return Status::Ok();
}

std::string FormatWeight(int64_t weight_milli) {
  std::string out = std::to_string(weight_milli / 1000);
  int64_t fraction = weight_milli % 1000;
  if (fraction == 0) return out;
  std::string digits = fmt::format("{:03d}", fraction);
  while (!digits.empty() && digits.back() == '0')
    digits.pop_back();
  return out + "." + digits;
}

}  // namespace capext
