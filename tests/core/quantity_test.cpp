// Tests for capext::Quantity against the behaviour of k8s.io/apimachinery resource.Quantity.
// Expected values were derived from ParseQuantity / CanonicalizeBytes / Value / MilliValue
// (and the upstream quantity_test.go tables where they cover the same input).
#include "core/quantity.h"

#include <catch2/catch.hpp>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace capext {
namespace quantity_test {
namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

using Format = Quantity::Format;

Quantity MustParse(const std::string& text) {
  INFO(text);
  StatusOr<Quantity> parsed = Quantity::Parse(text);
  REQUIRE(parsed.ok());
  CHECK(parsed.status().message().empty());
  return parsed.value();
}

struct Accepted {
  std::string input;
  int64_t value;
  int64_t milli;
  std::string canonical;
  Format format;
};

const std::vector<Accepted>& AcceptedCases() {
  static const std::vector<Accepted> cases = {
      // Required by the brief.
      {"100m", 1, 100, "100m", Format::kDecimalSI},
      {"0.1", 1, 100, "100m", Format::kDecimalSI},
      {"1", 1, 1000, "1", Format::kDecimalSI},
      {"1.5", 2, 1500, "1500m", Format::kDecimalSI},
      {"1e3", 1000, 1000000, "1e3", Format::kDecimalExponent},
      {"1E3", 1000, 1000000, "1e3", Format::kDecimalExponent},
      {"2k", 2000, 2000000, "2k", Format::kDecimalSI},
      {"1Ki", 1024, 1024000, "1Ki", Format::kBinarySI},
      {"1.5Gi", 1610612736, 1610612736000, "1536Mi", Format::kBinarySI},
      {"1M", 1000000, 1000000000, "1M", Format::kDecimalSI},
      {"1Mi", 1048576, 1048576000, "1Mi", Format::kBinarySI},
      {"129e6", 129000000, 129000000000, "129e6", Format::kDecimalExponent},
      {"123Mi", 128974848, 128974848000, "123Mi", Format::kBinarySI},
      {"0", 0, 0, "0", Format::kDecimalSI},
      {"0.001", 1, 1, "1m", Format::kDecimalSI},
      {"100u", 1, 1, "100u", Format::kDecimalSI},
      {"1n", 1, 1, "1n", Format::kDecimalSI},
      {"-1", -1, -1000, "-1", Format::kDecimalSI},
      // Number forms.
      {".5", 1, 500, "500m", Format::kDecimalSI},
      {"5.", 5, 5000, "5", Format::kDecimalSI},
      {"+1", 1, 1000, "1", Format::kDecimalSI},
      {"007", 7, 7000, "7", Format::kDecimalSI},
      {"1.G", 1000000000, 1000000000000, "1G", Format::kDecimalSI},
      {"1.500k", 1500, 1500000, "1500", Format::kDecimalSI},
      {"100.035k", 100035, 100035000, "100035", Format::kDecimalSI},
      {"1.2345", 2, 1235, "1234500u", Format::kDecimalSI},
      {"-0", 0, 0, "0", Format::kDecimalSI},
      {"0Ki", 0, 0, "0", Format::kBinarySI},
      {"0.000e5", 0, 0, "0", Format::kDecimalExponent},
      // Exponents.
      {"1e-3", 1, 1, "1e-3", Format::kDecimalExponent},
      {"1e0", 1, 1000, "1", Format::kDecimalExponent},
      {"1e+3", 1000, 1000000, "1e3", Format::kDecimalExponent},
      {"1e4", 10000, 10000000, "10e3", Format::kDecimalExponent},
      {"1.3E+6", 1300000, 1300000000, "1300e3", Format::kDecimalExponent},
      {"0.5e-2", 1, 5, "5e-3", Format::kDecimalExponent},
      {"1e003", 1000, 1000000, "1e3", Format::kDecimalExponent},
      // Rounding up to nano precision (away from zero).
      {"0.0000000001", 1, 1, "1n", Format::kDecimalSI},
      {"0.00000000050", 1, 1, "1n", Format::kDecimalSI},
      {"0.9n", 1, 1, "1n", Format::kDecimalSI},
      {"3.001n", 1, 1, "4n", Format::kDecimalSI},
      {"0.00000012345", 1, 1, "124n", Format::kDecimalSI},
      {"1.9999999999", 2, 2000, "2", Format::kDecimalSI},
      {"1.1E-9", 1, 1, "2e-9", Format::kDecimalExponent},
      {"0.5e-9", 1, 1, "1e-9", Format::kDecimalExponent},
      {"1e-2147483648", 1, 1, "1e-9", Format::kDecimalExponent},
      {"-0.0000000001", -1, -1, "-1n", Format::kDecimalSI},
      // Negative values round away from zero, as Go's int64 amounts do.
      {"-1.5", -2, -1500, "-1500m", Format::kDecimalSI},
      {"-0.5m", -1, -1, "-500u", Format::kDecimalSI},
      {"-100m", -1, -100, "-100m", Format::kDecimalSI},
      // Binary SI.
      {"0.5Ki", 512, 512000, "512", Format::kBinarySI},
      {"1023.5Ki", 1048064, 1048064000, "1048064", Format::kBinarySI},
      {"1.0001Ki", 1025, 1024103, "1024102400u", Format::kBinarySI},
      {"100.035Ki", 102436, 102435840, "102435840m", Format::kBinarySI},
      {"0.05Gi", 53687092, 53687091200, "53687091200m", Format::kBinarySI},
      {".000000000001Ki", 1, 1, "2n", Format::kDecimalSI},
      {".001Ki", 2, 1024, "1024m", Format::kBinarySI},
      {"1024Mi", 1073741824, 1073741824000, "1Gi", Format::kBinarySI},
      {"-1.5Ki", -1536, -1536000, "-1536", Format::kBinarySI},
      {"-1Ki", -1024, -1024000, "-1Ki", Format::kBinarySI},
      {"7Ei", 8070450532247928832, kMax, "7Ei", Format::kBinarySI},
      // Binary SI magnitudes are capped at 2^63-1 (ParseQuantity's maxAllowed), not rejected.
      {"8Ei", kMax, kMax, "9223372036854775807", Format::kBinarySI},
      {"9Ei", kMax, kMax, "9223372036854775807", Format::kBinarySI},
      {"9223372036854775807Ki", kMax, kMax, "9223372036854775807", Format::kBinarySI},
      {"9223372036854775808Ei", kMax, kMax, "9223372036854775807", Format::kBinarySI},
      {"-8Ei", -kMax, kMin, "-9223372036854775807", Format::kBinarySI},
      {"8191.999999999999999999Pi", kMax, kMax, "9223372036854775807", Format::kBinarySI},
      // 2^63 - 2^50/10^14, just below the cap, rounded up to nano.
      {"8191.99999999999999Pi", 9223372036854775797, kMax, "9223372036854775796741000932n",
       Format::kBinarySI},
      // Near the int64 limits: decimal values are exact and unbounded; the accessors saturate.
      {"9223372036854775807", kMax, kMax, "9223372036854775807", Format::kDecimalSI},
      {"9223372036854775808", kMax, kMax, "9223372036854775808", Format::kDecimalSI},
      {"-9223372036854775808", kMin, kMin, "-9223372036854775808", Format::kDecimalSI},
      {"-9223372036854775809", kMin, kMin, "-9223372036854775809", Format::kDecimalSI},
      {"9223372036854775807m", 9223372036854776, kMax, "9223372036854775807m", Format::kDecimalSI},
      {"9223372036854775.807", 9223372036854776, kMax, "9223372036854775807m", Format::kDecimalSI},
      {"9223372036854775.806", 9223372036854776, 9223372036854775806, "9223372036854775806m",
       Format::kDecimalSI},
      {"-9223372036854775.808", -9223372036854776, kMin, "-9223372036854775808m",
       Format::kDecimalSI},
      {"999999999999999999.1", 1000000000000000000, kMax, "999999999999999999100m",
       Format::kDecimalSI},
      {"9999999999999999999000m", kMax, kMax, "9999999999999999999", Format::kDecimalSI},
      {"1E", 1000000000000000000, kMax, "1E", Format::kDecimalSI},
      {"12E", kMax, kMax, "12E", Format::kDecimalSI},
      {"10000000000000000000", kMax, kMax, "10E", Format::kDecimalSI},
      // DecimalSI beyond E falls back to the exponent form (current Kubernetes).
      {"1000E", kMax, kMax, "1e21", Format::kDecimalSI},
      {"-5000E", kMin, kMin, "-5e21", Format::kDecimalSI},
      {"1e2147483647", kMax, kMax, "10e2147483646", Format::kDecimalExponent},
      {"123456789012345678901234567890123456", kMax, kMax, "123456789012345678901234567890123456",
       Format::kDecimalSI},
      {"1000000000000000000000000000000000000000000000", kMax, kMax, "1e45", Format::kDecimalSI},
  };
  return cases;
}

TEST_CASE("Quantity parses, converts and prints like Kubernetes", "[quantity]") {
  for (const Accepted& c : AcceptedCases()) {
    INFO("input: " << c.input);
    const Quantity q = MustParse(c.input);
    CHECK(q.Value() == c.value);
    CHECK(q.MilliValue() == c.milli);
    CHECK(q.ToString() == c.canonical);
    CHECK(q.format() == c.format);
    CHECK(q.IsZero() == (c.canonical == "0"));
    CHECK(q.IsNegative() == (c.canonical[0] == '-'));
  }
}

TEST_CASE("Quantity ToString round trips and is stable", "[quantity]") {
  for (const Accepted& c : AcceptedCases()) {
    INFO("input: " << c.input);
    const Quantity q = MustParse(c.input);
    const std::string printed = q.ToString();
    const Quantity again = MustParse(printed);
    CHECK(again == q);
    CHECK(again.Value() == q.Value());
    CHECK(again.MilliValue() == q.MilliValue());
    CHECK(again.ToString() == printed);
  }
}

TEST_CASE("Quantity BinarySI plain integers reprint as DecimalSI, as in Go", "[quantity]") {
  // 3000 is BinarySI but no multiple of 1024: it prints "3000", which parses as DecimalSI.
  const Quantity q = MustParse("2.9296875Ki");
  CHECK(q.Value() == 3000);
  CHECK(q.ToString() == "3000");
  const Quantity again = MustParse(q.ToString());
  CHECK(again == q);
  CHECK(again.format() == Format::kDecimalSI);
  CHECK(again.ToString() == "3k");
}

TEST_CASE("Quantity rejects malformed and out-of-range input", "[quantity]") {
  const std::vector<std::string> rejected = {
      // Required by the brief.
      "1.2.3", "1Gb", "Ki", "", " 1", "1e",
      // More malformed forms.
      "1 ", "--1", "1KiB", "e3", "0x10", ".", "+", "-", "-.", "m", "1ki", "1e+", "1e-", "1e1.5",
      "1ee3", "1i", ".5i", "0.1mi", "0.1am", "1+1.0M", "1.1.M", "-3.01e-", "aoeu", "1E3 ", "1\t",
      "1,5", "1_000", "\xef\xbc\x91", std::string("1\0", 2), "1Ei5", "1kk",
      // Out of our range: more than 36 significant digits, exponents beyond int32.
      "1234567890123456789012345678901234567", "1e2147483648", "1e-2147483649", "10e2147483647",
      "1e99999999999999999999"};
  for (const std::string& text : rejected) {
    INFO("input: " << text);
    const StatusOr<Quantity> parsed = Quantity::Parse(text);
    CHECK_FALSE(parsed.ok());
    CHECK(parsed.status().code() == StatusCode::kInvalid);
    CHECK_FALSE(parsed.status().message().empty());
  }
}

TEST_CASE("Quantity parse errors quote the input and say why", "[quantity]") {
  const auto error_for = [](const std::string& text) {
    const StatusOr<Quantity> parsed = Quantity::Parse(text);
    REQUIRE_FALSE(parsed.ok());
    return parsed.status().message();
  };
  CHECK(error_for("1.2.3") == "quantity \"1.2.3\": unexpected character '.' at offset 3");
  CHECK(error_for("").rfind("quantity \"\": ", 0) == 0);
  CHECK_THAT(error_for("1Gb"), Catch::StartsWith("quantity \"1Gb\": unknown suffix \"Gb\""));
  CHECK_THAT(error_for("Ki"), Catch::StartsWith("quantity \"Ki\": expected a digit"));
  CHECK_THAT(error_for(" 1"), Catch::StartsWith("quantity \" 1\": expected a digit"));
  CHECK_THAT(error_for("1e"), Catch::StartsWith("quantity \"1e\": missing exponent"));
  CHECK_THAT(error_for("9e2147483648"), Catch::Contains("out of range"));
  CHECK_THAT(error_for("1234567890123456789012345678901234567"), Catch::Contains("out of range"));
  // Control bytes and quotes are escaped; huge inputs are cut.
  CHECK(error_for("1\"\n").rfind("quantity \"1\\\"\\x0a\": ", 0) == 0);
  const std::string huge = "1" + std::string(1000, 'x');
  CHECK(error_for(huge).size() < 400);
}

TEST_CASE("Quantity Compare is exact", "[quantity]") {
  struct Cmp {
    std::string a;
    std::string b;
    int want;
  };
  const std::vector<Cmp> cases = {
      {"0", "0", 0},
      {"0", "-0", 0},
      {"0Ki", "0e3", 0},
      {"100m", "50m", 1},
      {"1000m", "1", 0},
      {"0.5", "500m", 0},
      {"1e3", "1k", 0},
      {"1Ki", "1k", 1},
      {"1Gi", "1073741824", 0},
      {"10000T", "100Gi", 1},
      {"-1", "0", -1},
      {"-1", "-2", 1},
      {"-1e30", "-1e29", -1},
      {"1n", "0", 1},
      {"1n", "2n", -1},
      {"999999999999999999999999999999999999", "1e36", -1},
      {"1e2147483647", "9223372036854775807", 1},
      {"9223372036854775807", "8Ei", 0},
      {"9223372036854775808", "8Ei", 1},
      {"1.000000001", "1", 1},
      {"0.9999999999", "1", 0},  // rounds up to 1n precision: 0.999999999 + 1n == 1
  };
  for (const Cmp& c : cases) {
    INFO(c.a << " vs " << c.b);
    const Quantity a = MustParse(c.a);
    const Quantity b = MustParse(c.b);
    CHECK(a.Compare(b) == c.want);
    CHECK(b.Compare(a) == -c.want);
    CHECK((a == b) == (c.want == 0));
  }
}

TEST_CASE("Quantity constructors", "[quantity]") {
  const Quantity zero;
  CHECK(zero.IsZero());
  CHECK(zero.ToString() == "0");
  CHECK(zero.format() == Format::kDecimalSI);
  CHECK(zero == MustParse("0"));

  CHECK(Quantity::FromMilli(1500).ToString() == "1500m");
  CHECK(Quantity::FromMilli(2000).ToString() == "2");
  CHECK(Quantity::FromMilli(1).ToString() == "1m");
  CHECK(Quantity::FromMilli(-1500).MilliValue() == -1500);
  CHECK(Quantity::FromMilli(kMax).MilliValue() == kMax);
  CHECK(Quantity::FromMilli(kMin).MilliValue() == kMin);
  CHECK(Quantity::FromMilli(1024).ToString() == "1024m");
  CHECK(Quantity::FromInt(1000).ToString() == "1k");
  CHECK(Quantity::FromInt(1234000).ToString() == "1234k");
  CHECK(Quantity::FromInt(1000000, Format::kDecimalExponent).ToString() == "1e6");
  CHECK(Quantity::FromInt(1024, Format::kBinarySI).ToString() == "1Ki");
  CHECK(Quantity::FromInt(5, Format::kBinarySI).ToString() == "5");
  CHECK(Quantity::FromInt(kMax).ToString() == "9223372036854775807");
  CHECK(Quantity::FromInt(kMax).Value() == kMax);
  CHECK(Quantity::FromInt(kMin).Value() == kMin);
  CHECK(Quantity::FromInt(kMin).MilliValue() == kMin);
  CHECK(Quantity::FromInt(kMin, Format::kBinarySI).ToString() == "-8Ei");
  CHECK(Quantity::FromInt(kMin).ToString() == "-9223372036854775808");
  CHECK(Quantity::FromInt(1000) == MustParse("1k"));
}

TEST_CASE("DecisionAmount: cpu in milli-units, everything else in units", "[quantity]") {
  CHECK(DecisionAmount("cpu", MustParse("1.5")) == 1500);
  CHECK(DecisionAmount("cpu", MustParse("100u")) == 1);
  CHECK(DecisionAmount("cpu", MustParse("2")) == 2000);
  CHECK(DecisionAmount("memory", MustParse("1.5Gi")) == 1610612736);
  CHECK(DecisionAmount("memory", MustParse("100m")) == 1);
  CHECK(DecisionAmount("nvidia.com/gpu", MustParse("2")) == 2);
  CHECK(DecisionAmount("pods", MustParse("1k")) == 1000);
  CHECK(DecisionAmount("requests.cpu", MustParse("1.5")) == 2);  // only "cpu" is milli
}

TEST_CASE("QuantityFromDecisionAmount prints amounts in each resource's format", "[quantity]") {
  struct Case {
    std::string name;
    int64_t amount;
    std::string printed;
  };
  const std::vector<Case> cases = {
      {"cpu", 1500, "1500m"},
      {"cpu", 2000, "2"},
      {"cpu", 0, "0"},
      {"cpu", 1, "1m"},
      {"cpu", -500, "-500m"},
      {"memory", 34359738368, "32Gi"},
      {"memory", 1536 * 1048576LL, "1536Mi"},
      {"memory", 3000, "3000"},
      {"memory", 1000, "1k"},  // |value| < 1024 prints as DecimalSI, as in Go
      {"memory", 1023, "1023"},
      {"memory", kMax, "9223372036854775807"},
      {"ephemeral-storage", 1073741824, "1Gi"},
      {"hugepages-2Mi", 2097152, "2Mi"},
      {"hugepages-1Gi", 1073741824, "1Gi"},
      {"nvidia.com/gpu", 4, "4"},
      {"nvidia.com/gpu", 2048, "2048"},
      {"pods", 110, "110"},
      {"pods", 1000, "1k"},
      {"pods", 1024, "1024"},  // DecimalSI by design; the scheduler's ToResourceList says "1Ki"
  };
  for (const Case& c : cases) {
    INFO(c.name << " " << c.amount);
    const Quantity q = QuantityFromDecisionAmount(c.name, c.amount);
    CHECK(q.ToString() == c.printed);
    CHECK(DecisionAmount(c.name, q) == c.amount);
    CHECK(DecisionAmount(c.name, MustParse(c.printed)) == c.amount);
  }
}

}  // namespace
}  // namespace quantity_test
}  // namespace capext
