#include "extender/reclaim/quota_tree_reach.h"

#include <vector>

namespace capext {

std::set<std::string> NamespacesOfTheirTrees(const ClusterState& state,
                                             const std::set<std::string>& namespaces) {
  const QuotaTree& tree = state.ledger().tree();
  if (tree.flat()) return namespaces;
  std::set<std::string> out;
  std::set<int> roots;
  for (const auto& ns : namespaces) {
    const int leaf = tree.LeafOf(ns);
    if (leaf < 0) {
      out.insert(ns);
    } else {
      roots.insert(tree.RootOf(leaf));
    }
  }
  std::vector<int> stack(roots.begin(), roots.end());
  while (!stack.empty()) {
    const int node = stack.back();
    stack.pop_back();
    if (!tree.own_namespace(node).empty()) out.insert(tree.own_namespace(node));
    for (int child : tree.children(node))
      stack.push_back(child);
  }
  return out;
}

}  // namespace capext
