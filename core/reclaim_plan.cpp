#include "core/reclaim_plan.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "core/group_placement.h"
#include "core/group_quota.h"
#include "core/quota_admission.h"
#include "core/reasons.h"
#include "core/victim_rule.h"

namespace capext {

const char* ReclaimPlanOutcomeName(ReclaimPlanOutcome outcome) {
  switch (outcome) {
    case ReclaimPlanOutcome::kFound:
      return "found";
    case ReclaimPlanOutcome::kNoVictims:
      return "no-victims";
    case ReclaimPlanOutcome::kNoPlacement:
      return "no-placement";
    case ReclaimPlanOutcome::kBudgetExhausted:
      return "budget-exhausted";
  }
  return "unknown";
}

std::vector<const NormalizedPod*> ReclaimPlan::Victims() const {
  std::vector<const NormalizedPod*> out;
  for (const PlannedUnit& unit : units)
    out.insert(out.end(), unit.victims.begin(), unit.victims.end());
  return out;
}

std::vector<const NormalizedPod*> PlanMembers(const ClusterState& state, const NormalizedPod& pod) {
  int32_t need = 0;
  const std::vector<const NormalizedPod*> unit = GroupNeedMembers(state, pod, &need);
  if (need == 0) return {&pod};
  if (static_cast<int32_t>(unit.size()) < need) return {};
  std::vector<const NormalizedPod*> out;
  // The gang's admitted members wait for a node too (held, no node): placed first, in start
  // order (docs/reclaim-plan.md#1-what-a-plan-is-for).
  for (const auto& m : state.GroupOf(pod)->members) {
    if (m.state == MemberState::kAdmitted) out.push_back(m.pod);
  }
  out.insert(out.end(), unit.begin(), unit.end());
  return out;
}

namespace {

// A unit removed from the what-if: its pods (pointers into the state) in removal order.
struct Taken {
  VictimUnitKind kind = VictimUnitKind::kSingle;
  GroupKey group;
  std::vector<const NormalizedPod*> pods;
  std::size_t order = 0;  // removal rank: eviction order
  int32_t pdb_violations = 0;
};

// The search of docs/reclaim-plan.md#2-the-search on a private copy of the state.
class PlanSearch {
 public:
  PlanSearch(const ClusterState& state, const NormalizedPod& pod,
             const MoreImportantFn& more_important, int64_t now_ms, const ReclaimPlanBudget& budget,
             ReclaimPlan* plan)
      : state_(state),
        pod_(pod),
        more_important_(more_important),
        now_ms_(now_ms),
        budget_(budget),
        plan_(*plan),
        context_(MakePreemptorContext(state, pod)),
        what_if_(state) {
    if (what_if_.FindPod(pod.store_key()) == nullptr) what_if_.UpsertPod(NormalizedPod(pod));
  }

  void Run() {
    plan_.members = PlanMembers(state_, pod_);
    if (plan_.members.empty()) {
      const GroupView* group = state_.GroupOf(pod_);
      plan_.outcome = ReclaimPlanOutcome::kNoPlacement;
      plan_.why = Status::Unschedulable(reasons::GangIncomplete(
          group->key.Display(), group->active() + group->pending, group->min_member));
      return;
    }
    for (const NormalizedPod* m : plan_.members) {
      keys_.push_back(m->store_key());
      // A gang's held members are in used already: its quota admits the others (the need). A
      // pod alone is admitted with its own request (its own hold is left out of used).
      if (plan_.members.size() == 1 || state_.FindHold(m->store_key()) == nullptr)
        request_.Add(m->quota_request());
    }
    std::vector<std::pair<int, VictimUnit>> units;
    if (!Gather(&units)) return Exhausted();
    RemoveEligible(units);
    if (exhausted_) return Exhausted();
    // With nothing removed the plan may still hold: found, without victims (the pods fit now).
    const bool none = taken_.empty();
    if (!QuotaHolds()) {
      plan_.outcome = none ? ReclaimPlanOutcome::kNoVictims : ReclaimPlanOutcome::kNoPlacement;
      plan_.why = Status::Unschedulable(
          std::string(none ? reasons::kPlanNoVictims : reasons::kQuotaFailsAfterVictims));
      return;
    }
    int placed = 0;
    if (!Place(&placed)) {
      if (exhausted_) return Exhausted();
      plan_.outcome = none ? ReclaimPlanOutcome::kNoVictims : ReclaimPlanOutcome::kNoPlacement;
      plan_.placed = placed;
      plan_.why = Status::Unschedulable(
          none ? std::string(reasons::kPlanNoVictims)
               : reasons::PlanNoPlacement(static_cast<int>(plan_.members.size()), placed));
      return;
    }
    std::vector<Taken> victims = PutBack();
    if (exhausted_) return Exhausted();
    plan_.outcome = ReclaimPlanOutcome::kFound;
    plan_.why = Status::Ok();
    plan_.nodes = nodes_;
    plan_.placed = static_cast<int32_t>(plan_.members.size());
    std::sort(victims.begin(), victims.end(),
              [](const Taken& a, const Taken& b) { return a.order < b.order; });
    for (const Taken& t : victims) {
      PlannedUnit unit;
      unit.kind = t.kind;
      unit.group = t.group;
      unit.pdb_violations = t.pdb_violations;
      for (const NormalizedPod* y : t.pods) {
        if (!HeldWithoutNode(state_, *y)) unit.victims.push_back(y);
      }
      plan_.pdb_violations += t.pdb_violations;
      plan_.units.push_back(std::move(unit));
    }
  }

 private:
  // One step of work; false once the budget or the stop callback ends the search.
  bool Step(int64_t n = 1) {
    plan_.steps += n;
    if (plan_.steps > budget_.max_steps || (budget_.should_stop && budget_.should_stop()))
      exhausted_ = true;
    return !exhausted_;
  }

  void Exhausted() {
    plan_.outcome = ReclaimPlanOutcome::kBudgetExhausted;
    plan_.why = Status::Unschedulable(reasons::PlanBudgetExhausted(plan_.steps));
    plan_.nodes.clear();
    plan_.units.clear();
  }

  const VictimRule::Scope& ScopeOf(const std::string& ns) {
    auto it = scopes_.find(ns);
    if (it == scopes_.end()) it = scopes_.emplace(ns, context_.rule->ScopeOf(ns)).first;
    return it->second;
  }

  // Whether nothing about the pod itself keeps it from being a victim (its namespace's scope, its
  // priority, a side not borrowing even now: removals only lower usage).
  bool MayEverGo(const NormalizedPod& y) {
    const VictimRule::Scope& scope = ScopeOf(y.ns);
    if (scope.lower_priority_only && y.priority >= pod_.priority) return false;
    return context_.rule->MayGiveVictims(scope);
  }

  // Step 1: every unit with a pod on a node, the pod's own gang aside, sorted first victim first.
  bool Gather(std::vector<std::pair<int, VictimUnit>>* units) {
    const GroupKey own = pod_.group.empty() ? GroupKey{} : GroupKeyOf(pod_);
    std::unordered_set<GroupKey, GroupKeyHash> cores;
    for (const auto& [name, node] : state_.nodes()) {
      if (!Step()) return false;
      for (const NormalizedPod* x : state_.UsageOf(name).pods) {
        if (x->store_key() == pod_.store_key()) continue;
        VictimUnit unit = VictimUnitOf(state_, *x);
        if (!own.empty() && unit.group == own) continue;
        if (unit.kind == VictimUnitKind::kCore && !cores.insert(unit.group).second) continue;
        const bool may = std::all_of(unit.pods.begin(), unit.pods.end(),
                                     [&](const NormalizedPod* y) { return MayEverGo(*y); });
        if (may) units->emplace_back(ScopeOf(x->ns).distance, std::move(unit));
      }
    }
    std::stable_sort(units->begin(), units->end(), [&](const auto& a, const auto& b) {
      if (a.first != b.first) return a.first < b.first;
      return VictimUnitBefore(a.second, b.second, more_important_);
    });
    return true;
  }

  // The what-if's usage of a tree node, less the pods of the unit being checked.
  const ResourceList& UsedOf(int node) {
    const ResourceList& base = what_if_.ledger().NodeUsed(node);
    for (const auto& [n, delta] : delta_) {
      if (n != node) continue;
      scratch_ = base;
      scratch_.Subtract(delta);
      return scratch_;
    }
    return base;
  }

  // The victim rule for each pod of the unit in turn, as if the ones before it were gone.
  bool Eligible(const VictimUnit& unit) {
    delta_.clear();
    const QuotaTree& tree = state_.ledger().tree();
    for (const NormalizedPod* y : unit.pods) {
      const VictimRule::Scope& scope = ScopeOf(y->ns);
      if (!scope.any || (scope.lower_priority_only && y->priority >= pod_.priority)) return false;
      if (scope.recheck && !context_.rule->SideBorrowing(
                               scope, [&](int n) -> const ResourceList& { return UsedOf(n); }))
        return false;
      if (state_.QuotaFor(y->ns) == nullptr) continue;
      for (int n = tree.LeafOf(y->ns); n >= 0; n = tree.parent(n)) {
        auto it =
            std::find_if(delta_.begin(), delta_.end(), [&](const auto& d) { return d.first == n; });
        if (it == delta_.end()) it = delta_.insert(delta_.end(), {n, ResourceList()});
        it->second.Add(y->quota_request());
      }
    }
    return true;
  }

  void Remove(const std::vector<const NormalizedPod*>& pods) {
    for (const NormalizedPod* y : pods)
      what_if_.DeletePod(y->store_key());
  }

  // Puts the pods back as the state has them: on their node or reservation, or held.
  void Restore(const std::vector<const NormalizedPod*>& pods) {
    for (auto it = pods.rbegin(); it != pods.rend(); ++it) {
      const NormalizedPod& y = **it;
      what_if_.UpsertPod(NormalizedPod(y));
      const std::string& key = y.store_key();
      if (const Reservation* r = state_.FindReservation(key); r != nullptr && !r->node.empty()) {
        what_if_.Reserve(key, r->node, r->reserved_ms, r->expires_ms);
      } else if (const QuotaHold* h = state_.FindHold(key); h != nullptr && !h->derived) {
        what_if_.Hold(key, h->held_ms, h->expires_ms);
      }
    }
  }

  // Step 2: every unit the rule lets go, in order. A core is the gang's every remaining member:
  // its surplus members removed before it stay their own units.
  void RemoveEligible(const std::vector<std::pair<int, VictimUnit>>& units) {
    for (const auto& [distance, candidate] : units) {
      if (!Step()) return;
      VictimUnit unit = candidate;
      std::erase_if(unit.pods,
                    [&](const NormalizedPod* y) { return removed_.count(y->store_key()) != 0; });
      if (unit.pods.empty() || !Eligible(unit)) continue;
      Remove(unit.pods);
      for (const NormalizedPod* y : unit.pods)
        removed_.insert(y->store_key());
      taken_.push_back({unit.kind, unit.group, unit.pods, taken_.size(), 0});
    }
  }

  // Step 3's quota half: the pod's quota admits the placement on the what-if.
  bool QuotaHolds() {
    const AdmissionPath path =
        MakeAdmissionPath(what_if_, pod_, plan_.members.size() > 1 ? &request_ : nullptr);
    return QuotaPasses(
        what_if_.semantics(), path,
        [&](int n) -> const ResourceList& { return what_if_.ledger().NodeUsed(n); },
        what_if_.totals());
  }

  // Step 3's placement half: every member placed together; `nodes_` keeps where.
  bool Place(int* placed) {
    if (!Step(static_cast<int64_t>(keys_.size()))) return false;
    auto nodes = PlaceTogether(&what_if_, keys_, now_ms_, placed);
    if (!nodes) return false;
    for (const auto& key : keys_)
      what_if_.ReleaseReservation(key);
    nodes_ = std::move(*nodes);
    return true;
  }

  // Whether a unit has a pod on a node the current placement uses.
  bool Touches(const Taken& unit) const {
    for (const NormalizedPod* y : unit.pods) {
      std::string node = y->node_name;
      if (node.empty()) {
        if (const Reservation* r = state_.FindReservation(y->store_key())) node = r->node;
      }
      if (!node.empty() && std::find(nodes_.begin(), nodes_.end(), node) != nodes_.end())
        return true;
    }
    return false;
  }

  // Puts `unit` back if the plan still holds with it; else removes it again. A unit off the
  // placement's nodes leaves first fit's choices as they are: only the quota is asked.
  bool TryPutBack(const Taken& unit) {
    if (!Step()) return false;
    Restore(unit.pods);
    int placed = 0;
    if (QuotaHolds() && (!Touches(unit) || Place(&placed))) return true;
    Remove(unit.pods);
    return false;
  }

  // Steps 4 and 5: the put-back pass, PDB-violating units first, most important first; then
  // again over the victims until none can be dropped.
  std::vector<Taken> PutBack() {
    std::vector<Taken> order(taken_.rbegin(), taken_.rend());
    std::vector<const NormalizedPod*> flat, violating, non_violating;
    for (const Taken& t : order) {
      for (const NormalizedPod* y : t.pods) {
        if (!HeldWithoutNode(state_, *y)) flat.push_back(y);
      }
    }
    SplitByPdbViolation(state_.pdbs(), flat, &violating, &non_violating);
    for (Taken& t : order) {
      for (const NormalizedPod* y : t.pods)
        t.pdb_violations += std::count(violating.begin(), violating.end(), y) > 0 ? 1 : 0;
    }
    std::stable_partition(order.begin(), order.end(),
                          [](const Taken& t) { return t.pdb_violations > 0; });
    // A surplus member is tried after its gang's core: alone beside a core that goes it would
    // leave the gang running below its minMember.
    for (std::size_t i = 0; i < order.size(); ++i) {
      if (order[i].kind != VictimUnitKind::kSurplus) continue;
      const auto first = order.begin() + static_cast<std::ptrdiff_t>(i);
      const auto core = std::find_if(first + 1, order.end(), [&](const Taken& t) {
        return t.kind == VictimUnitKind::kCore && t.group == first->group;
      });
      if (core == order.end()) continue;
      std::rotate(first, first + 1, core + 1);
      --i;
    }
    std::vector<Taken> victims;
    for (Taken& t : order) {
      if (t.kind == VictimUnitKind::kSurplus) {
        // Its core goes: the surplus goes with it, in one unit.
        const auto core = std::find_if(victims.begin(), victims.end(), [&](const Taken& v) {
          return v.kind == VictimUnitKind::kCore && v.group == t.group;
        });
        if (core != victims.end()) {
          core->pods.insert(core->pods.begin(), t.pods.begin(), t.pods.end());
          core->order = std::min(core->order, t.order);
          core->pdb_violations += t.pdb_violations;
          continue;
        }
      }
      const bool back = TryPutBack(t);
      if (exhausted_) return {};
      if (!back) victims.push_back(std::move(t));
    }
    for (bool dropped = true; dropped;) {
      dropped = false;
      for (std::size_t i = 0; i < victims.size(); ++i) {
        const bool back = TryPutBack(victims[i]);
        if (exhausted_) return {};
        if (!back) continue;
        victims.erase(victims.begin() + static_cast<std::ptrdiff_t>(i));
        dropped = true;
        break;
      }
    }
    return victims;
  }

  const ClusterState& state_;
  const NormalizedPod& pod_;
  const MoreImportantFn& more_important_;
  const int64_t now_ms_;
  const ReclaimPlanBudget& budget_;
  ReclaimPlan& plan_;
  PreemptorContext context_;
  ClusterState what_if_;
  std::vector<std::string> keys_;  // the members' store keys
  ResourceList request_;           // what the quota admits for the placement
  std::unordered_map<std::string, VictimRule::Scope> scopes_;
  std::vector<std::pair<int, ResourceList>> delta_;
  ResourceList scratch_;
  std::vector<Taken> taken_;                 // removed units, in removal order
  std::unordered_set<std::string> removed_;  // their pods' store keys
  std::vector<std::string> nodes_;           // the current placement
  bool exhausted_ = false;
};

}  // namespace

ReclaimPlan SearchReclaimPlan(const ClusterState& state, const NormalizedPod& pod,
                              const MoreImportantFn& more_important, int64_t now_ms,
                              const ReclaimPlanBudget& budget) {
  ReclaimPlan plan;
  PlanSearch search(state, pod, more_important, now_ms, budget, &plan);
  search.Run();
  return plan;
}

}  // namespace capext
