#include "core/victim_rule.h"

namespace capext {

VictimRule::VictimRule(const ClusterState& state, const AdmissionPath& path)
    : state_(state), has_quota_(path.quota != nullptr) {
  if (!has_quota_) return;
  const QuotaTree& tree = state.ledger().tree();
  const QuotaSemantics semantics = state.semantics();
  // r at each node of the path: the leaf's is inEQ; the quota nodes' are the admission levels'.
  std::size_t level = 0;
  for (int node = path.leaf; node >= 0; node = tree.parent(node)) {
    const ResourceList* r = &path.sums.in_eq;
    if (level < path.levels.size() && path.levels[level].node == node) {
      r = &path.InEq(path.levels[level]);
      ++level;
    }
    path_.push_back(node);
    // The preemptor's own hold is not counted against it
    // (docs/workloads.md#2-holds-quota-without-a-node).
    const ResourceList& used = state.ledger().NodeUsed(node);
    const bool within =
        path.own_hold.empty()
            ? ExceedsMin(semantics, tree.quota(node), used, *r).empty()
            : ExceedsMin(semantics, tree.quota(node), path.UsedWithoutOwnHold(used), *r).empty();
    within_.push_back(within ? 1 : 0);
  }
  more_than_min_ = !within_.empty() && within_[0] == 0;
}

VictimRule::Scope VictimRule::ScopeOfLeaf(int leaf) const {
  if (!has_quota_ || leaf < 0 || leaf == path_.front()) return ScopeAt(leaf, 0, -1);
  const QuotaTree& tree = state_.ledger().tree();
  const int lca = tree.Lca(path_.front(), leaf);
  // The level j of A on the preemptor's path (the virtual root above the last).
  std::size_t j = path_.size();
  for (std::size_t i = 0; i < path_.size(); ++i) {
    if (path_[i] == lca) j = i;
  }
  // W': the node below A on the victim's side.
  int top = leaf;
  while (tree.parent(top) != lca)
    top = tree.parent(top);
  return ScopeAt(leaf, static_cast<int>(j), top);
}

void VictimRule::ScopesByTreeNode(std::vector<Scope>* by_node) const {
  const QuotaTree& tree = state_.ledger().tree();
  const std::size_t size = static_cast<std::size_t>(tree.size());
  by_node->resize(size);
  if (!has_quota_) {
    for (std::size_t y = 0; y < size; ++y)
      (*by_node)[y] = ScopeAt(static_cast<int>(y), 0, -1);
    return;
  }
  // Per node y, parents before children: `level`, the index on the preemptor's path of the
  // deepest path node that is y or an ancestor of y (A, the lowest common ancestor with P0;
  // path_.size() for the virtual root), and `top`, y's ancestor just below A (W').
  thread_local std::vector<int> level, top, on_path;
  level.assign(size, 0);
  top.assign(size, -1);
  on_path.assign(size, -1);
  for (std::size_t i = 0; i < path_.size(); ++i)
    on_path[static_cast<std::size_t>(path_[i])] = static_cast<int>(i);
  const int virtual_root = static_cast<int>(path_.size());
  for (const int y : tree.order()) {
    const auto at = static_cast<std::size_t>(y);
    const int parent = tree.parent(y);
    if (on_path[at] >= 0) {
      // P0 is the own namespace; an ancestor of P0 holds no namespace.
      (*by_node)[at] = y == path_.front() ? ScopeAt(y, 0, -1) : Scope{};
      continue;
    }
    const bool below_lca = parent < 0 || on_path[static_cast<std::size_t>(parent)] >= 0;
    level[at] = parent < 0  ? virtual_root
                : below_lca ? on_path[static_cast<std::size_t>(parent)]
                            : level[static_cast<std::size_t>(parent)];
    top[at] = below_lca ? y : top[static_cast<std::size_t>(parent)];
    (*by_node)[at] = ScopeAt(y, level[at], top[at]);
  }
}

VictimRule::Scope VictimRule::ScopeAt(int leaf, int level, int top) const {
  Scope scope;
  if (!has_quota_) {
    scope.any = leaf < 0;
    scope.lower_priority_only = true;
    return scope;
  }
  if (leaf < 0) return scope;   // never a victim of a quota pod
  if (leaf == path_.front()) {  // the preemptor's own namespace
    scope.any = more_than_min_;
    scope.lower_priority_only = true;
    return scope;
  }
  if (level == 0 || within_[static_cast<std::size_t>(level - 1)] == 0) return scope;  // (1) fails
  scope.any = true;
  scope.recheck = true;
  scope.leaf = leaf;
  scope.top = top;
  scope.distance = level;
  return scope;
}

std::string VictimRule::DescribeLevel(int distance) const {
  if (distance <= 0) return "its own namespace";
  if (static_cast<std::size_t>(distance) >= path_.size()) return "across the root quotas";
  return "ElasticQuota " + state_.ledger().tree().quota(path_[distance]).Key();
}

}  // namespace capext
