// Where a group's members go together (docs/workloads.md#order-and-the-all-or-nothing-rule,
// item 2, and "Filter mode"): the members are placed one after another on a what-if copy of the
// state, each reserved on the first node (in the state's node order) whose fit screen passes,
// taking its room before the next is placed. Gate mode's admission queue and filter mode's group
// rule both ask this, so a gang is let go only where all of it has a place.
// Thread-safety: pure functions; PlaceTogether mutates only the what-if it is given.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/cluster_state.h"

namespace capext {

// Places `pods` (store keys) on `what_if`, each reserved where it fits at `now_ms`; `placed` gets
// how many found a node. All placed: their nodes, in order (the reservations stay); otherwise
// nullopt, and the reservations made are undone.
std::optional<std::vector<std::string>> PlaceTogether(ClusterState* what_if,
                                                      const std::vector<std::string>& pods,
                                                      int64_t now_ms, int* placed);

}  // namespace capext
