// A victim order (core/victim_order.h): lowest priority first; at equal priority the pod asking
// for the most cpu goes first (evicting the big one frees more room with fewer victims); then the
// most recently started (docs/capacity-semantics.md#4-victims-on-one-node). Reads the two pods'
// priority, cpu request and start only: declares the candidates on the nodes.
#include "core/victim_order.h"

#include "core/resource_name.h"

namespace capext {
namespace {

class PriorityThenLargestFirst final : public VictimOrder {
 public:
  std::string_view name() const override { return "priority-then-largest-first"; }
  DeclaredChanges Declared() const override { return kChangesOnAnyNode; }
  bool KeptOver(const Pod& a, const Pod& b) const override {
    if (a.priority != b.priority) return a.priority > b.priority;
    const int64_t ca = a.requests.Get(kCpuName), cb = b.requests.Get(kCpuName);
    if (ca != cb) return ca < cb;
    return EffectiveStartMs(a) < EffectiveStartMs(b);
  }
};

}  // namespace

const VictimOrder& PriorityThenLargestFirstOrder() {
  static const PriorityThenLargestFirst order;
  return order;
}

}  // namespace capext
