// The order of borrowing units in gate mode's admission queue with fair sharing on
// (docs/fair-sharing.md#5-admission-order-gate-mode): each quota's units wait in the usual order
// (priority orders pods within a quota); the next unit is found from the top of the quota tree
// down, taking at each level the child whose share after admitting its own next unit is lowest
// (fairness orders quotas). Ties: the unit's priority (highest first), creation (earliest), first
// pod key.
// Shares are read from the what-if state passed to Next, so a unit admitted (as holds) before the
// next pick raises its quota's share. Each node caches its best unit and that unit's share after;
// a pick invalidates only the path from the picked unit's leaf to its root (the only nodes whose
// usage the caller may change before the next pick), so a pick costs the path plus one scan of
// the roots' cached keys.
// Thread-safety: none; one round's object.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <vector>

#include "core/cluster_state.h"
#include "core/fair_share.h"
#include "core/resource_list.h"

namespace capext {

struct FairCandidate {
  std::size_t unit = 0;  // the caller's index
  int leaf = -1;         // the tree node of the unit's namespace
  ResourceList request;  // the unit's summed quota request
  int32_t priority = 0;
  int64_t creation_ms = 0;
  std::string first_key;
};

class FairAdmissionOrder {
 public:
  // `candidates` in the usual order; every leaf >= 0.
  FairAdmissionOrder(const QuotaTree& tree, const FairShareModel& model,
                     std::vector<FairCandidate> candidates);

  struct Pick {
    std::size_t candidate = 0;  // index into the candidates given
    ShareKey share_after;       // at the root level (the first comparison)
  };
  // The next unit to try, removed from its queue; nullopt when none is left. REQUIRES: between
  // two calls the caller changed the what-if's usage only by admitting the unit last picked.
  std::optional<Pick> Next(const ClusterState& what_if);
  // Every unit not yet picked, in no particular order; empties the queues.
  std::vector<std::size_t> Drain();
  const FairCandidate& candidate(std::size_t i) const { return candidates_[i]; }

  // The child of the lowest common ancestor of leaves a and b on a's side (a's root when they
  // share none): where the two are compared.
  int SideAt(int a, int b) const;

 private:
  struct Best {
    std::size_t candidate = 0;
    ShareKey share_after;
  };
  // The best unit in the subtree of `node` (which has units), and node's share after it; cached.
  const Best& BestIn(const ClusterState& what_if, int node);
  std::optional<Best> BestAmong(const ClusterState& what_if, const std::vector<int>& nodes);
  bool Before(const Best& a, const Best& b) const;

  const QuotaTree& tree_;
  const FairShareModel& model_;
  std::vector<FairCandidate> candidates_;
  std::vector<std::deque<std::size_t>> queues_;  // by leaf: candidate indices in the usual order
  std::vector<int> counts_;                      // by node: units waiting in its subtree
  std::vector<std::optional<Best>> cache_;       // by node: BestIn, until invalidated
};

}  // namespace capext
