#include "bench/sim/tenant_rule.h"

#include <cctype>
#include <charconv>

namespace capext {

std::string TenantRule::ToString() const {
  return kind == Kind::kQos ? "qos" : "hash:" + std::to_string(buckets);
}

StatusOr<TenantRule> ParseTenantRule(std::string_view text) {
  if (text == "qos") return TenantRule{TenantRule::Kind::kQos, 0};
  if (text.starts_with("hash:")) {
    std::string_view digits = text.substr(5);
    int n = 0;
    auto [p, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), n);
    if (ec == std::errc() && p == digits.data() + digits.size() && n >= 1 && n <= 10000) {
      return TenantRule{TenantRule::Kind::kHash, n};
    }
  }
  return Status::Invalid("--tenants: expected qos or hash:N with 1 <= N <= 10000, got '" +
                         std::string(text) + "'");
}

uint64_t Fnv1a64(std::string_view bytes) {
  uint64_t hash = 14695981039346656037ull;
  for (unsigned char c : bytes) {
    hash ^= c;
    hash *= 1099511628211ull;
  }
  return hash;
}

std::string TenantOf(const TenantRule& rule, std::string_view pod_name, std::string_view qos) {
  if (rule.kind == TenantRule::Kind::kHash) {
    return "tenant-" + std::to_string(Fnv1a64(pod_name) % static_cast<uint64_t>(rule.buckets));
  }
  if (qos.empty()) return "unknown";
  std::string out(qos);
  for (char& c : out)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace capext
