#include "core/reclaim_plan.h"

#include <algorithm>
#include <optional>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "core/plan_placement.h"
#include "core/plan_what_if.h"
#include "core/quota_admission.h"
#include "core/reasons.h"
#include "core/victim_rule.h"

namespace capext {

namespace {

// A unit removed from the what-if: its pods (pointers into the state) in removal order.
struct Taken {
  VictimUnitKind kind = VictimUnitKind::kSingle;
  const GroupKey* group = nullptr;  // its candidate's (step 1's unit); null for a single pod
  std::vector<const NormalizedPod*> pods;
  std::vector<int> nodes;  // each pod's node on the what-if (-1: held, no node)
  std::size_t order = 0;   // removal rank: eviction order
  int32_t pdb_violations = 0;
};

// The search of docs/reclaim-plan.md#2-the-search on a what-if of deltas over the state
// (docs/reclaim-plan.md#the-what-if-and-the-placement).
class PlanSearch {
 public:
  PlanSearch(const ClusterState& state, const NormalizedPod& pod, const VictimOrder& victim_order,
             const ReclaimPlanBudget& budget, const FairReclaimOptions& fair, ReclaimPlan* plan)
      : state_(state),
        pod_(pod),
        victim_order_(victim_order),
        budget_(budget),
        fair_options_(fair),
        plan_(*plan),
        context_(MakePreemptorContext(state, pod)),
        what_if_(state) {}

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
    path_ = MakeAdmissionPath(state_, pod_, plan_.members.size() > 1 ? &request_ : nullptr);
    if (fair_options_.enabled) fair_.emplace(state_, pod_, request_, fair_options_);
    placement_.emplace(&what_if_, plan_.members);
    std::vector<Candidate> units;
    if (!Gather(&units)) return Exhausted();
    RemoveEligible(units);
    if (exhausted_) return Exhausted();
    // With nothing removed the plan may still hold: found, without victims (the pods fit now).
    const bool none = taken_.empty();
    if (!QuotaHolds()) {
      plan_.outcome = none ? ReclaimPlanOutcome::kNoVictims : ReclaimPlanOutcome::kNoPlacement;
      std::string why(none ? reasons::kPlanNoVictims : reasons::kQuotaFailsAfterVictims);
      // A borrower that fairness lets take nothing says why, with the numbers (condition 2).
      if (const std::string fair = none && fair_ ? fair_->NotBelowFairShare() : std::string();
          !fair.empty())
        why += "; reclaim by fair share: " + fair;
      plan_.why = Status::Unschedulable(why);
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
    std::vector<Taken*> victims = PutBack();
    if (exhausted_) return Exhausted();
    if (Status fair = CheckFairGivers(victims); !fair.ok()) {
      plan_.outcome = ReclaimPlanOutcome::kNoVictims;
      plan_.why = fair;
      return;
    }
    plan_.outcome = ReclaimPlanOutcome::kFound;
    plan_.why = Status::Ok();
    for (const int node : placement_->nodes())
      plan_.nodes.push_back(what_if_.record(node).name);
    plan_.placed = static_cast<int32_t>(plan_.members.size());
    std::sort(victims.begin(), victims.end(),
              [](const Taken* a, const Taken* b) { return a->order < b->order; });
    for (const Taken* victim : victims) {
      const Taken& t = *victim;
      PlannedUnit unit;
      unit.kind = t.kind;
      if (t.group != nullptr) unit.group = *t.group;
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

  // What the search knows of a namespace: its scope, whether its side gives victims now, and
  // (step 2) how many of its units are still to be tried and whether its side stopped
  // borrowing (then none of them can go: removals only lower usage).
  struct NamespaceInfo {
    VictimRule::Scope scope;
    FairVictimEligibility::Scope fair;  // any: its pods go by fairness (the rule refused them)
    bool may = false;                   // MayGiveVictims on the state
    bool done = false;                  // its side stopped borrowing during step 2
    int64_t left = 0;                   // its units not tried yet
  };

  NamespaceInfo& InfoOf(const std::string& ns) {
    auto it = namespaces_.find(ns);
    if (it == namespaces_.end()) {
      NamespaceInfo info;
      info.scope = context_.rule->ScopeOf(ns);
      if (!info.scope.any && fair_) {
        info.fair = fair_->ScopeOf(ns);
        if (info.fair.any) {
          // Condition 3 of reclaim between borrowers is the rule's condition 2: the same re-check.
          info.scope.any = info.scope.recheck = true;
          info.scope.leaf = info.fair.leaf;
          info.scope.top = info.fair.giver;
          info.scope.distance = info.fair.distance;
        }
      }
      info.may = context_.rule->MayGiveVictims(info.scope);
      it = namespaces_.emplace(ns, info).first;
    }
    return it->second;
  }

  // Whether nothing about the pod itself keeps it from being a victim (its namespace's scope, its
  // priority, a side not borrowing even now: removals only lower usage).
  bool MayEverGo(const NormalizedPod& y) { return MayEverGo(y, InfoOf(y.ns)); }
  bool MayEverGo(const NormalizedPod& y, const NamespaceInfo& info) const {
    if (info.scope.lower_priority_only && y.priority >= pod_.priority) return false;
    return info.may;
  }

  // A unit of step 1 with its namespace (a gang's pods share one).
  // A single pod's unit keeps its pod as representative only (`pods` is filled when it is
  // tried: most units are never tried).
  struct Candidate {
    int distance = 0;
    int node = -1;  // a single pod's node
    NamespaceInfo* ns = nullptr;
    VictimUnit unit;
  };

  // Step 1: every unit with a pod on a node, the pod's own gang aside, that the rule may let go.
  bool Gather(std::vector<Candidate>* units) {
    const GroupKey own = pod_.group.empty() ? GroupKey{} : GroupKeyOf(pod_);
    std::unordered_set<GroupKey, GroupKeyHash> cores;
    std::size_t pods = 0;
    for (int i = 0; i < what_if_.node_count(); ++i)
      pods += what_if_.record(i).usage.pods.size();
    units->reserve(pods);
    for (int i = 0; i < what_if_.node_count(); ++i) {
      if (!Step()) return false;
      for (const NormalizedPod* x : what_if_.record(i).usage.pods) {
        if (x->store_key() == pod_.store_key()) continue;
        if (x->group.empty()) {
          // VictimUnitOf's single pod, without its one-pod list; MayEverGo with its namespace
          // looked up once.
          NamespaceInfo& info = InfoOf(x->ns);
          if (!MayEverGo(*x, info)) continue;
          ++info.left;
          Candidate& c = units->emplace_back();
          c.distance = info.scope.distance;
          c.node = i;
          c.ns = &info;
          c.unit.representative = x;
          c.unit.priority = x->priority;
          continue;
        }
        VictimUnit unit = VictimUnitOf(state_, *x);
        if (!own.empty() && unit.group == own) continue;
        if (unit.kind == VictimUnitKind::kCore && !cores.insert(unit.group).second) continue;
        const bool may = std::all_of(unit.pods.begin(), unit.pods.end(),
                                     [&](const NormalizedPod* y) { return MayEverGo(*y); });
        if (!may) continue;
        NamespaceInfo& info = InfoOf(x->ns);
        ++info.left;
        units->push_back({info.scope.distance, -1, &info, std::move(unit)});
      }
    }
    return true;
  }

  // The what-if's usage of a tree node, less the pods of the unit being checked.
  const ResourceList& UsedOf(int node) {
    const ResourceList& base = what_if_.UsedOf(node);
    for (const auto& [n, delta] : delta_) {
      if (n != node) continue;
      scratch_ = base;
      scratch_.Subtract(delta);
      return scratch_;
    }
    return base;
  }

  // The victim rule for each pod of the unit in turn, as if the ones before it were gone.
  // `side_done`: the first pod's side is not borrowing on the what-if as it is. `ns`: the unit's
  // namespace (its candidate's), for a one-pod unit without looking it up again.
  bool Eligible(const VictimUnit& unit, const NamespaceInfo& ns, bool* side_done) {
    delta_.clear();
    *side_done = false;
    const QuotaTree& tree = state_.ledger().tree();
    for (const NormalizedPod* y : unit.pods) {
      const NamespaceInfo& info = unit.pods.size() == 1 ? ns : InfoOf(y->ns);
      const VictimRule::Scope& scope = info.scope;
      if (!scope.any || (scope.lower_priority_only && y->priority >= pod_.priority)) return false;
      if (scope.recheck && !context_.rule->SideBorrowing(
                               scope, [&](int n) -> const ResourceList& { return UsedOf(n); })) {
        *side_done = y == unit.pods.front();
        return false;
      }
      if (info.fair.any && !fair_->MayTake(info.fair, *y, UsedOf(info.fair.giver))) return false;
      // The last pod's own usage is never asked (a single pod's unit: no delta at all).
      if (y == unit.pods.back() || state_.QuotaFor(y->ns) == nullptr) continue;
      for (int n = tree.LeafOf(y->ns); n >= 0; n = tree.parent(n)) {
        auto it =
            std::find_if(delta_.begin(), delta_.end(), [&](const auto& d) { return d.first == n; });
        if (it == delta_.end()) it = delta_.insert(delta_.end(), {n, ResourceList()});
        it->second.Add(y->quota_request());
      }
    }
    return true;
  }

  // Step 2: every unit the rule lets go, in the victim order (quota-tree distance, then
  // VictimUnitBefore), taken from a heap: the order is only worked out as far as units may still
  // go. A unit of a namespace whose side stopped borrowing is passed over (it would fail the
  // re-check), and the step ends when no namespace with units left may give one. A core is the
  // gang's every remaining member: its surplus members removed before it stay their own units.
  void RemoveEligible(std::vector<Candidate>& units) {
    const auto after = [&](const Candidate* a, const Candidate* b) {
      if (a->distance != b->distance) return a->distance > b->distance;
      return VictimUnitBefore(b->unit, a->unit, victim_order_);
    };
    std::vector<Candidate*> heap;
    heap.reserve(units.size());
    int64_t live = 0;  // namespaces with units left whose side may still give one
    for (Candidate& c : units)
      heap.push_back(&c);
    for (const auto& [ns, info] : namespaces_)
      live += info.left > 0 ? 1 : 0;
    std::make_heap(heap.begin(), heap.end(), after);
    VictimUnit core, single;
    while (!heap.empty() && live > 0) {
      std::pop_heap(heap.begin(), heap.end(), after);
      Candidate& candidate = *heap.back();
      heap.pop_back();
      NamespaceInfo& info = *candidate.ns;
      --info.left;
      if (info.done) continue;
      if (!Step()) return;
      const VictimUnit* unit = &candidate.unit;
      // Only a gang's units share pods (a core holds its surplus members): a single pod is in
      // no other unit.
      if (unit->pods.empty()) {
        single.pods.assign(1, unit->representative);
        unit = &single;
      } else if (unit->kind != VictimUnitKind::kSingle) {
        core = *unit;
        std::erase_if(core.pods, [&](const NormalizedPod* y) { return what_if_.IsRemoved(y); });
        unit = &core;
      }
      bool side_done = false;
      if (!unit->pods.empty() && Eligible(*unit, info, &side_done)) {
        std::vector<int> nodes;
        for (const NormalizedPod* y : unit->pods)
          nodes.push_back(candidate.node >= 0 ? candidate.node : what_if_.NodeOf(*y));
        what_if_.Remove(unit->pods, nodes);
        const GroupKey* group =
            candidate.unit.group.empty() ? nullptr : &candidate.unit.group;  // the core's too
        taken_.push_back({unit->kind, group, unit->pods, std::move(nodes), taken_.size(), 0});
      }
      if (side_done) info.done = true;
      if (info.done || info.left == 0) live -= 1;
    }
  }

  // Step 3's quota half: the pod's quota admits the placement on the what-if.
  bool QuotaHolds() {
    return QuotaPasses(
        state_.semantics(), path_, [&](int n) -> const ResourceList& { return what_if_.UsedOf(n); },
        what_if_.totals());
  }

  // Step 3's placement half: every member placed together; one step per member.
  bool Place(int* placed) {
    if (!Step(static_cast<int64_t>(placement_->size()))) return false;
    return placement_->PlaceFrom(0, placed);
  }

  // Puts `unit` back if the plan still holds with it; else removes it again. Only the members
  // the unit's room can move are looked at (PlanPlacement::Refit), one step each.
  bool TryPutBack(const Taken& unit) {
    if (!Step()) return false;
    what_if_.Restore(unit.pods, unit.nodes);
    if (QuotaHolds()) {
      int placed = 0;
      int64_t checked = 0;
      const bool holds = placement_->Refit(unit.nodes, &placed, &checked);
      if (!Step(checked)) return false;
      if (holds) return true;
      placement_->Undo();
    }
    what_if_.Remove(unit.pods, unit.nodes);
    return false;
  }

  // Steps 4 and 5: the put-back pass, PDB-violating units first, most important first; then
  // again over the victims until none can be dropped.
  std::vector<Taken*> PutBack() {
    // The units stay in taken_ (Step 1's candidates hold their group keys): the pass orders and
    // keeps pointers to them.
    std::vector<Taken*> order;
    order.reserve(taken_.size());
    for (auto it = taken_.rbegin(); it != taken_.rend(); ++it)
      order.push_back(&*it);
    std::vector<const NormalizedPod*> flat, violating, non_violating;
    for (const Taken* t : order) {
      for (const NormalizedPod* y : t->pods) {
        if (!HeldWithoutNode(state_, *y)) flat.push_back(y);
      }
    }
    SplitByPdbViolation(state_.pdbs(), flat, &violating, &non_violating);
    for (Taken* t : order) {
      for (const NormalizedPod* y : t->pods)
        t->pdb_violations += std::count(violating.begin(), violating.end(), y) > 0 ? 1 : 0;
    }
    std::stable_partition(order.begin(), order.end(),
                          [](const Taken* t) { return t->pdb_violations > 0; });
    const auto same_group = [](const Taken* a, const Taken* b) {
      return a->group != nullptr && b->group != nullptr && *a->group == *b->group;
    };
    // A surplus member is tried after its gang's core: alone beside a core that goes it would
    // leave the gang running below its minMember.
    for (std::size_t i = 0; i < order.size(); ++i) {
      if (order[i]->kind != VictimUnitKind::kSurplus) continue;
      const auto first = order.begin() + static_cast<std::ptrdiff_t>(i);
      const auto core = std::find_if(first + 1, order.end(), [&](const Taken* t) {
        return t->kind == VictimUnitKind::kCore && same_group(t, *first);
      });
      if (core == order.end()) continue;
      std::rotate(first, first + 1, core + 1);
      --i;
    }
    std::vector<Taken*> victims;
    for (Taken* t : order) {
      if (t->kind == VictimUnitKind::kSurplus) {
        // Its core goes: the surplus goes with it, in one unit.
        const auto core = std::find_if(victims.begin(), victims.end(), [&](const Taken* v) {
          return v->kind == VictimUnitKind::kCore && same_group(v, t);
        });
        if (core != victims.end()) {
          Taken& c = **core;
          c.pods.insert(c.pods.begin(), t->pods.begin(), t->pods.end());
          c.nodes.insert(c.nodes.begin(), t->nodes.begin(), t->nodes.end());
          c.order = std::min(c.order, t->order);
          c.pdb_violations += t->pdb_violations;
          continue;
        }
      }
      const bool back = TryPutBack(*t);
      if (exhausted_) return {};
      if (!back) victims.push_back(t);
    }
    for (bool dropped = true; dropped;) {
      dropped = false;
      for (std::size_t i = 0; i < victims.size(); ++i) {
        const bool back = TryPutBack(*victims[i]);
        if (exhausted_) return {};
        if (!back) continue;
        victims.erase(victims.begin() + static_cast<std::ptrdiff_t>(i));
        dropped = true;
        break;
      }
    }
    return victims;
  }

  // Reclaim between borrowers: the final plan's victims from each giver by fairness pass
  // FairReclaimAllowed together (docs/fair-sharing.md#6-reclaim-between-borrowers).
  Status CheckFairGivers(const std::vector<Taken*>& victims) {
    if (!fair_) return Status::Ok();
    std::vector<std::pair<const FairVictimEligibility::Scope*, std::vector<const NormalizedPod*>>>
        givers;
    for (const Taken* t : victims) {
      for (const NormalizedPod* y : t->pods) {
        const FairVictimEligibility::Scope& scope = InfoOf(y->ns).fair;
        if (!scope.any || HeldWithoutNode(state_, *y)) continue;
        auto it = std::find_if(givers.begin(), givers.end(),
                               [&](const auto& g) { return g.first->giver == scope.giver; });
        if (it == givers.end()) it = givers.insert(givers.end(), {&scope, {}});
        it->second.push_back(y);
      }
    }
    std::string moves;
    for (const auto& [scope, pods] : givers) {
      const FairReclaimVerdict verdict = fair_->Check(*scope, pods);
      if (!verdict.allowed) return Status::Unschedulable("reclaim by fair share: " + verdict.why);
      moves += (moves.empty() ? "" : "; ") + verdict.move;
    }
    if (!moves.empty()) plan_.fair_moves = "reclaim by fair share: " + moves;
    return Status::Ok();
  }

  const ClusterState& state_;
  const NormalizedPod& pod_;
  const VictimOrder& victim_order_;
  const ReclaimPlanBudget& budget_;
  FairReclaimOptions fair_options_;
  std::optional<FairVictimEligibility> fair_;
  ReclaimPlan& plan_;
  PreemptorContext context_;
  PlanWhatIf what_if_;
  AdmissionPath path_;  // the pod's admission, with the placement's request
  std::optional<PlanPlacement> placement_;
  std::vector<std::string> keys_;  // the members' store keys
  ResourceList request_;           // what the quota admits for the placement
  std::unordered_map<std::string, NamespaceInfo> namespaces_;
  std::vector<std::pair<int, ResourceList>> delta_;
  ResourceList scratch_;
  std::vector<Taken> taken_;  // removed units, in removal order
  bool exhausted_ = false;
};

}  // namespace

ReclaimPlan SearchReclaimPlan(const ClusterState& state, const NormalizedPod& pod,
                              const VictimOrder& victim_order, const ReclaimPlanBudget& budget,
                              const FairReclaimOptions& fair) {
  ReclaimPlan plan;
  PlanSearch search(state, pod, victim_order, budget, fair, &plan);
  search.Run();
  return plan;
}

}  // namespace capext
