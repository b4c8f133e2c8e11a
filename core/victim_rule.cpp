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
  const QuotaTree& tree = state_.ledger().tree();
  const int lca = tree.Lca(path_.front(), leaf);
  // The level j of A on the preemptor's path (the virtual root above the last).
  std::size_t j = path_.size();
  for (std::size_t i = 0; i < path_.size(); ++i) {
    if (path_[i] == lca) j = i;
  }
  if (j == 0 || within_[j - 1] == 0) return scope;  // (1) fails at Q'
  // W': the node below A on the victim's side.
  int top = leaf;
  while (tree.parent(top) != lca)
    top = tree.parent(top);
  scope.any = true;
  scope.recheck = true;
  scope.leaf = leaf;
  scope.top = top;
  scope.distance = static_cast<int>(j);
  return scope;
}

bool VictimRule::MayGiveVictims(const Scope& scope, std::vector<int8_t>* borrowing) const {
  if (!scope.any) return false;
  if (!scope.recheck) return true;
  // SideBorrowing on the state's usage, each node's verdict memoised.
  const QuotaTree& tree = state_.ledger().tree();
  return EverySideNode(scope, [&](int y) {
    int8_t& known = (*borrowing)[static_cast<std::size_t>(y)];
    if (known < 0) {
      known = IsBorrowing(state_.semantics(), tree.quota(y), state_.ledger().NodeUsed(y)) ? 1 : 0;
    }
    return known == 1;
  });
}

std::string VictimRule::DescribeLevel(int distance) const {
  if (distance <= 0) return "its own namespace";
  if (static_cast<std::size_t>(distance) >= path_.size()) return "across the root quotas";
  return "ElasticQuota " + state_.ledger().tree().quota(path_[distance]).Key();
}

}  // namespace capext
