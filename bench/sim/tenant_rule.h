// Which tenant (namespace) a trace pod belongs to. The Alibaba trace has no tenant column, so the
// rule is chosen by flag:
//  - `qos`: the pod's QoS class, lower-cased: LS -> "ls", Burstable -> "burstable", BE -> "be",
//    Guaranteed -> "guaranteed" (an empty class -> "unknown");
//  - `hash:N`: "tenant-<i>" with i = FNV-1a 64-bit hash of the pod name (offset basis
//    14695981039346656037, prime 1099511628211, over the name's bytes) modulo N. Stable across
//    runs, machines and trace files: the same pod name always lands in the same tenant.
// Thread-safety: value types and pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/status.h"

namespace capext {

struct TenantRule {
  enum class Kind { kQos, kHash };
  Kind kind = Kind::kQos;
  int buckets = 0;  // kHash: N >= 1

  // "qos" or "hash:N", as given on the command line.
  std::string ToString() const;
};

// Parses "qos" or "hash:N" (1 <= N <= 10000); an Invalid status names --tenants and the text.
StatusOr<TenantRule> ParseTenantRule(std::string_view text);

uint64_t Fnv1a64(std::string_view bytes);

// The tenant of a pod named `pod_name` with QoS class `qos` under `rule`.
std::string TenantOf(const TenantRule& rule, std::string_view pod_name, std::string_view qos);

}  // namespace capext
