// A problem that involves several ElasticQuotas (one namespace twice, the hierarchy, the cluster):
// a ValidationFinding (its severity, a field of the quota it is reported on, the message),
// reported on one of the quotas by index so each caller can place it: validate by file and line,
// the webhook by whether it concerns the object under review.
// Thread-safety: a value type.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <utility>

#include "config/validation_finding.h"

namespace capext {

struct QuotaSetProblem {
  QuotaSetProblem(std::size_t quota, std::optional<std::size_t> other, std::string field,
                  std::string message, Severity severity = Severity::kError)
      : quota(quota), other(other), finding(severity, 0, std::move(field), std::move(message)) {}

  std::size_t quota = 0;             // index of the quota it is reported on
  std::optional<std::size_t> other;  // the other quota involved, when there is exactly one
  // kError: validate fails and the webhook denies; kWarning: reported, allowed. Its field is a
  // field of `quota` ("" for the object); its line and file are the caller's to place.
  ValidationFinding finding;
};

}  // namespace capext
