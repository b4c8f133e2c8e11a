// The names of the quota semantics policy (`quotaSemantics` in the config;
// capacity-semantics 0.1).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/quota_semantics.h"

namespace capext {

std::optional<QuotaSemantics> QuotaSemanticsFromName(std::string_view name);
std::string_view QuotaSemanticsName(QuotaSemantics semantics);
std::vector<std::string> QuotaSemanticsNames();

}  // namespace capext
