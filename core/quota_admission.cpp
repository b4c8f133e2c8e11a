#include "core/quota_admission.h"

#include <fmt/format.h>

#include "core/reasons.h"

namespace capext {

AdmissionPath MakeAdmissionPath(const ClusterState& state, const NormalizedPod& pod) {
  AdmissionPath path;
  const QuotaTree& tree = state.ledger().tree();
  path.quota = state.QuotaFor(pod.ns);
  path.sums.in_eq = pod.quota_request();
  if (path.quota == nullptr) {
    path.sums.all = path.sums.in_eq;
    return path;
  }
  path.leaf = tree.LeafOf(pod.ns);
  for (int node = tree.QuotaNodeOf(pod.ns); node >= 0; node = tree.parent(node)) {
    AdmissionPath::Level level{node, &tree.quota(node), -1};
    // A level whose subtree holds more than the pod's namespace has its own r.
    if (node != path.leaf) {
      level.in_eq = static_cast<int>(path.extra_in_eq.size());
      path.extra_in_eq.push_back(pod.quota_request());
    }
    path.levels.push_back(level);
  }
  path.root = path.levels.empty() ? path.quota : path.levels.back().quota;
  if (!state.HasNominations()) {
    path.sums.all =
        path.levels.empty() || path.levels[0].in_eq < 0 ? path.sums.in_eq : path.extra_in_eq[0];
    return path;
  }
  const int quota_node = path.levels.front().node;
  ResourceList others;
  const std::string& self = pod.store_key();
  state.ForEachNomination([&](const Nomination& n) {
    if (n.uid == self) return;
    const int leaf = tree.LeafOf(n.ns);
    if (leaf < 0) return;  // a namespace without a quota
    if (tree.Contains(quota_node, leaf)) {
      if (n.priority < pod.priority) return;
      if (n.ns == pod.ns) path.sums.in_eq.Add(n.quota_request);
      for (auto& level : path.levels) {
        if (level.in_eq >= 0 && tree.Contains(level.node, leaf))
          path.extra_in_eq[static_cast<std::size_t>(level.in_eq)].Add(n.quota_request);
      }
      return;
    }
    for (auto& level : path.levels) {
      if (level.in_eq >= 0 && n.priority >= pod.priority && tree.Contains(level.node, leaf))
        path.extra_in_eq[static_cast<std::size_t>(level.in_eq)].Add(n.quota_request);
    }
    if (!IsBorrowing(state.semantics(), tree.quota(leaf), state.ledger().NodeUsed(leaf)))
      others.Add(n.quota_request);
  });
  path.sums.all = path.InEq(path.levels.front()) + others;
  return path;
}

namespace {

// "ElasticQuota team-a/team-a (parent of a2/a2)": the quota that blocks and its relation to the
// pod's quota.
std::string Blocking(const AdmissionPath& path, std::size_t level) {
  const ElasticQuota& q = *path.levels[level].quota;
  if (level == 0) return q.Key();
  return fmt::format("{} ({} of {})", q.Key(), level == 1 ? "parent" : "ancestor",
                     path.quota->Key());
}

}  // namespace

Status CheckQuotaPath(const ClusterState& state, const NormalizedPod& pod,
                      const AdmissionPath& path) {
  if (path.quota == nullptr) return {};
  // docs/devices.md#7-bad-input-the-pod-waits-never-admitted-uncounted: devices that cannot be
  // counted hold the pod, never admit it uncounted.
  if (!pod.device_problem().empty())
    return Status::Unschedulable(reasons::DevicesNotCountable(pod.Key(), pod.device_problem()));
  const QuotaSemantics semantics = state.semantics();
  const ResourceList& request = pod.quota_request();
  // A request above the max of q or of an ancestor can never fit: the nearest such quota.
  for (std::size_t i = 0; i < path.levels.size(); ++i) {
    auto alone = ExceedsMax(semantics, *path.levels[i].quota, ResourceList{}, request);
    if (!alone.empty()) {
      return Status::Unresolvable(reasons::QuotaRequestAboveMax(
          pod.Key(), Blocking(path, i), DescribeRequestExcesses(alone, "max")));
    }
  }
  for (std::size_t i = 0; i < path.levels.size(); ++i) {
    const auto& level = path.levels[i];
    auto over =
        ExceedsMax(semantics, *level.quota, state.ledger().NodeUsed(level.node), path.InEq(level));
    if (!over.empty()) {
      return Status::Unschedulable(reasons::QuotaMaxExceeded(
          pod.Key(), Blocking(path, i), DescribeExcesses(over, request, "max")));
    }
  }
  auto over_min = ExceedsAggregateMin(semantics, *path.root, state.totals(), path.sums.all);
  if (!over_min.empty()) {
    return Status::Unschedulable(
        reasons::AggregateMinExceeded(pod.Key(), DescribeExcesses(over_min, request, "min")));
  }
  return {};
}

Status CheckQuota(const ClusterState& state, const NormalizedPod& pod) {
  if (state.QuotaFor(pod.ns) == nullptr) return {};
  return CheckQuotaPath(state, pod, MakeAdmissionPath(state, pod));
}

}  // namespace capext
