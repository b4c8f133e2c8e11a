// VictimOrder: the victim-order extension point (docs/architecture.md#extension-points): of two
// pods that may both be victims, which one is kept longer
// (docs/capacity-semantics.md#4-victims-on-one-node, "Order"). The one pod comparator: victim
// selection on a node, the candidate search, the reclaim plan search and the simulator's reclaim
// all ask the order their profile chose, through VictimUnitBefore (core/victim_unit.h) for units.
// Plugins are registered by name in policies/ (policies/victim_orders.h); core names none of them.
// Contract for every plugin: pure, deterministic, stateless (one instance serves every thread);
// KeptOver is a strict weak order; Declared() covers what it reads besides the two pods
// (docs/architecture.md#declared-changes-and-wake-rules).
#pragma once

#include <string_view>

#include "core/declared_changes.h"
#include "core/pod.h"

namespace capext {

class VictimOrder {
 public:
  virtual ~VictimOrder() = default;
  // The plugin's name in the registry (policies/victim_orders.h) and in logs.
  virtual std::string_view name() const = 0;
  // The changes that can alter the order. The pods compared are victim candidates on nodes, so
  // every order reads at least kChangesOnAnyNode (their phase, their start).
  virtual DeclaredChanges Declared() const = 0;
  // True when `a` is kept over `b` (b goes first).
  virtual bool KeptOver(const Pod& a, const Pod& b) const = 0;
};

// The built-in orders (priority_then_start_time_order.cpp, priority_then_largest_first_order.cpp).
// kube-scheduler's MoreImportantPod (core/pod.h).
const VictimOrder& PriorityThenStartTimeOrder();
// Priority; then the pod asking for less cpu is kept; then PriorityThenStartTimeOrder()'s start
// time.
const VictimOrder& PriorityThenLargestFirstOrder();

}  // namespace capext
