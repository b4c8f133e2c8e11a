// VictimOrder: which of two pods is more important, i.e. kept longer when victims are chosen
// (capacity-semantics 1.2). Looked up by name (`victimOrder` in the config).
// Thread-safety: implementations are immutable and safe to share.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/pod.h"
#include "core/victim_selection.h"

namespace capext {

class VictimOrder {
 public:
  virtual ~VictimOrder() = default;
  virtual std::string_view name() const = 0;
  // True when `a` is more important than `b`.
  virtual bool MoreImportant(const Pod& a, const Pod& b) const = 0;

  // Adapts this order to the core's victim selection.
  MoreImportantFn AsFunction() const {
    return [this](const Pod& a, const Pod& b) { return MoreImportant(a, b); };
  }
};

// kube-scheduler's MoreImportantPod: higher priority, then earlier start. The default.
inline constexpr std::string_view kPriorityThenStartTime = "priority-then-start-time";

// Returns nullptr for an unknown name.
std::unique_ptr<VictimOrder> MakeVictimOrder(std::string_view name);
std::vector<std::string> VictimOrderNames();

}  // namespace capext
