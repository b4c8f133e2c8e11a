// The scorer named "none" (core/node_scorer.h): every node scores 0, so kube-scheduler's own
// scores decide, and our own paths pick the first feasible node by name (BestNode,
// core/best_node.h; docs/extender-protocol.md#prioritize). Reads nothing, declares nothing.
#include "core/node_scorer.h"

namespace capext {
namespace {

class NoScore final : public NodeScorer {
 public:
  std::string_view name() const override { return "none"; }
  DeclaredChanges Declared() const override { return 0; }
  bool ReadsUtilisation() const override { return false; }
  int FromUtilisation(int64_t) const override { return 0; }
};

const NoScore kNoScorer;

}  // namespace

const NodeScoring NodeScoring::kNone{&kNoScorer};

}  // namespace capext
