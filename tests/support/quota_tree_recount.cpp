#include "tests/support/quota_tree_recount.h"

#include <algorithm>
#include <map>

namespace capext::testing {

bool SameAmounts(const ResourceList& a, const ResourceList& b) {
  for (const auto& [name, amount] : a.entries()) {
    if (b.Get(name) != amount) return false;
  }
  for (const auto& [name, amount] : b.entries()) {
    if (a.Get(name) != amount) return false;
  }
  return true;
}

QuotaTreeRecount::QuotaTreeRecount(const ClusterState& state) {
  std::vector<const ElasticQuota*> quotas;
  for (const auto& [ns, q] : state.quota_set().quotas())
    quotas.push_back(&q);
  const int n = static_cast<int>(quotas.size());
  auto index_of = [&](const std::string& key) {
    for (int i = 0; i < n; ++i) {
      if (quotas[i]->Key() == key) return i;
    }
    return -1;
  };
  // The link an annotation makes: to another quota in use, of the same API group.
  std::vector<int> link(static_cast<std::size_t>(n), -1);
  for (int i = 0; i < n; ++i) {
    if (quotas[i]->parent.empty()) continue;
    const int j = index_of(quotas[i]->parent);
    if (j < 0 || j == i || quotas[j]->api_group != quotas[i]->api_group) {
      invalid_.push_back(quotas[i]->Key());
      continue;
    }
    link[i] = j;
  }
  // A quota whose links lead back to itself is on a cycle: its link goes too (a quota whose
  // links only lead into a cycle keeps its own).
  std::vector<int> parent = link;
  for (int i = 0; i < n; ++i) {
    if (link[i] < 0) continue;
    int x = link[i];
    for (int steps = 0; steps < n && x >= 0 && x != i; ++steps)
      x = link[x];
    if (x == i) {
      parent[i] = -1;
      invalid_.push_back(quotas[i]->Key());
    }
  }

  // Quota i is node i; own nodes follow, one for each quota with children.
  nodes_.resize(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    nodes_[i].key = quotas[i]->Key();
    nodes_[i].quota = *quotas[i];
    nodes_[i].parent = parent[i];
  }
  for (int i = 0; i < n; ++i) {
    std::vector<const ElasticQuota*> children;
    for (int j = 0; j < n; ++j) {
      if (parent[j] == i) children.push_back(quotas[j]);
    }
    if (children.empty()) {
      nodes_[i].ns = quotas[i]->ns;
      continue;
    }
    TreeNode own;
    own.key = quotas[i]->Key() + " (own)";
    own.quota = *quotas[i];
    own.own = true;
    own.parent = i;
    own.ns = quotas[i]->ns;
    if (quotas[i]->min) {
      ResourceList min;
      for (const auto& [name, amount] : quotas[i]->min->entries()) {
        int64_t left = amount;
        for (const ElasticQuota* child : children) {
          if (child->min) left -= child->min->Get(name);
        }
        min.Set(name, std::max<int64_t>(0, left));
      }
      own.quota.min = min;
    }
    nodes_.push_back(std::move(own));
  }
  for (int i = 0; i < n; ++i) {
    int depth = 1;
    for (int x = parent[i]; x >= 0; x = parent[x])
      ++depth;
    levels_ = std::max(levels_, depth);
  }

  std::map<std::string, ResourceList, std::less<>> ns_used;
  for (const auto& [key, pod] : state.pods()) {
    if (pod.IsTerminal()) continue;
    if (pod.IsBound()) {
      ns_used[pod.ns].Add(pod.quota_request());
      continue;
    }
    const Reservation* reserved = state.FindReservation(key);
    if (reserved != nullptr) ns_used[pod.ns].Add(pod.quota_request());
    // Reserved on a node, the pod is the pod bound there: its status.nominatedNodeName holds no
    // room (docs/capacity-semantics.md#6-accounting-used-reservations-nominations); a reservation
    // releases our nomination of it.
    const bool on_node = reserved != nullptr && !reserved->node.empty();
    if (state.FindOurNomination(key) != nullptr || (!pod.nominated_node_name.empty() && !on_node))
      nominated_.push_back({std::string(key), pod.ns, pod.priority, pod.quota_request()});
  }
  for (std::size_t i = 0; i < nodes_.size(); ++i) {
    if (nodes_[i].ns.empty()) continue;
    const auto it = ns_used.find(nodes_[i].ns);
    if (it == ns_used.end()) continue;
    for (int y = static_cast<int>(i); y >= 0; y = nodes_[y].parent)
      nodes_[y].used.Add(it->second);
  }
}

int QuotaTreeRecount::LeafOf(std::string_view ns) const {
  for (std::size_t i = 0; i < nodes_.size(); ++i) {
    if (nodes_[i].ns == ns) return static_cast<int>(i);
  }
  return -1;
}

int QuotaTreeRecount::QuotaNodeOf(std::string_view ns) const {
  const int leaf = LeafOf(ns);
  return leaf >= 0 && nodes_[leaf].own ? nodes_[leaf].parent : leaf;
}

bool QuotaTreeRecount::Contains(int ancestor, int node) const {
  for (int x = node; x >= 0; x = nodes_[x].parent) {
    if (x == ancestor) return true;
  }
  return false;
}

int QuotaTreeRecount::Lca(int a, int b) const {
  for (int x = a; x >= 0; x = nodes_[x].parent) {
    if (Contains(x, b)) return x;
  }
  return -1;
}

std::vector<int> QuotaTreeRecount::PathUp(int node) const {
  std::vector<int> path;
  for (int x = node; x >= 0; x = nodes_[x].parent)
    path.push_back(x);
  return path;
}

std::vector<int> QuotaTreeRecount::Roots() const {
  std::vector<int> roots;
  for (std::size_t i = 0; i < nodes_.size(); ++i) {
    if (nodes_[i].parent < 0) roots.push_back(static_cast<int>(i));
  }
  return roots;
}

AggregateTotals QuotaTreeRecount::RootTotals(QuotaSemantics semantics) const {
  AggregateBuilder builder(semantics);
  for (int root : Roots())
    builder.AddQuota(node(root).quota, node(root).used);
  return std::move(builder).Build();
}

ResourceList QuotaTreeRecount::RequestAt(const NormalizedPod& pod, int node) const {
  ResourceList r = pod.quota_request();
  for (const Nominated& n : nominated_) {
    if (n.key == pod.store_key() || n.priority < pod.priority) continue;
    const int leaf = LeafOf(n.ns);
    if (leaf >= 0 && Contains(node, leaf)) r.Add(n.request);
  }
  return r;
}

}  // namespace capext::testing
