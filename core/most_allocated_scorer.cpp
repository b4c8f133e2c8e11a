// The most-allocated scorer (core/node_scorer.h): bin-pack, prefer the fullest node that fits
// (kube-scheduler's MostAllocated, weight 1 each): utilisation * 10 / 1000
// (docs/extender-protocol.md#prioritize). Reads the nodes.
#include "core/node_scorer.h"

namespace capext {
namespace {

class MostAllocated final : public NodeScorer {
 public:
  std::string_view name() const override { return "most-allocated"; }
  DeclaredChanges Declared() const override { return kChangesOnAnyNode; }
  bool ReadsUtilisation() const override { return true; }
  int FromUtilisation(int64_t permille) const override {
    return static_cast<int>(permille * kMaxNodeScore / 1000);
  }
};

const MostAllocated kMostAllocatedScorer;

}  // namespace

const NodeScoring NodeScoring::kMostAllocated{&kMostAllocatedScorer};

}  // namespace capext
