// libFuzzer target for capext::Quantity::Parse / ToString.
// Properties checked on every input:
// - Parse never crashes; a rejection always carries a message that quotes the input.
// - Parse accepts only the Kubernetes quantity grammar (with at least one digit), and rejects a
//   grammatical input only as "out of range".
// - An accepted quantity prints to a string that parses back to an equal value with the same
//   Value()/MilliValue(); that string is a fixed point of print(parse(.)). It is also the
//   reprint of itself, except for a BinarySI value printed as a plain integer ("3000"), which
//   reparses as DecimalSI ("3k"), as in Kubernetes.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "core/quantity.h"

namespace {

bool IsDigit(char c) {
  return c >= '0' && c <= '9';
}

// ^[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([KMGTPE]i|[numkMGTPE]|[eE][+-]?[0-9]+)?$
bool MatchesGrammar(std::string_view s) {
  size_t i = 0;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
  size_t digits = 0;
  while (i < s.size() && IsDigit(s[i]))
    ++i, ++digits;
  if (i < s.size() && s[i] == '.') {
    ++i;
    while (i < s.size() && IsDigit(s[i]))
      ++i, ++digits;
  }
  if (digits == 0) return false;
  const std::string_view suffix = s.substr(i);
  if (suffix.empty()) return true;
  if (suffix.size() == 1)
    return std::string_view("numkMGTPE").find(suffix[0]) != std::string_view::npos;
  if (suffix.size() == 2 && suffix[1] == 'i' &&
      std::string_view("KMGTPE").find(suffix[0]) != std::string_view::npos) {
    return true;
  }
  if (suffix[0] != 'e' && suffix[0] != 'E') return false;
  size_t j = 1;
  if (suffix[j] == '+' || suffix[j] == '-') ++j;
  if (j == suffix.size()) return false;
  for (; j < suffix.size(); ++j) {
    if (!IsDigit(suffix[j])) return false;
  }
  return true;
}

void Check(bool condition) {
  if (!condition) std::abort();
}

bool IsPlainInteger(const std::string& s) {
  for (char c : s) {
    if (!IsDigit(c) && c != '-') return false;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const capext::StatusOr<capext::Quantity> parsed = capext::Quantity::Parse(text);
  if (!parsed.ok()) {
    const std::string& error = parsed.status().message();
    Check(error.rfind("quantity \"", 0) == 0);
    Check(!MatchesGrammar(text) || error.find("out of range") != std::string::npos);
    return 0;
  }
  Check(MatchesGrammar(text));
  const capext::Quantity& q = *parsed;
  Check(q.Compare(q) == 0);

  const std::string printed = q.ToString();
  const capext::StatusOr<capext::Quantity> reparsed_or = capext::Quantity::Parse(printed);
  Check(reparsed_or.ok());
  const capext::Quantity& reparsed = *reparsed_or;
  Check(reparsed == q);
  Check(reparsed.Value() == q.Value());
  Check(reparsed.MilliValue() == q.MilliValue());
  Check(reparsed.IsNegative() == q.IsNegative());
  Check(reparsed.IsZero() == q.IsZero());

  const std::string reprinted = reparsed.ToString();
  Check(reprinted == printed ||
        (q.format() == capext::Quantity::Format::kBinarySI && IsPlainInteger(printed)));
  const capext::StatusOr<capext::Quantity> third_or = capext::Quantity::Parse(reprinted);
  Check(third_or.ok());
  const capext::Quantity& third = *third_or;
  Check(third == q);
  Check(third.ToString() == reprinted);

  // Ordering agrees with the int64 accessors where they do not saturate.
  const capext::Quantity one_milli = capext::Quantity::FromMilli(1);
  const int cmp = q.Compare(one_milli);
  Check(cmp == -one_milli.Compare(q));
  if (cmp > 0) Check(q.MilliValue() >= 1);
  if (cmp <= 0) Check(q.MilliValue() <= 1);
  return 0;
}
