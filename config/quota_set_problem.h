// A problem that involves several ElasticQuotas (one namespace twice, the hierarchy, the cluster),
// reported on one of them by index so each caller can place it: validate by file and line, the
// webhook by whether it concerns the object under review.
// Thread-safety: a value type.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include "config/validation_finding.h"

namespace capext {

struct QuotaSetProblem {
  std::size_t quota = 0;             // index of the quota it is reported on
  std::optional<std::size_t> other;  // the other quota involved, when there is exactly one
  std::string field;                 // field of `quota`, "" for the object
  std::string message;
  // kError: validate fails and the webhook denies; kWarning: reported, allowed.
  Severity severity = Severity::kError;
};

}  // namespace capext
