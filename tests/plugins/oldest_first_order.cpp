// A test victim order, "test-oldest-first" (docs/architecture.md#adding-a-rule): lowest priority
// first, then the pod that started first goes first (kube-scheduler's order keeps the oldest
// longest; this one keeps the newest). It shows that a victim order is one file plus one registry
// line: the line at the end puts it in the registry (policies/victim_orders.h), and from there a
// profile picks it by name (the extender config's victimOrder, `capacity-extender explain
// --victim-order`, capacity-sim's --victim-order and a scenario's victimOrder:), with no edit of
// the extender, the simulator or the search. Reads the two pods' priority and start only: declares
// the candidates on the nodes.
#include "core/victim_order.h"
#include "policies/victim_orders.h"

namespace capext {
namespace {

class OldestFirst final : public VictimOrder {
 public:
  std::string_view name() const override { return "test-oldest-first"; }
  DeclaredChanges Declared() const override { return kChangesOnAnyNode; }
  bool KeptOver(const Pod& a, const Pod& b) const override {
    if (a.priority != b.priority) return a.priority > b.priority;
    return EffectiveStartMs(a) > EffectiveStartMs(b);
  }
};

const OldestFirst kOrder;

}  // namespace

const VictimOrderRegistration kOldestFirstRegistration(
    "test: lowest priority first, then the earliest started",
    []() -> const VictimOrder* { return &kOrder; });

}  // namespace capext
