// The other extender answers, encoded: HostPriorityList (/prioritize),
// ExtenderPreemptionResult (/preempt: always NodeNameToMetaVictims, the only field
// kube-scheduler reads) and ExtenderBindingResult (/bind).
// Thread-safety: stateless functions.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/victim_selection.h"

namespace capext {

// [{"Host": name, "Score": score}, ...] in request order. REQUIRES: same sizes.
std::string EncodeHostPriorityList(const std::vector<std::string_view>& names,
                                   const std::vector<int>& scores);

// {"NodeNameToMetaVictims": {node: {"Pods": [{"UID": ...}], "NumPDBViolations": n}}} for every
// candidate (victims by uid, most important first).
std::string EncodePreemptionResult(const std::vector<NodeVictims>& candidates);

// {"Error": error} ("" = bound).
std::string EncodeBindingResult(std::string_view error);

}  // namespace capext
