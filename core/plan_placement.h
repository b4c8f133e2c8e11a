// Where the plan's waiting members go (docs/reclaim-plan.md#the-what-if-and-the-placement): each
// member, in order, on the first node in name order where it fits on the plan's what-if, taking
// its room before the next (PlaceTogether's rule, group_placement.h), found through the
// what-if's max-tree instead of a scan. After a put-back only the members whose first fit can
// change are looked at (Refit): the result is what a full re-run gives (docs/reclaim-plan.md,
// the proof there).
// Thread-safety: one thread, with its what-if.
#pragma once

#include <cstddef>
#include <string>
#include <unordered_set>
#include <vector>

#include "core/plan_what_if.h"

namespace capext {

class PlanPlacement {
 public:
  // REQUIRES: `what_if` and the members outlive the placement.
  PlanPlacement(PlanWhatIf* what_if, const std::vector<const NormalizedPod*>& members);

  // Places the members from `first` on (those before keep their nodes and room). All placed:
  // true, each member's room taken on the what-if. Otherwise false: the members from `first`
  // hold no room, and `placed` gets how many members had a node when it failed.
  bool PlaceFrom(std::size_t first, int* placed);
  // Room shrank on `touched` (what-if node indices) since the placement was made: first fit again,
  // looking only where it can change. In placement order, a member keeps its node unless a node
  // before it that grew (a member before it moved away) now has room for it, or its own node
  // shrank and has none; a member that does not keep its node is placed again by first fit (its
  // old node grows, its new one shrinks). `checked` gets the members looked at. False:
  // some member has no node (`placed`: the members before it); Undo then brings the placement
  // back once the room is as it was.
  bool Refit(const std::vector<int>& touched, int* placed, int64_t* checked);
  void Undo();
  // The members' nodes (what-if node indices; -1: none).
  const std::vector<int>& nodes() const { return nodes_; }
  std::size_t size() const { return members_.size(); }

 private:
  void Release(std::size_t first);
  // Whether member j fits on `node` beside the members before it only: the room the members from
  // j on hold there (they have not been placed again yet) is given back for the question.
  bool FitsBeside(std::size_t j, int node);
  // Member j's first fit among the nodes after `at`, beside the members before it only.
  int FirstFitAfter(std::size_t j, int at);

  PlanWhatIf& what_if_;
  const std::vector<const NormalizedPod*>& members_;
  std::vector<PlanWhatIf::Need> needs_;
  std::vector<PlanWhatIf::Need> amounts_;  // PlanWhatIf::AmountsOf each member
  std::vector<bool> full_check_;
  std::unordered_set<std::string> keys_;  // the members' store keys
  std::vector<int> nodes_;
  std::vector<int> before_;  // the placement before the last Refit that moved a member
  // A node where room grew during a Refit (a member left it), and the last need that found
  // no room there since (`has_failed`): node fit on the summary (NodeFitScreen's test on free
  // amounts) is monotone, and until a member leaves the node again its room only shrinks, so a
  // member asking at least that much of every amount finds none either.
  struct Grown {
    int node = -1;
    PlanWhatIf::Need failed{};
    bool has_failed = false;
  };
  // Room grew on `node`: added to grew_, or its failed need forgotten.
  void Grew(int node);
  // Whether member j, on the summary, asks at least what found no room on g.node since it grew.
  bool NoRoomYet(const Grown& g, std::size_t j) const;

  std::vector<int> shrank_;                    // Refit's nodes where room shrank (kept for reuse)
  std::vector<Grown> grew_;                    // Refit's nodes where room grew (kept for reuse)
  std::vector<const NormalizedPod*> without_;  // FitsBeside's members left out (kept for reuse)
};

}  // namespace capext
