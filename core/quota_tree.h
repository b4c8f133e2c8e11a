// QuotaTree: the hierarchy of the ElasticQuotas in use (docs/quota-hierarchy.md), rebuilt when
// the quotas change. A quota names its parent with the scheduling.capacity-extender.io/parent
// annotation ("<namespace>/<name>"); quotas without a (valid) parent are roots, under a virtual
// root. The tree is built in Boost.Graph (an adjacency_list, edges child -> parent) and walked
// in topological order.
//
// Tree nodes: one per quota, plus, for each quota that has children, its implicit child "own":
// the pods of the parent's own namespace, with min = the parent's min minus the children's mins
// (per resource, never below 0) and max = the parent's max. The node where a namespace's pods
// sit is its leaf: its quota's node when that quota has no children, else the quota's own node.
// With no parents every quota is a root and its own leaf: every rule reduces to the flat one.
//
// A parent that is missing, in the other API group, or part of a cycle is ignored (the quota
// becomes a root); problems() says which and why, once per rebuild.
// Thread-safety: none; ClusterState serialises writers and readers.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/content_stamp.h"
#include "core/elastic_quota.h"
#include "core/name_index.h"
#include "core/quota_set.h"

namespace capext {

class QuotaTree {
 public:
  struct Problem {
    std::string quota;  // "namespace/name"
    std::string why;    // e.g. "its parent org/org does not exist: treated as a root"
  };

  void Rebuild(const QuotaSet& quotas);

  // A fresh NewContentStamp() at every Rebuild, kept by copies: keys caches of what depends on
  // the tree's shape (which namespace has which leaf).
  uint64_t stamp() const { return stamp_; }
  // True when no quota has a parent (the flat case).
  bool flat() const { return flat_; }
  int size() const { return static_cast<int>(nodes_.size()); }

  // The tree node where the pods of `ns` sit (see above), or -1 when ns has no quota.
  int LeafOf(std::string_view ns) const {
    const int64_t i = leaf_index_.Find(ns);
    return i < 0 ? -1 : static_cast<int>(i);
  }
  // The quota node of the quota governing `ns` (== LeafOf unless the quota has children).
  int QuotaNodeOf(std::string_view ns) const {
    const int leaf = LeafOf(ns);
    return leaf < 0 ? -1 : nodes_[leaf].own ? nodes_[leaf].parent : leaf;
  }
  // -1 under the virtual root.
  int parent(int node) const { return nodes_[node].parent; }
  int depth(int node) const { return nodes_[node].depth; }  // roots: 0
  const std::vector<int>& children(int node) const { return nodes_[node].children; }
  bool is_own(int node) const { return nodes_[node].own; }
  // The node's quota: the ElasticQuota itself, or for an own node a copy with the own min.
  const ElasticQuota& quota(int node) const { return *nodes_[node].quota; }
  // The namespace whose usage the node counts directly ("" for none: a quota node with children
  // counts its own namespace through its own node).
  const std::string& own_namespace(int node) const { return nodes_[node].ns; }
  // Nodes in topological order: parents before children.
  const std::vector<int>& order() const { return order_; }
  const std::vector<int>& roots() const { return roots_; }
  // The topmost ancestor (a root) of `node`.
  int RootOf(int node) const {
    while (nodes_[node].parent >= 0)
      node = nodes_[node].parent;
    return node;
  }
  // Whether `ancestor` is `node` or one of its ancestors.
  bool Contains(int ancestor, int node) const {
    for (; node >= 0; node = nodes_[node].parent) {
      if (node == ancestor) return true;
    }
    return false;
  }
  // The lowest common ancestor of two nodes, or -1 for the virtual root.
  int Lca(int a, int b) const;

  const std::vector<Problem>& problems() const { return problems_; }

 private:
  struct Node {
    const ElasticQuota* quota = nullptr;
    bool own = false;
    int parent = -1;
    int depth = 0;
    std::vector<int> children;
    std::string ns;
  };

  std::vector<Node> nodes_;
  std::vector<ElasticQuota> own_quotas_;  // the own nodes' quotas (stable: reserved up front)
  NameIndex leaf_index_;                  // namespace -> leaf node
  uint64_t stamp_ = NewContentStamp();
  std::vector<int> order_, roots_;
  std::vector<Problem> problems_;
  bool flat_ = true;
};

}  // namespace capext
