#include "core/placement.h"

#include <map>

#include <fmt/format.h>

#include "core/group_quota.h"

namespace capext {

namespace {

// The quota verdict of step 1: the group rule where it applies, else the admission check for the
// pod.
Status QuotaVerdict(const ClusterState& state, const NormalizedPod& pod,
                    std::vector<std::string>* group_hold) {
  if (!pod.group.empty()) {
    GroupQuotaCheck group = CheckGroupQuota(state, pod);
    if (group.applies) {
      *group_hold = std::move(group.hold);
      return group.status;
    }
  }
  return CheckQuota(state, pod);
}

}  // namespace

PodFilter::PodFilter(const ClusterState& state, const NormalizedPod& pod)
    : state_(state),
      pod_(pod),
      group_hold_(),
      quota_(QuotaVerdict(state, pod, &group_hold_)),
      screen_(state, pod) {}

Status PodFilter::CheckNode(std::string_view node) const {
  if (!quota_.ok()) return quota_;
  const NodeRecord* record = state_.FindNodeRecord(node);
  if (record == nullptr || record->node == nullptr || screen_.Fits(*record)) return {};
  return screen_.Check(*record);
}

Feasibility FindFeasibleNodes(const ClusterState& state, const NormalizedPod& pod) {
  Feasibility out;
  const PodFilter filter(state, pod);
  out.quota = filter.quota();
  if (!out.quota.ok()) return out;
  for (const auto& [name, node] : state.nodes()) {
    Status s = filter.CheckNode(name);
    if (s.ok()) {
      out.feasible.push_back(name);
    } else {
      out.failed.emplace_back(name, std::move(s));
    }
  }
  return out;
}

std::string SummarizeUnschedulable(const Feasibility& f) {
  if (!f.quota.ok()) return f.quota.message();
  // kube-scheduler counts each failed check of each node ("2 Insufficient cpu"): split the
  // joined reasons back into checks.
  std::map<std::string, int> counts;
  for (const auto& [node, status] : f.failed) {
    std::string_view rest = status.message();
    while (!rest.empty()) {
      const std::size_t comma = rest.find(", ");
      ++counts[std::string(rest.substr(0, comma))];
      if (comma == std::string_view::npos) break;
      rest.remove_prefix(comma + 2);
    }
  }
  std::string parts;
  for (const auto& [reason, count] : counts) {
    if (!parts.empty()) parts += ", ";
    parts += fmt::format("{} {}", count, reason);
  }
  return fmt::format("0/{} nodes are available: {}.", f.feasible.size() + f.failed.size(), parts);
}

}  // namespace capext
