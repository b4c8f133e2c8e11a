// QuotaTreeRecount: the quota tree of a ClusterState and what each of its nodes uses, worked out
// again the slow and obvious way from the quotas in use and the pods (docs/quota-hierarchy.md):
// parents followed by key, cycles found by walking, usage summed over the pods of each subtree.
// It reads neither core's QuotaTree nor the ledger's sums, so the differential test can check
// core's tree rules (admission at every ancestor, the cluster-wide rule over the roots, the LCA
// victim rule) against it. Used by the differential test
// (tests/e2e/tree_paths.cpp) and the dense-path accounting test.
// Thread-safety: immutable after construction; valid while the state is not modified.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/cluster_state.h"

namespace capext::testing {

class QuotaTreeRecount {
 public:
  explicit QuotaTreeRecount(const ClusterState& state);

  struct TreeNode {
    std::string key;     // the quota's "namespace/name"; its own node: key + " (own)"
    ElasticQuota quota;  // an own node: the parent's, with min = its min - its children's
    bool own = false;
    int parent = -1;    // -1: under the virtual root
    std::string ns;     // the namespace whose pods it counts directly ("" for a parent's node)
    ResourceList used;  // the subtree's: bound, non-terminal pods and reservations
  };
  // A pending pod holding nominated room (ours, or its status.nominatedNodeName while no
  // reservation holds it on a node).
  struct Nominated {
    std::string key;  // the pod's store key
    std::string ns;
    int32_t priority = 0;
    ResourceList request;  // as its quota counts it
  };

  const std::vector<TreeNode>& nodes() const { return nodes_; }
  const TreeNode& node(int i) const { return nodes_[static_cast<std::size_t>(i)]; }
  // Where the pods of `ns` sit (a quota's node, or its own node when it has children); -1 when
  // ns has no quota.
  int LeafOf(std::string_view ns) const;
  // The node of the quota governing `ns`; -1 when none.
  int QuotaNodeOf(std::string_view ns) const;
  bool Contains(int ancestor, int node) const;
  // The lowest common ancestor, -1 for the virtual root.
  int Lca(int a, int b) const;
  // `node`, its parent, ... its root.
  std::vector<int> PathUp(int node) const;
  std::vector<int> Roots() const;
  // Quota levels of the deepest tree (1: every quota is a root, as in a flat cluster).
  int levels() const { return levels_; }
  // The quotas whose parent annotation the runtime must ignore (missing, itself, the other API
  // group, a cycle).
  const std::vector<std::string>& invalid() const { return invalid_; }
  const std::vector<Nominated>& nominated() const { return nominated_; }

  // The cluster-wide sums of the admission rule, over the roots (AggregateBuilder's arithmetic).
  AggregateTotals RootTotals(QuotaSemantics semantics) const;

  // r at `node` for `pod`: its quota request plus the requests of the pods nominated in the
  // node's subtree with priority >= the pod's (the pod's own nomination excluded).
  ResourceList RequestAt(const NormalizedPod& pod, int node) const;

 private:
  std::vector<TreeNode> nodes_;
  std::vector<std::string> invalid_;
  std::vector<Nominated> nominated_;
  int levels_ = 0;
};

// The same amounts, absent counting as 0.
bool SameAmounts(const ResourceList& a, const ResourceList& b);

}  // namespace capext::testing
