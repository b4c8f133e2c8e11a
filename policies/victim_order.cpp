#include "policies/victim_order.h"

namespace capext {
namespace {

class PriorityThenStartTime final : public VictimOrder {
 public:
  std::string_view name() const override { return kPriorityThenStartTime; }
  bool MoreImportant(const Pod& a, const Pod& b) const override { return MoreImportantPod(a, b); }
};

// Priority first, then the pod asking for less is kept (evicting the big one frees more room
// with fewer victims); then start time.
class PriorityThenSmallestRequest final : public VictimOrder {
 public:
  std::string_view name() const override { return "priority-then-largest-first"; }
  bool MoreImportant(const Pod& a, const Pod& b) const override {
    if (a.priority != b.priority) return a.priority > b.priority;
    const int64_t ca = a.requests.Get(kResourceCPU), cb = b.requests.Get(kResourceCPU);
    if (ca != cb) return ca < cb;
    return EffectiveStartMs(a) < EffectiveStartMs(b);
  }
};

}  // namespace

std::unique_ptr<VictimOrder> MakeVictimOrder(std::string_view name) {
  if (name == kPriorityThenStartTime) return std::make_unique<PriorityThenStartTime>();
  if (name == "priority-then-largest-first") return std::make_unique<PriorityThenSmallestRequest>();
  return nullptr;
}

std::vector<std::string> VictimOrderNames() {
  return {std::string(kPriorityThenStartTime), "priority-then-largest-first"};
}

}  // namespace capext
