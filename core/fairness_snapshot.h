// Every quota's fairness (core/fair_share.h: weight, share, fairShare, fair value) for one version
// of one ClusterState, computed once and shared by every decision taken on that version
// (docs/fair-sharing.md#how-the-reclaim-search-uses-it, "computed once per pass").
// ComputeFairness reads every pod of the state (each quota's waiting demand), so computing it per
// planned pod made a pass over P pending pods cost P full scans; the reclaim controller plans
// pod after pod on a state that changes only when something happens (a watch event, one of its
// own nominations), and every such change bumps ClusterState::version(). The cache recomputes
// exactly then, so a decision sees the same numbers as with a fresh computation.
// Thread-safety: none; one caller thread per cache (the reclaim controller's RunOnce thread, the
// simulator's engine). A snapshot, once handed out, is immutable and may outlive the cache.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "core/cluster_state.h"
#include "core/fair_share.h"

namespace capext {

struct FairnessSnapshot {
  explicit FairnessSnapshot(const ClusterState& state)
      : model(state), fairness(ComputeFairness(state, model)) {}
  FairShareModel model;                // the tree's weights, mins and pools
  std::vector<NodeFairness> fairness;  // by tree node
};

class FairnessCache {
 public:
  // The snapshot of `state` as it is now: the one computed last when `state` is the same object
  // at the same version, else a new one. REQUIRES: between calls the object is changed only
  // through its own mutators, which bump its version (never assigned over with a copy whose
  // version may equal the cached one; Reset() first).
  std::shared_ptr<const FairnessSnapshot> Get(const ClusterState& state);
  // Forgets the snapshot.
  void Reset();
  // Snapshots computed so far (a test's and a benchmark's view of the reuse).
  int64_t computed() const { return computed_; }

 private:
  const ClusterState* state_ = nullptr;
  uint64_t version_ = 0;
  std::shared_ptr<const FairnessSnapshot> snapshot_;
  int64_t computed_ = 0;
};

}  // namespace capext
