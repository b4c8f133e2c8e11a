#include "core/admission_queue.h"

#include <algorithm>
#include <limits>
#include <memory>
#include <optional>
#include <tuple>

#include <fmt/format.h>

#include "core/fair_admission_order.h"
#include "core/fair_share.h"
#include "core/group_placement.h"
#include "core/group_quota.h"
#include "core/node_fit.h"
#include "core/quota_admission.h"
#include "core/reasons.h"

namespace capext {
namespace {

// The units of one round, before ordering (docs/workloads.md#units).
void CollectUnits(const ClusterState& state, std::vector<AdmissionUnit>* units,
                  std::map<std::string, AdmissionWait>* waiting) {
  std::vector<GroupKey> groups_seen;
  for (const auto& [key, pod] : state.pods()) {
    if (!pod.quota_gated || pod.IsBound() || pod.IsTerminal()) continue;
    if (pod.other_gates) {
      (*waiting)[std::string(key)] = {
          AdmissionWaitReason::kOtherGates,
          fmt::format("pod {} waits for its other scheduling gates", pod.Key())};
      continue;
    }
    // Held: admitted, its gate's removal in flight
    // (docs/workloads.md#2-holds-quota-without-a-node); not a unit again.
    if (state.FindHold(key) != nullptr) continue;
    const GroupView* group = state.GroupOf(pod);
    if (group != nullptr && group->IsGang() && group->need() > 0) {
      groups_seen.push_back(group->key);  // a group unit, built below
      continue;
    }
    AdmissionUnit unit;
    unit.kind = group != nullptr && group->IsGang() ? AdmissionUnitKind::kSurplus
                                                    : AdmissionUnitKind::kSingle;
    if (group != nullptr) unit.group = group->key;
    unit.pods = {std::string(key)};
    unit.priority = pod.priority;
    unit.creation_ms = pod.creation_ms;
    units->push_back(std::move(unit));
  }
  std::sort(groups_seen.begin(), groups_seen.end());
  groups_seen.erase(std::unique(groups_seen.begin(), groups_seen.end()), groups_seen.end());
  for (const GroupKey& key : groups_seen) {
    const GroupView& group = *state.FindGroup(key);
    std::vector<std::string> gated;  // oldest first: members are in creation order past started
    for (const auto& m : group.members) {
      if (m.state == MemberState::kGated && m.pod->quota_gated && !m.pod->other_gates)
        gated.push_back(m.pod->store_key());
    }
    if (!group.orphaned.empty()) {
      // Lost its core: the admitted members left of it are released first (FindTimeouts), then
      // the gang is admitted afresh, whole (docs/workloads.md#2-holds-quota-without-a-node).
      const std::string why =
          reasons::GangLostCore(key.Display(), static_cast<int>(group.orphaned.size()));
      for (const auto& k : gated)
        (*waiting)[k] = {AdmissionWaitReason::kGangIncomplete, why};
      continue;
    }
    const int32_t need = group.need();
    if (static_cast<int32_t>(gated.size()) < need) {
      const std::string why = reasons::GangIncomplete(
          key.Display(), static_cast<int>(group.members.size()), group.min_member);
      for (const auto& k : gated)
        (*waiting)[k] = {AdmissionWaitReason::kGangIncomplete, why};
      continue;
    }
    AdmissionUnit unit;
    unit.kind = AdmissionUnitKind::kGroup;
    unit.group = key;
    unit.pods.assign(gated.begin(), gated.begin() + need);
    unit.priority = group.Priority();
    unit.creation_ms = group.EarliestCreationMs();
    units->push_back(std::move(unit));
  }
  std::sort(units->begin(), units->end(), [](const AdmissionUnit& a, const AdmissionUnit& b) {
    return std::make_tuple(-static_cast<int64_t>(a.priority), a.creation_ms, a.pods.front()) <
           std::make_tuple(-static_cast<int64_t>(b.priority), b.creation_ms, b.pods.front());
  });
}

// The pod as admitted at `now_ms`: ungated with the admitted-at annotation (a derived hold).
void AdmitInWhatIf(ClusterState* what_if, const std::string& key, int64_t now_ms) {
  NormalizedPod admitted = *what_if->FindPod(key);
  admitted.quota_gated = false;
  admitted.admitted_ms = now_ms;
  what_if->UpsertPod(std::move(admitted));
}

AdmissionWaitReason ReasonOf(const Status& s) {
  return s.code() == StatusCode::kUnschedulableAndUnresolvable
             ? AdmissionWaitReason::kQuotaNever
             : AdmissionWaitReason::kQuotaExceeded;
}

// When the group was first admitted: the earliest admitted-at of its members, else the earliest
// hold; 0 when never.
int64_t FirstAdmission(const GroupView& group) {
  int64_t first = 0;
  for (const auto& m : group.members) {
    int64_t t = m.pod->admitted_ms;
    if (t == 0 && m.state == MemberState::kAdmitted) t = m.started_ms;
    if (t > 0 && (first == 0 || t < first)) first = t;
  }
  return first;
}

void FindTimeouts(const ClusterState& state, const AdmissionOptions& options, int64_t now_ms,
                  std::vector<GroupTimeout>* out) {
  state.ForEachGroup([&](const GroupView& group) {
    const int64_t first = FirstAdmission(group);
    const int64_t timeout = group.schedule_timeout_ms > 0 ? group.schedule_timeout_ms
                                                          : options.default_group_timeout_ms;
    const bool timed_out = group.starting() && first != 0 && now_ms - first >= timeout;
    if (!timed_out && !group.orphaned.empty()) {
      // Lost its core (docs/workloads.md#2-holds-quota-without-a-node): its members
      // admitted through the gate then time out at once, evicted when a controller re-creates
      // them gated, else their admission revoked; the rest waits for its own timeout.
      GroupTimeout t;
      t.group = group.key;
      t.admitted_ms = first;
      t.active = group.active();
      t.min_member = group.min_member;
      for (const std::string& key : group.orphaned) {
        const NormalizedPod* pod = state.FindPod(key);
        if (pod == nullptr) continue;
        if (pod->has_controller) {
          t.evict.push_back(key);
          t.release_holds.push_back(key);
        } else {
          t.revoke.push_back(key);
        }
      }
      out->push_back(std::move(t));
      return;
    }
    if (!timed_out) return;
    GroupTimeout t;
    t.group = group.key;
    t.admitted_ms = first;
    t.timeout_ms = timeout;
    for (const auto& m : group.members) {
      if (m.state != MemberState::kAdmitted && m.state != MemberState::kBound &&
          m.state != MemberState::kReserved)
        continue;
      const std::string& key = m.pod->store_key();
      (m.pod->has_controller ? t.evict : t.reported).push_back(key);
      if (m.state == MemberState::kAdmitted) t.release_holds.push_back(key);
    }
    out->push_back(std::move(t));
  });
}

// What became of one unit tried on the what-if.
enum class Outcome { kAdmitted, kWaits, kWaitsForSharedCapacity };

// Whether the quota rule that failed for `pod` with `request` is the cluster-wide one (the sum
// of all mins): every level's max passes.
bool BlockedBySharedCapacity(const ClusterState& state, const NormalizedPod& pod,
                             const ResourceList* request) {
  const AdmissionPath path = MakeAdmissionPath(state, pod, request);
  for (const auto& level : path.levels) {
    if (!ExceedsMax(state.semantics(), *level.quota,
                    path.UsedWithoutOwnHold(state.ledger().NodeUsed(level.node)), path.InEq(level))
             .empty())
      return false;
  }
  return path.quota != nullptr;
}

std::vector<const NormalizedPod*> MembersOf(const ClusterState& state, const AdmissionUnit& unit) {
  std::vector<const NormalizedPod*> members;
  for (const auto& key : unit.pods)
    members.push_back(state.FindPod(key));
  return members;
}

// A unit's summed quota request (a shared device claim charged once: core/group_quota.h).
ResourceList RequestOf(const ClusterState& state, const AdmissionUnit& unit) {
  return GroupRequestOf(state, MembersOf(state, unit));
}

Outcome TryUnit(ClusterState* what_if, AdmissionUnit* unit, const AdmissionOptions& options,
                int64_t now_ms, AdmissionRound* round) {
  const NormalizedPod& first = *what_if->FindPod(unit->pods.front());
  if (unit->kind != AdmissionUnitKind::kGroup) {
    Status s = CheckQuota(*what_if, first);
    if (!s.ok()) {
      const bool shared = s.code() == StatusCode::kUnschedulable &&
                          BlockedBySharedCapacity(*what_if, first, nullptr);
      round->waiting[unit->pods.front()] = {ReasonOf(s), s.message(), shared};
      return shared ? Outcome::kWaitsForSharedCapacity : Outcome::kWaits;
    }
    AdmitInWhatIf(what_if, unit->pods.front(), now_ms);
    round->admit.push_back(std::move(*unit));
    return Outcome::kAdmitted;
  }
  const std::string display = unit->group.Display();
  const std::vector<const NormalizedPod*> members = MembersOf(*what_if, *unit);
  const ResourceList request = GroupRequestOf(*what_if, members);
  const int n = static_cast<int>(unit->pods.size());
  Status s = what_if->QuotaFor(first.ns) == nullptr ? Status() : DevicesCountable(members);
  if (!s.ok()) {
    for (const auto& key : unit->pods)
      round->waiting[key] = {ReasonOf(s), s.message()};
    return Outcome::kWaits;
  }
  s = CheckGroupRequest(*what_if, first, request, display, n);
  if (!s.ok()) {
    const bool shared = s.code() == StatusCode::kUnschedulable &&
                        BlockedBySharedCapacity(*what_if, first, &request);
    for (const auto& key : unit->pods)
      round->waiting[key] = {ReasonOf(s), s.message(), shared};
    return shared ? Outcome::kWaitsForSharedCapacity : Outcome::kWaits;
  }
  if (options.require_placement) {
    int placed = 0;
    auto nodes = PlaceTogether(what_if, unit->pods, now_ms, &placed);
    if (!nodes) {
      const std::string why = reasons::GangNoPlacement(display, n, placed);
      for (const auto& key : unit->pods)
        round->waiting[key] = {AdmissionWaitReason::kNoPlacement, why};
      return Outcome::kWaits;
    }
    unit->nodes = std::move(*nodes);  // reserved in the what-if: quota and room both taken
  } else {
    for (const auto& key : unit->pods)
      AdmitInWhatIf(what_if, key, now_ms);
  }
  round->admit.push_back(std::move(*unit));
  return Outcome::kAdmitted;
}

// Fair sharing's order (docs/fair-sharing.md#5-admission-order-gate-mode).
void PlanFairly(ClusterState* what_if, std::vector<AdmissionUnit>* units,
                const AdmissionOptions& options, int64_t now_ms, AdmissionRound* round) {
  const QuotaTree& tree = what_if->ledger().tree();
  const FairShareModel model(*what_if);
  std::vector<FairCandidate> borrowing;
  // Units within their leaf's min first, in the usual order: never held back by fairness.
  for (std::size_t i = 0; i < units->size(); ++i) {
    AdmissionUnit& unit = (*units)[i];
    const NormalizedPod& first = *what_if->FindPod(unit.pods.front());
    const int leaf = tree.LeafOf(first.ns);
    const ResourceList request = RequestOf(*what_if, unit);
    if (leaf < 0 || ExceedsMin(what_if->semantics(), tree.quota(leaf),
                               what_if->ledger().NodeUsed(leaf), request)
                        .empty()) {
      TryUnit(what_if, &unit, options, now_ms, round);
      continue;
    }
    borrowing.push_back(
        FairCandidate{i, leaf, request, unit.priority, unit.creation_ms, unit.pods.front()});
  }
  FairAdmissionOrder order(tree, model, std::move(borrowing));
  std::optional<std::size_t> barrier;  // the candidate blocked by the shared capacity
  while (auto pick = order.Next(*what_if)) {
    AdmissionUnit& unit = (*units)[order.candidate(pick->candidate).unit];
    if (TryUnit(what_if, &unit, options, now_ms, round) == Outcome::kWaitsForSharedCapacity) {
      barrier = pick->candidate;
      break;
    }
  }
  if (!barrier) return;
  // Behind the barrier every borrowing unit waits; each is compared with the barrier where the
  // two quotas meet in the tree (the what-if no longer changes).
  const FairCandidate& front = order.candidate(*barrier);
  for (std::size_t i : order.Drain()) {
    const FairCandidate& cand = order.candidate(i);
    const int side = order.SideAt(cand.leaf, front.leaf);
    const int front_side = order.SideAt(front.leaf, cand.leaf);
    const ShareKey mine = model.ShareWith(*what_if, side, cand.request);
    const ShareKey theirs = model.ShareWith(*what_if, front_side, front.request);
    const std::string why = reasons::FairShareWaiting(tree.quota(side).Key(), mine.ToString(),
                                                      tree.quota(front_side).Key(),
                                                      theirs.ToString(), !(theirs < mine));
    for (const auto& key : (*units)[cand.unit].pods)
      round->waiting[key] = {AdmissionWaitReason::kFairShare, why};
  }
}

}  // namespace

AdmissionRound PlanAdmissions(const ClusterState& state, const AdmissionOptions& options,
                              int64_t now_ms) {
  AdmissionRound round;
  FindTimeouts(state, options, now_ms, &round.timed_out);
  std::vector<AdmissionUnit> units;
  CollectUnits(state, &units, &round.waiting);
  if (units.empty()) return round;
  // Each unit that goes is applied to the what-if before the next is considered. Nothing in a
  // round searches over every node (a gang's placement goes node by node), so the what-if goes
  // without the dense mirror.
  ClusterState what_if(state, ClusterState::WithoutDenseNodes{});
  if (options.fair_sharing) {
    PlanFairly(&what_if, &units, options, now_ms, &round);
    return round;
  }
  for (auto& unit : units)
    TryUnit(&what_if, &unit, options, now_ms, &round);
  return round;
}

}  // namespace capext
