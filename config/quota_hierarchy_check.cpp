#include "config/quota_hierarchy_check.h"

#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/strong_components.hpp>

#include <map>

#include <fmt/format.h>

#include "config/quota_object_check.h"

namespace capext {
namespace {

// Vertices are indices into the quota vector; an edge runs from a child to its parent.
using QuotaGraph = boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS>;

std::string CyclePath(const std::vector<ElasticQuota>& quotas,
                      const std::vector<std::optional<std::size_t>>& parent_of, std::size_t start) {
  std::string path = quotas[start].Key();
  for (std::size_t at = *parent_of[start]; at != start; at = *parent_of[at]) {
    path += " -> " + quotas[at].Key();
  }
  return path + " -> " + quotas[start].Key();
}

}  // namespace

std::vector<QuotaSetProblem> CheckQuotaHierarchy(const std::vector<ElasticQuota>& quotas,
                                                 std::string_view scope) {
  std::vector<QuotaSetProblem> problems;
  std::map<std::string, std::size_t> by_key;
  for (std::size_t i = 0; i < quotas.size(); ++i)
    by_key.emplace(quotas[i].Key(), i);

  QuotaGraph graph(quotas.size());
  std::vector<std::optional<std::size_t>> parent_of(quotas.size());
  for (std::size_t i = 0; i < quotas.size(); ++i) {
    const ElasticQuota& q = quotas[i];
    if (q.parent.empty()) continue;
    auto it = by_key.find(q.parent);
    if (it == by_key.end()) {
      problems.push_back(
          {i, std::nullopt, ParentAnnotationField(),
           fmt::format("the parent ElasticQuota {} is not defined {}", q.parent, scope)});
      continue;
    }
    if (it->second == i) {
      problems.push_back(
          {i, std::nullopt, ParentAnnotationField(), "the quota names itself as its parent"});
      continue;
    }
    const ElasticQuota& parent = quotas[it->second];
    if (!q.api_group.empty() && !parent.api_group.empty() && q.api_group != parent.api_group) {
      problems.push_back({i, it->second, ParentAnnotationField(),
                          fmt::format("the parent ElasticQuota {} is a {} quota and this one a {} "
                                      "quota: a parent must be in the same API group",
                                      q.parent, parent.api_group, q.api_group)});
      continue;
    }
    parent_of[i] = it->second;
    boost::add_edge(i, it->second, graph);
  }

  // With at most one parent each, every strongly connected component of two or more quotas is
  // exactly one cycle.
  std::vector<std::size_t> component(quotas.size());
  const std::size_t components = boost::strong_components(
      graph,
      boost::make_iterator_property_map(component.begin(), boost::get(boost::vertex_index, graph)));
  std::vector<std::size_t> component_size(components, 0);
  for (std::size_t c : component)
    ++component_size[c];
  std::vector<bool> in_cycle(quotas.size(), false);
  for (std::size_t i = 0; i < quotas.size(); ++i) {
    if (component_size[component[i]] < 2) continue;
    in_cycle[i] = true;
    problems.push_back(
        {i, parent_of[i], ParentAnnotationField(),
         fmt::format("the hierarchy has a cycle: {}", CyclePath(quotas, parent_of, i))});
  }

  // Children must fit in their parent: min sums within the parent's min (an error: the
  // guarantees could not all be met), max within its max (a warning: the parent caps it).
  std::map<std::size_t, std::vector<std::size_t>> children;
  for (std::size_t i = 0; i < quotas.size(); ++i) {
    // Under a cycle there is no well-defined parent to fit in: the cycle is the problem.
    if (parent_of[i] && !in_cycle[i] && !in_cycle[*parent_of[i]]) {
      children[*parent_of[i]].push_back(i);
    }
  }
  for (const auto& [parent, kids] : children) {
    const ElasticQuota& p = quotas[parent];
    ResourceList sum;
    for (std::size_t k : kids) {
      if (quotas[k].min) sum.Add(*quotas[k].min);
    }
    for (const auto& [resource, total] : sum.entries()) {
      const int64_t parent_min = p.min ? p.min->Get(resource) : 0;
      if (total <= parent_min) continue;
      std::vector<std::string> parts;
      for (std::size_t k : kids) {
        const int64_t m = quotas[k].min ? quotas[k].min->Get(resource) : 0;
        if (m > 0)
          parts.push_back(fmt::format("{} {}", quotas[k].Key(), FormatAmount(resource, m)));
      }
      problems.push_back(
          {parent, kids.size() == 1 ? std::optional(kids[0]) : std::nullopt,
           "spec.min." + std::string(resource.str()),
           fmt::format("the children's min {} sums to {} ({}), more than this parent's min {} {}",
                       resource, FormatAmount(resource, total), fmt::join(parts, ", "), resource,
                       FormatAmount(resource, parent_min))});
    }
    for (std::size_t k : kids) {
      if (!quotas[k].max || !p.max) continue;
      for (const auto& [resource, child_max] : quotas[k].max->entries()) {
        const std::optional<int64_t> parent_max = p.max->Find(resource);
        if (!parent_max || child_max <= *parent_max) continue;
        problems.push_back(
            {k, parent, "spec.max." + std::string(resource.str()),
             fmt::format("max {} {} exceeds the parent {}'s max {} {}: the parent caps it anyway",
                         resource, FormatAmount(resource, child_max), p.Key(), resource,
                         FormatAmount(resource, *parent_max)),
             Severity::kWarning});
      }
    }
  }
  return problems;
}

}  // namespace capext
