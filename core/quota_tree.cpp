#include "core/quota_tree.h"

#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/strong_components.hpp>
#include <boost/graph/topological_sort.hpp>

#include <algorithm>
#include <iterator>
#include <map>

#include <fmt/format.h>

namespace capext {
namespace {

// Vertices are indices into the quotas in use; an edge runs from a child to its parent.
using QuotaGraph = boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS>;

// The parent's min minus the children's mins, per resource the parent names, never below 0.
std::optional<ResourceList> OwnMin(const ElasticQuota& parent,
                                   const std::vector<const ElasticQuota*>& children) {
  if (!parent.min) return std::nullopt;
  ResourceList own = *parent.min;
  for (const auto& [name, amount] : parent.min->entries()) {
    int64_t left = amount;
    for (const ElasticQuota* child : children) {
      if (child->min) left = SaturatingSub(left, child->min->Get(name));
    }
    own.Set(name, std::max<int64_t>(0, left));
  }
  return own;
}

}  // namespace

void QuotaTree::Rebuild(const QuotaSet& quotas) {
  stamp_ = NewContentStamp();
  nodes_.clear();
  own_quotas_.clear();
  leaf_index_ = NameIndex();
  order_.clear();
  roots_.clear();
  problems_.clear();
  flat_ = true;

  std::vector<const ElasticQuota*> in_use;
  std::map<std::string, int, std::less<>> by_key;
  for (const auto& [ns, quota] : quotas.quotas()) {
    by_key.emplace(quota.Key(), static_cast<int>(in_use.size()));
    in_use.push_back(&quota);
  }
  const int n = static_cast<int>(in_use.size());
  std::vector<int> parent_of(n, -1);
  QuotaGraph graph(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    const ElasticQuota& q = *in_use[i];
    if (q.parent.empty()) continue;
    auto it = by_key.find(q.parent);
    std::string why;
    if (it == by_key.end()) {
      why = fmt::format("its parent {} does not exist", q.parent);
    } else if (it->second == i) {
      why = "it names itself as its parent";
    } else if (in_use[it->second]->api_group != q.api_group) {
      why = fmt::format("its parent {} is in the other API group ({}, not {})", q.parent,
                        in_use[it->second]->api_group, q.api_group);
    }
    if (!why.empty()) {
      problems_.push_back({q.Key(), why + ": treated as a root"});
      continue;
    }
    parent_of[i] = it->second;
    boost::add_edge(static_cast<std::size_t>(i), static_cast<std::size_t>(it->second), graph);
  }
  // With at most one parent each, a strongly connected component of two or more quotas is a
  // cycle: every quota in it becomes a root.
  std::vector<std::size_t> component(static_cast<std::size_t>(n));
  const std::size_t components = boost::strong_components(
      graph,
      boost::make_iterator_property_map(component.begin(), boost::get(boost::vertex_index, graph)));
  std::vector<int> component_size(components, 0);
  for (std::size_t c : component)
    ++component_size[c];
  QuotaGraph dag(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    if (parent_of[i] < 0) continue;
    if (component_size[component[i]] >= 2) {
      problems_.push_back(
          {in_use[i]->Key(),
           fmt::format("its parent {} is part of a cycle: treated as a root", in_use[i]->parent)});
      parent_of[i] = -1;
      continue;
    }
    boost::add_edge(static_cast<std::size_t>(i), static_cast<std::size_t>(parent_of[i]), dag);
  }

  // Edges run child -> parent, so the reverse topological order Boost writes out puts every
  // parent before its children.
  std::vector<std::size_t> topological;
  boost::topological_sort(dag, std::back_inserter(topological));

  std::vector<std::vector<const ElasticQuota*>> child_quotas(static_cast<std::size_t>(n));
  int with_children = 0;
  for (int i = 0; i < n; ++i) {
    if (parent_of[i] >= 0) {
      flat_ = false;
      if (child_quotas[parent_of[i]].empty()) ++with_children;
      child_quotas[parent_of[i]].push_back(in_use[i]);
    }
  }
  own_quotas_.reserve(static_cast<std::size_t>(with_children));
  nodes_.reserve(static_cast<std::size_t>(n + with_children));
  nodes_.resize(static_cast<std::size_t>(n));  // quota i is node i; own nodes follow
  for (int i = 0; i < n; ++i) {
    nodes_[i].quota = in_use[i];
    nodes_[i].parent = parent_of[i];
  }
  for (std::size_t v : topological) {
    const int i = static_cast<int>(v);
    Node& node = nodes_[i];
    node.depth = node.parent < 0 ? 0 : nodes_[node.parent].depth + 1;
    if (node.parent < 0) {
      roots_.push_back(i);
    } else {
      nodes_[node.parent].children.push_back(i);
    }
    order_.push_back(i);
    if (child_quotas[i].empty()) {
      node.ns = in_use[i]->ns;
      leaf_index_.Insert(node.ns, static_cast<uint32_t>(i));
      continue;
    }
    // The implicit child: the parent's own namespace.
    ElasticQuota own = *in_use[i];
    own.min = OwnMin(*in_use[i], child_quotas[i]);
    own_quotas_.push_back(std::move(own));
    Node own_node;
    own_node.quota = &own_quotas_.back();
    own_node.own = true;
    own_node.parent = i;
    own_node.depth = node.depth + 1;
    own_node.ns = in_use[i]->ns;
    const int own_id = static_cast<int>(nodes_.size());
    nodes_.push_back(std::move(own_node));
    nodes_[i].children.push_back(own_id);
    order_.push_back(own_id);
    leaf_index_.Insert(in_use[i]->ns, static_cast<uint32_t>(own_id));
  }
  std::sort(roots_.begin(), roots_.end());
}

int QuotaTree::Lca(int a, int b) const {
  while (a >= 0 && b >= 0 && a != b) {
    if (nodes_[a].depth >= nodes_[b].depth) {
      a = nodes_[a].parent;
    } else {
      b = nodes_[b].parent;
    }
  }
  return a == b ? a : -1;
}

}  // namespace capext
