// The default victim order (core/victim_order.h): kube-scheduler's MoreImportantPod, lowest
// priority first, then the most recently started
// (docs/capacity-semantics.md#4-victims-on-one-node, "Order"). Reads the two pods' priority and
// start only: declares the candidates on the nodes.
#include "core/victim_order.h"

namespace capext {
namespace {

class PriorityThenStartTime final : public VictimOrder {
 public:
  std::string_view name() const override { return "priority-then-start-time"; }
  DeclaredChanges Declared() const override { return kChangesOnAnyNode; }
  bool KeptOver(const Pod& a, const Pod& b) const override { return MoreImportantPod(a, b); }
};

}  // namespace

const VictimOrder& PriorityThenStartTimeOrder() {
  static const PriorityThenStartTime order;
  return order;
}

}  // namespace capext
