// The names of the quotaSemantics policy.
#include "policies/quota_semantics_names.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

namespace capext {
namespace {

TEST_CASE("quota semantics names round-trip", "[quota_semantics_names]") {
  CHECK(QuotaSemanticsNames() ==
        std::vector<std::string>{"capacity-extender", "scheduler-plugins"});
  for (const auto& name : QuotaSemanticsNames()) {
    INFO(name);
    auto semantics = QuotaSemanticsFromName(name);
    REQUIRE(semantics.has_value());
    CHECK(QuotaSemanticsName(*semantics) == name);
  }
  CHECK(QuotaSemanticsFromName("capacity-extender") == QuotaSemantics::kCapacityExtender);
  CHECK(QuotaSemanticsFromName("scheduler-plugins") == QuotaSemantics::kSchedulerPlugins);
  CHECK_FALSE(QuotaSemanticsFromName("Scheduler-Plugins").has_value());
  CHECK_FALSE(QuotaSemanticsFromName("").has_value());
}

}  // namespace
}  // namespace capext
