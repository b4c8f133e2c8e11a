// NodeScorer: the node-scoring extension point (docs/architecture.md#extension-points): how good
// a node is for a pod, in 0..kMaxNodeScore, from how full the node would be with the pod on it
// (docs/extender-protocol.md#prioritize). The utilisation is computed once, by core/node_score.h
// (plain) and core/dense_nodes.h (dense), the same on every path; a scorer only turns it into a
// score, so every path scores alike whichever scorer a profile runs. /prioritize, PickNode, the
// placement searches and the simulator ask the scorer their profile chose through a NodeScoring
// handle, and pick among the scores with BestNode (core/best_node.h). Scorers are registered by
// name in policies/ (policies/node_scorers.h).
// Contract for every scorer: pure, deterministic, stateless (one instance serves every thread);
// FromUtilisation returns 0..kMaxNodeScore for every permille in 0..1000 (kube-scheduler does not
// clamp extender scores, so anything outside 0..10 would dominate every other plugin); integer
// arithmetic only. Declared() covers what the score reads
// (docs/architecture.md#declared-changes-and-wake-rules): a scorer that reads the utilisation
// reads the nodes (their allocatable, what is bound or held on them).
// Thread-safety: scorers are immutable; a handle is a pointer.
#pragma once

#include <cstdint>
#include <string_view>

#include "core/declared_changes.h"

namespace capext {

inline constexpr int kMaxNodeScore = 10;

class NodeScorer {
 public:
  virtual ~NodeScorer() = default;
  // The scorer's name in the registry (policies/node_scorers.h) and in logs.
  virtual std::string_view name() const = 0;
  // The changes that can alter a score.
  virtual DeclaredChanges Declared() const = 0;
  // False when the score does not depend on the node (every node scores FromUtilisation(0)): the
  // paths then skip computing the utilisation.
  virtual bool ReadsUtilisation() const = 0;
  // The score from the node's utilisation with the pod on it, in permille (0..1000).
  virtual int FromUtilisation(int64_t permille) const = 0;
};

// A handle on the scorer a profile chose (as QuotaSemantics is on the quota arithmetic): a
// pointer, copied freely, equal when it names the same scorer.
class NodeScoring {
 public:
  // The built-in scorers, one file each (constant-initialised, usable at any time):
  // least-allocated (spread, the default; least_allocated_scorer.cpp), most-allocated (bin-pack;
  // most_allocated_scorer.cpp), none (every node 0; no_node_score.cpp).
  static const NodeScoring kLeastAllocated;
  static const NodeScoring kMostAllocated;
  static const NodeScoring kNone;

  NodeScoring() : NodeScoring(kLeastAllocated) {}
  // REQUIRES: `scorer` lives for the program (scorers are static objects).
  explicit constexpr NodeScoring(const NodeScorer* scorer) : scorer_(scorer) {}

  const NodeScorer& scorer() const { return *scorer_; }
  const NodeScorer* operator->() const { return scorer_; }
  bool operator==(const NodeScoring&) const = default;

 private:
  const NodeScorer* scorer_;
};

}  // namespace capext
