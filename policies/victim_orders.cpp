#include "policies/victim_orders.h"

namespace capext {
namespace {

PolicyTable<const VictimOrder*>& VictimOrderTable() {
  static PolicyTable<const VictimOrder*> table(
      "victim order",
      {{PriorityThenStartTimeOrder().name(),
        "lowest priority first, then the most recently started (kube-scheduler's order)",
        [] { return &PriorityThenStartTimeOrder(); }},
       {PriorityThenLargestFirstOrder().name(),
        "lowest priority first, then the largest cpu request, then the most recently started",
        [] { return &PriorityThenLargestFirstOrder(); }}});
  return table;
}

}  // namespace

const PolicyTable<const VictimOrder*>& VictimOrderPolicies() {
  return VictimOrderTable();
}

VictimOrderRegistration::VictimOrderRegistration(std::string_view help,
                                                 const VictimOrder* (*make)()) {
  VictimOrderTable().Add({make()->name(), help, make});
}

}  // namespace capext
