#include "policies/quota_semantics_names.h"

namespace capext {

std::optional<QuotaSemantics> QuotaSemanticsFromName(std::string_view name) {
  if (name == "capacity-extender") return QuotaSemantics::kCapacityExtender;
  if (name == "scheduler-plugins") return QuotaSemantics::kSchedulerPlugins;
  return std::nullopt;
}

std::string_view QuotaSemanticsName(QuotaSemantics semantics) {
  return semantics == QuotaSemantics::kSchedulerPlugins ? "scheduler-plugins" : "capacity-extender";
}

std::vector<std::string> QuotaSemanticsNames() {
  return {"capacity-extender", "scheduler-plugins"};
}

}  // namespace capext
