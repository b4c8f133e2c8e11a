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

std::string BlockingQuota(const AdmissionPath& path, std::size_t level) {
  const ElasticQuota& q = *path.levels[level].quota;
  if (level == 0) return q.Key();
  return fmt::format("{} ({} of {})", q.Key(), level == 1 ? "parent" : "ancestor",
                     path.quota->Key());
}

std::string GroupSubject(const Demand& demand, const std::vector<Excess>& excesses) {
  if (demand.group.empty()) return {};
  ResourceList blocking;
  for (const auto& e : excesses)
    blocking.Set(e.resource, demand.request.Get(e.resource));
  return reasons::GangNeeds(demand.group, demand.pods, blocking.ToString());
}

DeclaredChanges AdmissionChanges(QuotaSemantics semantics) {
  DeclaredChanges out = QuotaMaxRule().Declared() | SumOfMinsRule().Declared();
  for (const AdmissionRule* rule : semantics.extra_rules())
    out |= rule->Declared();
  return out;
}

AggregateTotals TotalsWithoutOwnHold(QuotaSemantics semantics, const AdmissionPath& path,
                                     const AggregateTotals& totals) {
  AggregateTotals out = totals;
  for (const auto& [name, amount] : path.own_hold.entries()) {
    if (CountsInTotals(semantics, *path.root, name)) out.used.AddTo(name, SaturatingSub(0, amount));
  }
  return out;
}

namespace {

// The state's usage, for the rules.
class StateUsage final : public AdmissionUsage {
 public:
  explicit StateUsage(const ClusterState& state) : state_(state) {}
  const ResourceList& UsedOf(int node) const override { return state_.ledger().NodeUsed(node); }
  const AggregateTotals& Totals() const override { return state_.totals(); }

 private:
  const ClusterState& state_;
};

// The rules of the state's profile for `demand` (core/admission_rule.h: built-in, then extra; the
// first that does not pass decides).
AdmissionVerdict DecidePath(const ClusterState& state, const AdmissionPath& path,
                            const Demand& demand) {
  if (path.quota == nullptr) return {};
  const QuotaSemantics semantics = state.semantics();
  const StateUsage usage(state);
  for (const AdmissionRule* rule : {&QuotaMaxRule(), &SumOfMinsRule()}) {
    if (Status s = rule->Check(semantics, path, usage, demand); !s.ok()) return {s, rule};
  }
  for (const AdmissionRule* rule : semantics.extra_rules()) {
    if (Status s = rule->Check(semantics, path, usage, demand); !s.ok()) return {s, rule};
  }
  return {};
}

// docs/devices.md#7-bad-input-the-pod-waits-never-admitted-uncounted: devices that cannot be
// counted hold the pod, never admit it uncounted (before any rule).
Status DevicesCountable(const NormalizedPod& pod) {
  if (pod.device_problem().empty()) return {};
  return Status::Unschedulable(reasons::DevicesNotCountable(pod.Key(), pod.device_problem()));
}

}  // namespace

AdmissionVerdict DecideAdmissionPath(const ClusterState& state, const NormalizedPod& pod,
                                     const AdmissionPath& path) {
  if (path.quota == nullptr) return {};
  if (Status s = DevicesCountable(pod); !s.ok()) return {s, nullptr};
  const std::string& key = pod.Key();
  return DecidePath(state, path, Demand{pod.quota_request(), 1, key, {}});
}

Status CheckQuotaPath(const ClusterState& state, const NormalizedPod& pod,
                      const AdmissionPath& path) {
  return DecideAdmissionPath(state, pod, path).status;
}

Status CheckGroupRequest(const ClusterState& state, const NormalizedPod& pod,
                         const ResourceList& request, std::string_view group, int pods) {
  if (state.QuotaFor(pod.ns) == nullptr) return {};
  if (Status s = DevicesCountable(pod); !s.ok()) return s;
  const std::string& key = pod.Key();
  return DecidePath(state, MakeAdmissionPath(state, pod, &request),
                    Demand{request, pods, key, group})
      .status;
}

AdmissionVerdict DecideAdmission(const ClusterState& state, const NormalizedPod& pod) {
  if (state.QuotaFor(pod.ns) == nullptr) return {};
  return DecideAdmissionPath(state, pod, MakeAdmissionPath(state, pod));
}

Status CheckQuota(const ClusterState& state, const NormalizedPod& pod) {
  return DecideAdmission(state, pod).status;
}

}  // namespace capext
