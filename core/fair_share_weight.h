// The fair-share weight of an ElasticQuota (docs/fair-sharing.md#1-weights): the annotation
// scheduling.capacity-extender.io/fair-share-weight, a decimal from 0 to 1000 with at most three
// decimals, held in thousandths ("2.5" is 2500) so that arithmetic on weights is exact.
// Absent: 1 (1000). `validate` and the webhook reject an invalid value with ParseFairShareWeight's
// reason; at runtime an invalid value reads as 1 and the reason is kept for /quotas and the log.
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/status.h"

namespace capext {

inline constexpr const char* kFairShareWeightAnnotation =
    "scheduling.capacity-extender.io/fair-share-weight";
inline constexpr int64_t kDefaultWeightMilli = 1000;
inline constexpr int64_t kMaxWeightMilli = 1'000'000;

// Parses the annotation's value into thousandths. Invalid with the reason:
// `annotation scheduling.capacity-extender.io/fair-share-weight "abc" is not a weight: a decimal
// from 0 to 1000 with at most 3 decimals`.
Status ParseFairShareWeight(std::string_view text, int64_t* weight_milli);

// "1", "2.5", "0.125": the shortest decimal for a weight in thousandths.
std::string FormatWeight(int64_t weight_milli);

}  // namespace capext
