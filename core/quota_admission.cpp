#include "core/quota_admission.h"

#include <fmt/format.h>

#include "core/reasons.h"

namespace capext {

AdmissionPath MakeAdmissionPath(const ClusterState& state, const NormalizedPod& pod,
                                const ResourceList* request) {
  AdmissionPath path;
  const QuotaTree& tree = state.ledger().tree();
  path.quota = state.QuotaFor(pod.ns);
  const ResourceList& own = request != nullptr ? *request : pod.quota_request();
  path.sums.in_eq = own;
  if (path.quota == nullptr) {
    path.sums.all = path.sums.in_eq;
    return path;
  }
  path.leaf = tree.LeafOf(pod.ns);
  if (const QuotaHold* hold = state.FindHold(pod.store_key())) path.own_hold = hold->quota_request;
  for (int node = tree.QuotaNodeOf(pod.ns); node >= 0; node = tree.parent(node)) {
    AdmissionPath::Level level{node, &tree.quota(node), -1};
    // A level whose subtree holds more than the pod's namespace has its own r.
    if (node != path.leaf) {
      level.in_eq = static_cast<int>(path.extra_in_eq.size());
      path.extra_in_eq.push_back(own);
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
  // A group's need already holds every waiting member's request: the nominations of its members
  // (a plan's hold, docs/reclaim-plan.md#3-the-freed-room-is-held) are not added to it again.
  const bool group_request = request != nullptr && !pod.group.empty();
  state.ForEachNomination([&](const Nomination& n) {
    if (n.uid == self) return;
    // A held pod is in used already: its nomination holds its node, not its quota again
    // (docs/workloads.md#2-holds-quota-without-a-node, "held, reserved or bound: never two").
    if (state.FindHold(n.uid) != nullptr) return;
    if (group_request && n.ns == pod.ns) {
      const NormalizedPod* member = state.FindPod(n.uid);
      if (member != nullptr && member->group == pod.group) return;
    }
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

AggregateTotals TotalsWithoutOwnHold(QuotaSemantics semantics, const AdmissionPath& path,
                                     const AggregateTotals& totals) {
  AggregateTotals out = totals;
  for (const auto& [name, amount] : path.own_hold.entries()) {
    if (CountsInTotals(semantics, *path.root, name)) out.used.AddTo(name, SaturatingSub(0, amount));
  }
  return out;
}

namespace {

// "gang eq1/a: 4 pods need cpu 16: " for the resources that block (a group's subject), or ""
// for a pod.
std::string Subject(std::string_view group, int pods, const ResourceList& request,
                    const std::vector<Excess>& excesses) {
  if (group.empty()) return {};
  ResourceList blocking;
  for (const auto& e : excesses)
    blocking.Set(e.resource, request.Get(e.resource));
  return reasons::GangNeeds(group, pods, blocking.ToString());
}

// CheckQuotaPath for `request`; reasons name `pod_key` (a pod) or, when `group` is set, start
// with the group's subject.
Status CheckPath(const ClusterState& state, const ResourceList& request, const AdmissionPath& path,
                 std::string_view pod_key, std::string_view group, int pods) {
  if (path.quota == nullptr) return {};
  const QuotaSemantics semantics = state.semantics();
  // A request above the max of q or of an ancestor can never fit: the nearest such quota.
  for (std::size_t i = 0; i < path.levels.size(); ++i) {
    auto alone = ExceedsMax(semantics, *path.levels[i].quota, ResourceList{}, request);
    if (!alone.empty()) {
      const std::string details = DescribeRequestExcesses(alone, "max");
      const std::string subject = Subject(group, pods, request, alone);
      return Status::Unresolvable(
          subject.empty() ? reasons::QuotaRequestAboveMax(pod_key, Blocking(path, i), details)
                          : std::string(subject) +
                                reasons::QuotaRequestAboveMaxRule(Blocking(path, i), details));
    }
  }
  for (std::size_t i = 0; i < path.levels.size(); ++i) {
    const auto& level = path.levels[i];
    const ResourceList& node_used = state.ledger().NodeUsed(level.node);
    auto over = path.own_hold.empty()
                    ? ExceedsMax(semantics, *level.quota, node_used, path.InEq(level))
                    : ExceedsMax(semantics, *level.quota, path.UsedWithoutOwnHold(node_used),
                                 path.InEq(level));
    if (!over.empty()) {
      const std::string details = DescribeExcesses(over, request, "max");
      const std::string subject = Subject(group, pods, request, over);
      return Status::Unschedulable(
          subject.empty()
              ? reasons::QuotaMaxExceeded(pod_key, Blocking(path, i), details)
              : std::string(subject) + reasons::QuotaMaxRule(Blocking(path, i), details));
    }
  }
  auto over_min = path.own_hold.empty()
                      ? ExceedsAggregateMin(semantics, *path.root, state.totals(), path.sums.all)
                      : ExceedsAggregateMin(semantics, *path.root,
                                            TotalsWithoutOwnHold(semantics, path, state.totals()),
                                            path.sums.all);
  if (!over_min.empty()) {
    const std::string details = DescribeExcesses(over_min, request, "min");
    const std::string subject = Subject(group, pods, request, over_min);
    return Status::Unschedulable(subject.empty()
                                     ? reasons::AggregateMinExceeded(pod_key, details)
                                     : std::string(subject) + reasons::AggregateMinRule(details));
  }
  return {};
}

}  // namespace

Status CheckQuotaPath(const ClusterState& state, const NormalizedPod& pod,
                      const AdmissionPath& path) {
  if (path.quota == nullptr) return {};
  // docs/devices.md#7-bad-input-the-pod-waits-never-admitted-uncounted: devices that cannot be
  // counted hold the pod, never admit it uncounted.
  if (!pod.device_problem().empty())
    return Status::Unschedulable(reasons::DevicesNotCountable(pod.Key(), pod.device_problem()));
  return CheckPath(state, pod.quota_request(), path, pod.Key(), {}, 1);
}

Status CheckGroupRequest(const ClusterState& state, const NormalizedPod& pod,
                         const ResourceList& request, std::string_view group, int pods) {
  if (state.QuotaFor(pod.ns) == nullptr) return {};
  if (!pod.device_problem().empty())
    return Status::Unschedulable(reasons::DevicesNotCountable(pod.Key(), pod.device_problem()));
  return CheckPath(state, request, MakeAdmissionPath(state, pod, &request), pod.Key(), group, pods);
}

Status CheckQuota(const ClusterState& state, const NormalizedPod& pod) {
  if (state.QuotaFor(pod.ns) == nullptr) return {};
  return CheckQuotaPath(state, pod, MakeAdmissionPath(state, pod));
}

}  // namespace capext
