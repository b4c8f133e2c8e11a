#include "core/placement.h"

#include <map>

#include <fmt/format.h>

#include "core/reasons.h"

namespace capext {

Feasibility FindFeasibleNodes(const ClusterState& state, const Pod& pod,
                              const std::vector<std::string>& nodes) {
  Feasibility out;
  out.quota = CheckQuota(state, pod);
  if (!out.quota.ok()) return out;
  auto examine = [&](const NodeInfo& info) {
    NodeFitResult fit = CheckNodeFit(state, pod, info);
    if (fit.ok()) {
      out.feasible.push_back(info.node.name);
    } else {
      out.failed.emplace_back(info.node.name, std::move(fit));
    }
  };
  if (nodes.empty()) {
    for (const auto& [name, node] : state.nodes())
      examine(NodeInfo{node, &state.UsageOf(name)});
    return out;
  }
  for (const auto& name : nodes) {
    if (auto info = state.FindNode(name)) {
      examine(*info);
    } else {
      NodeFitResult missing;
      missing.code = FitCode::kUnschedulableAndUnresolvable;
      missing.reasons.emplace_back(reasons::kNodeNotFound);
      out.failed.emplace_back(name, std::move(missing));
    }
  }
  return out;
}

std::string SummarizeUnschedulable(const Feasibility& f) {
  if (!f.quota.ok()) return f.quota.reason;
  std::map<std::string, int> counts;
  for (const auto& [node, fit] : f.failed) {
    for (const auto& reason : fit.reasons)
      ++counts[reason];
  }
  std::string parts;
  for (const auto& [reason, count] : counts) {
    if (!parts.empty()) parts += ", ";
    parts += fmt::format("{} {}", count, reason);
  }
  return fmt::format("0/{} nodes are available: {}.", f.feasible.size() + f.failed.size(), parts);
}

}  // namespace capext
