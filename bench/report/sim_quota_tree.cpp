#include "bench/report/sim_quota_tree.h"

#include <algorithm>
#include <map>

namespace capext {
namespace {

std::string ResourceOf(const SimulationResult& r, const std::string& which) {
  return which == "gpu" ? r.gpu_resource : which;
}

}  // namespace

const std::vector<int64_t>& UsedSeries(const QuotaTreeNode& node, const std::string& which) {
  if (which == "memory") return node.memory;
  if (which == "gpu") return node.gpu;
  return node.cpu;
}

double ReportScale(const SimulationResult& r, const std::string& which) {
  if (which == "memory") return 1024.0 * 1024.0 * 1024.0;
  if (which == "gpu") return static_cast<double>(r.gpu_scale);
  return 1000.0;
}

PlanTreeView BuildQuotaTree(const SimulationResult& r) {
  PlanTreeView tree;
  std::map<std::string, std::size_t> in_plan;  // name -> tenant index
  bool any_parent = false;
  for (std::size_t t = 0; t < r.tenants.size(); ++t) {
    if (!r.tenants[t].in_plan) continue;
    in_plan.emplace(r.tenants[t].name, t);
    any_parent |= !r.tenants[t].parent.empty();
  }
  if (!any_parent) return tree;

  // Children by parent tenant, in name order (the tenants are sorted by name).
  std::map<std::size_t, std::vector<std::size_t>> kids;
  std::vector<std::size_t> roots;
  for (const auto& [name, t] : in_plan) {
    const std::string& parent = r.tenants[t].parent;
    auto p = parent.empty() ? in_plan.end() : in_plan.find(parent);
    if (parent.empty()) {
      roots.push_back(t);
    } else if (p != in_plan.end()) {
      kids[p->second].push_back(t);
    }
  }
  // Depth first from the roots: a quota in a cycle is never reached.
  struct Visit {
    std::size_t tenant;
    std::optional<std::size_t> parent;
    int level;
  };
  std::vector<Visit> stack;
  for (auto it = roots.rbegin(); it != roots.rend(); ++it)
    stack.push_back({*it, std::nullopt, 0});
  while (!stack.empty()) {
    const Visit v = stack.back();
    stack.pop_back();
    const std::size_t index = tree.nodes.size();
    QuotaTreeNode node;
    node.tenant = v.tenant;
    node.parent = v.parent;
    node.level = v.level;
    tree.levels = std::max(tree.levels, v.level + 1);
    if (v.parent) tree.nodes[*v.parent].children.push_back(index);
    tree.nodes.push_back(std::move(node));
    const auto& children = kids[v.tenant];
    for (auto it = children.rbegin(); it != children.rend(); ++it)
      stack.push_back({*it, index, v.level + 1});
  }

  // Own usage per sample, then each subtree summed into its parent (children come after their
  // parent in depth-first order, so a reverse sweep sees every child before its parent).
  const auto& timeline = r.metrics.timeline();
  for (auto& node : tree.nodes) {
    node.cpu.reserve(timeline.size());
    node.memory.reserve(timeline.size());
    node.gpu.reserve(timeline.size());
    for (const auto& point : timeline) {
      const auto& own = point.tenants[node.tenant];
      node.cpu.push_back(own.cpu);
      node.memory.push_back(own.memory);
      node.gpu.push_back(own.gpu);
    }
  }
  for (std::size_t i = tree.nodes.size(); i-- > 0;) {
    const QuotaTreeNode& child = tree.nodes[i];
    if (!child.parent) continue;
    QuotaTreeNode& parent = tree.nodes[*child.parent];
    for (std::size_t s = 0; s < timeline.size(); ++s) {
      parent.cpu[s] += child.cpu[s];
      parent.memory[s] += child.memory[s];
      parent.gpu[s] += child.gpu[s];
    }
  }
  return tree;
}

LevelUsage UsageOf(const SimulationResult& r, const QuotaTreeNode& node, const std::string& which) {
  LevelUsage u;
  const std::vector<int64_t>& used = UsedSeries(node, which);
  const std::string resource = ResourceOf(r, which);
  if (used.empty() || resource.empty()) return u;
  const TenantPlanView& plan = r.tenants[node.tenant];
  const std::optional<int64_t> min = plan.min ? plan.min->Find(resource) : std::optional<int64_t>();
  const std::optional<int64_t> max = plan.max ? plan.max->Find(resource) : std::optional<int64_t>();
  int64_t peak = 0;
  double sum = 0;
  for (int64_t v : used) {
    peak = std::max(peak, v);
    sum += static_cast<double>(v);
    u.samples_above_max += max && v > *max;
    u.samples_above_min += min && v > *min;
  }
  const double scale = ReportScale(r, which);
  u.peak = static_cast<double>(peak) / scale;
  u.mean = sum / static_cast<double>(used.size()) / scale;
  return u;
}

}  // namespace capext
