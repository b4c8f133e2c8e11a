// The least-allocated scorer (core/node_scorer.h), the default: spread, prefer the node with the
// most free cpu and memory (kube-scheduler's LeastAllocated, weight 1 each):
// (1000 - utilisation) * 10 / 1000 (docs/extender-protocol.md#prioritize). Reads the nodes.
#include "core/node_scorer.h"

namespace capext {
namespace {

class LeastAllocated final : public NodeScorer {
 public:
  std::string_view name() const override { return "least-allocated"; }
  DeclaredChanges Declared() const override { return kChangesOnAnyNode; }
  bool ReadsUtilisation() const override { return true; }
  int FromUtilisation(int64_t permille) const override {
    return static_cast<int>((1000 - permille) * kMaxNodeScore / 1000);
  }
};

const LeastAllocated kLeastAllocatedScorer;

}  // namespace

const NodeScoring NodeScoring::kLeastAllocated{&kLeastAllocatedScorer};

}  // namespace capext
