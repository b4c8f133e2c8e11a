// VictimRule: whose pods may be victims for a preemptor
// (docs/capacity-semantics.md#4-victims-on-one-node, over the quota tree:
// docs/quota-hierarchy.md#reclaim-and-preemption), computed once per preemptor and asked per
// namespace. The one place the rule is written: victim selection, the candidate search and
// preemption eligibility all ask it.
//  - a preemptor without a quota: pods of lower priority in namespaces without a quota;
//  - a preemptor p of quota q (leaf P0; its path P0, P1, ... up to its root):
//    - pods of its own namespace: lower priority only, and only when p would take its leaf above
//      its min (moreThanMin at P0);
//    - pods of another namespace with a quota (leaf L): with A the lowest common ancestor of P0
//      and L (or the virtual root) and Q', W' A's children on each side: (1) used(Q') + r_Q'
//      within min(Q'), decided once; (2) every node from L up to W' still borrowing when a pod
//      is taken (SideBorrowing, re-checked on the what-if after each removal);
//    - pods of namespaces without a quota: never.
//  - distance (victims nearer in the tree come first): 0 for the own namespace, j when A is
//    P_j, one more than the root's level for the virtual root. With no parents every other
//    namespace is at distance 1 and (1) is "not moreThanMin": exactly the flat rule.
// Thread-safety: immutable after construction; valid while the state is not modified.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/cluster_state.h"
#include "core/declared_changes.h"
#include "core/quota_admission.h"

namespace capext {

// What the victim rule's verdicts read (docs/architecture.md#declared-changes-and-wake-rules):
// which quotas borrow and by how much (the used and min of every quota namespace, up to the lowest
// common ancestor), and the victim candidates on every node (bound, gone, their phase).
inline constexpr DeclaredChanges kVictimRuleChanges = kChangesInAnyQuota | kChangesOnAnyNode;

class VictimRule {
 public:
  struct Scope {
    bool any = false;                  // the namespace's pods may be victims at all
    bool lower_priority_only = false;  // only pods of priority < the preemptor's
    bool recheck = false;              // (2): nodes leaf..top must be borrowing when taken
    int leaf = -1;
    int top = -1;  // W'
    int distance = 0;
  };

  // REQUIRES: `path` is MakeAdmissionPath(state, preemptor) for the preemptor the rule is about.
  VictimRule(const ClusterState& state, const AdmissionPath& path);

  // The preemptor would take its leaf above its min (today's moreThanMin).
  bool more_than_min() const { return more_than_min_; }
  Scope ScopeOf(std::string_view ns) const {
    return ScopeOfLeaf(state_.ledger().tree().LeafOf(ns));
  }
  // ScopeOf for the namespace whose quota tree leaf is `leaf` (QuotaTree::LeafOf: -1 for a
  // namespace without a quota; a leaf holds exactly one namespace): no name lookup, for callers
  // that resolved the namespace once (victim selection, the candidate search).
  Scope ScopeOfLeaf(int leaf) const;
  // ScopeOfLeaf of every leaf of the quota tree at once, into (*by_node)[leaf] (resized to the
  // tree's size; entries of nodes that are not leaves, and of the preemptor's ancestors, are
  // unspecified): one pass over the tree, parents before children, instead of a walk up from
  // each leaf (the candidate search asks for every namespace at every reclaim attempt).
  void ScopesByTreeNode(std::vector<Scope>* by_node) const;
  // True when `borrowing_at(node)` holds for every quota on the scope's side, from its leaf up
  // to its top: rule (2)'s walk, written once for the state's usage and a what-if's.
  template <typename BorrowingAt>
  bool EverySideNode(const Scope& scope, BorrowingAt&& borrowing_at) const {
    const QuotaTree& tree = state_.ledger().tree();
    for (int y = scope.leaf; y >= 0; y = tree.parent(y)) {
      if (!borrowing_at(y)) return false;
      if (y == scope.top) break;
    }
    return true;
  }
  // Condition (2) for a scope that needs it, on the usage of tree nodes `used_of(node)`.
  template <typename UsedOf>
  bool SideBorrowing(const Scope& scope, UsedOf&& used_of) const {
    const QuotaTree& tree = state_.ledger().tree();
    return EverySideNode(
        scope, [&](int y) { return IsBorrowing(state_.semantics(), tree.quota(y), used_of(y)); });
  }
  // Whether a scope may give a victim on the state as it is: it allows victims at all and, when
  // (2) applies, its side is borrowing before any removal. Removals only lower usage, so a side
  // not borrowing now is not borrowing after any removal either: false means no victim from this
  // scope on any node. (Victim selection re-checks (2) after each removal.)
  // The state's borrowing is the ledger's, kept with the usage (QuotaLedger::NodeBorrowing).
  bool MayGiveVictims(const Scope& scope) const {
    const QuotaLedger& ledger = state_.ledger();
    return scope.any &&
           (!scope.recheck || EverySideNode(scope, [&](int y) { return ledger.NodeBorrowing(y); }));
  }
  // The largest distance a victim can have (the virtual root's level).
  int max_distance() const { return static_cast<int>(path_.size()); }
  // Where victims at `distance` meet the preemptor, for explanations: "its own namespace",
  // "ElasticQuota team-a/team-a", or "across the root quotas".
  std::string DescribeLevel(int distance) const;

 private:
  // The rule's verdict for the namespace whose leaf is `leaf`, given where it meets the
  // preemptor's path: `level`, the index on the path of A, their lowest common ancestor
  // (path_.size() for the virtual root), and `top`, W' (leaf's ancestor just below A). Both walks
  // (ScopeOfLeaf from one leaf, ScopesByTreeNode over the tree) end here: the rule is written once.
  Scope ScopeAt(int leaf, int level, int top) const;

  const ClusterState& state_;
  bool has_quota_ = false;
  bool more_than_min_ = false;
  std::vector<int> path_;     // P0 (the leaf) ... the root
  std::vector<char> within_;  // per P_i: used(P_i) + r_{P_i} within min(P_i)
};

}  // namespace capext
