// The registry of victim orders (docs/architecture.md#registry-and-profiles): the plugins of the
// victim-order extension point (core/victim_order.h) by name. The product's two are listed in
// victim_orders.cpp; another joins with one VictimOrderRegistration line beside its definition.
// A profile picks one by name: the extender config's `victimOrder`, `capacity-extender explain
// --victim-order`, capacity-sim's `--victim-order` and a scenario's `victimOrder:`. The first
// entry is the default.
// Thread-safety: registration happens during static initialisation only; afterwards every
// function may run from any thread.
#pragma once

#include <string_view>

#include "core/victim_order.h"
#include "policies/policy_table.h"

namespace capext {

const PolicyTable<const VictimOrder*>& VictimOrderPolicies();

// Adds an order to the table (a static object's constructor: registration before main()). The
// entry's name is the plugin's name().
struct VictimOrderRegistration {
  VictimOrderRegistration(std::string_view help, const VictimOrder* (*make)());
};

}  // namespace capext
