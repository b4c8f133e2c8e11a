// Gate mode's reclaim for gated gangs
// (docs/reclaim-plan.md#gate-mode-the-admission-loop-plans-for-a-gated-gang): after a round of
// the admission queue, each gang whose unit waits on the quota or the nodes gets one plan across
// nodes (core/reclaim_plan.h's SearchReclaimPlan, the search every caller shares). A plan with
// victims is held first (each member nominated on its planned node for nominationTTL), then its
// victims are evicted in order; the gates stay on until a later round of the queue admits the
// unit, once the room is free. A gang with a member nominated has a plan in flight and is not
// planned again; a hold that ends with no member admitted expired: logged, counted, its victims
// wasted.
#include <chrono>

#include <fmt/format.h>

#include "core/reclaim_plan.h"
#include "core/victim_unit.h"
#include "extender/admission/admission_loop.h"
#include "extender/log.h"
#include "extender/reclaim/victim_event.h"

namespace capext {
namespace {

bool WaitsForRoom(AdmissionWaitReason r) {
  return r == AdmissionWaitReason::kQuotaExceeded || r == AdmissionWaitReason::kNoPlacement;
}

// One search's result, copied out of the cache's lock (the plan's pointers live under it).
struct CopiedPlan {
  ReclaimPlanOutcome outcome = ReclaimPlanOutcome::kNoVictims;
  std::string reason;
  std::vector<std::pair<std::string, std::string>> placement;  // member store key, node
  std::string where;                                           // "ns/w-0 -> n1, ..."
  std::vector<Pod> victims;                                    // eviction order
  std::string units;                                           // "single ns/b4, ..."
  PlanView view;
  int cores = 0;
  int64_t steps = 0;
};

std::string InFlightMessage(const std::string& group, const std::string& summary) {
  return fmt::format("{}: reclaim in flight ({}); the gate is lifted once the room is free", group,
                     summary);
}

}  // namespace

void AdmissionLoop::FollowPlans(AdmissionRound* round) {
  in_flight_pods_.clear();
  std::vector<std::string> expired, done;
  cache_->Read([&](const ClusterState& state) {
    for (const auto& [id, plan] : gang_plans_) {
      bool held = false, admitted = false;
      for (const auto& key : plan.members) {
        const NormalizedPod* pod = state.FindPod(key);
        held = held || state.FindOurNomination(key) != nullptr;
        // Admitted (gate lifted or its removal in flight), bound, or gone: the plan served.
        admitted = admitted || pod == nullptr || !pod->quota_gated ||
                   state.FindHold(key) != nullptr || pod->IsBound();
      }
      if (held) continue;
      (admitted ? done : expired).push_back(id);
    }
    return 0;
  });
  for (const auto& id : done)
    gang_plans_.erase(id);
  for (const auto& id : expired) {
    const GangPlan& plan = gang_plans_.at(id);
    metrics_->Count("capacity_extender_reclaims_expired_total");
    metrics_->Count("capacity_extender_reclaim_wasted_evictions_total", "", "",
                    static_cast<double>(plan.victims.size()));
    Log(LogLevel::kWarn, "reclaim hold expired: planned afresh",
        {{"group", id},
         {"plan", plan.summary},
         {"wasted_evictions", std::to_string(plan.victims.size())}});
    unplanned_.erase(id);
    gang_plans_.erase(id);
  }
  for (const auto& [id, plan] : gang_plans_) {
    for (const auto& key : plan.members) {
      in_flight_pods_[key] = id;
      auto it = round->waiting.find(key);
      if (it != round->waiting.end()) {
        it->second.message = InFlightMessage(id, plan.summary);
      }
    }
  }
}

void AdmissionLoop::Reclaim(AdmissionRound* round, int64_t now_ms, bool acts) {
  FollowPlans(round);
  const GateReclaimOptions& options = options_.reclaim;
  if (options.mode == ReclaimMode::kOff || !options.victim_order) return;
  // The gangs waiting for room, each asked by its unit's first pod (the oldest member under our
  // gate alone), not in flight, and not planned in vain since the cluster last changed.
  uint64_t sequence = 0;
  std::vector<std::pair<std::string, std::string>> asking;  // group, store key
  cache_->Read([&](const ClusterState& state) {
    const ChangeJournal* journal = state.change_journal();
    sequence = journal == nullptr ? 0 : journal->last_sequence();
    std::set<std::string> seen;
    for (const auto& [key, wait] : round->waiting) {
      if (!WaitsForRoom(wait.reason) || in_flight_pods_.count(key) != 0) continue;
      const NormalizedPod* pod = state.FindPod(key);
      if (pod == nullptr || pod->group.empty()) continue;
      const GroupView* group = state.GroupOf(*pod);
      if (group == nullptr || !group->starting() || group->need() == 0) continue;
      const std::string id = group->key.Display();
      if (!seen.insert(id).second || gang_plans_.count(id) != 0) continue;
      // Without a change journal (sequence 0) every round counts as a change.
      if (auto memo = unplanned_.find(id);
          memo != unplanned_.end() && sequence != 0 && memo->second == sequence)
        continue;
      const NormalizedPod* first = nullptr;
      bool nominated = false;
      for (const GroupMember& m : group->members) {
        nominated = nominated || state.FindOurNomination(m.pod->store_key()) != nullptr;
        if (first == nullptr && m.state == MemberState::kGated && !m.pod->other_gates)
          first = m.pod;
      }
      if (first != nullptr && !nominated) asking.emplace_back(id, first->store_key());
    }
    return 0;
  });
  for (const auto& [id, key] : asking) {
    const auto search_start = std::chrono::steady_clock::now();
    const CopiedPlan plan = cache_->Read([&](const ClusterState& state) {
      CopiedPlan out;
      const NormalizedPod* pod = state.FindPod(key);
      if (pod == nullptr) return out;
      ReclaimPlanBudget budget;
      budget.max_steps = options.plan_max_steps;
      budget.should_stop = [&] {
        return std::chrono::steady_clock::now() - search_start >
               std::chrono::milliseconds(options.plan_time_cap_ms);
      };
      const ReclaimPlan p = SearchReclaimPlan(state, *pod, *options.victim_order, budget);
      out.outcome = p.outcome;
      out.steps = p.steps;
      out.reason = p.why.message();
      if (!p.found()) return out;
      out.view.outcome = ReclaimPlanOutcomeName(p.outcome);
      out.view.preemptor = id;
      out.view.steps = p.steps;
      for (std::size_t i = 0; i < p.members.size(); ++i) {
        out.placement.emplace_back(p.members[i]->store_key(), p.nodes[i]);
        out.view.members.emplace_back(p.members[i]->Key(), p.nodes[i]);
        out.where += fmt::format("{}{} -> {}", out.where.empty() ? "" : ", ", p.members[i]->Key(),
                                 p.nodes[i]);
      }
      std::vector<std::string> units;
      for (const PlannedUnit& u : p.units) {
        std::vector<std::string> pods;
        for (const NormalizedPod* v : u.victims) {
          out.victims.push_back(*v);
          pods.push_back(v->Key());
        }
        out.cores += u.kind == VictimUnitKind::kCore ? 1 : 0;
        units.push_back(fmt::format("{} {}", VictimUnitKindName(u.kind), fmt::join(pods, "+")));
      }
      out.view.units = units;
      out.units = fmt::format("{}", fmt::join(units, ", "));
      return out;
    });
    metrics_->Observe(
        "capacity_extender_reclaim_plan_search_seconds",
        std::chrono::duration<double>(std::chrono::steady_clock::now() - search_start).count());
    if (plan.outcome != ReclaimPlanOutcome::kFound || plan.victims.empty()) {
      // No plan, or the pods fit as things are (the queue admits them when it can): planned
      // again once the cluster changed.
      if (plan.outcome != ReclaimPlanOutcome::kFound)
        metrics_->Count("capacity_extender_reclaim_plans_total", "outcome",
                        ReclaimPlanOutcomeName(plan.outcome));
      unplanned_[id] = sequence;
      continue;
    }
    const std::string summary = fmt::format("plan for {}: {}; victims: {} ({} steps)", id,
                                            plan.where, plan.units, plan.steps);
    if (options.mode == ReclaimMode::kDryRun || !acts) {
      if (options.mode == ReclaimMode::kDryRun)
        Log(LogLevel::kInfo, "reclaim dry-run: would evict", {{"group", id}, {"plan", summary}});
      unplanned_[id] = sequence;
      continue;
    }
    // Held before the first eviction: no round, /filter or re-created victim sees the room free.
    const int64_t expires = now_ms + options.nomination_ttl_ms;
    cache_->Write([&](ClusterState& state) {
      for (const auto& [member, node] : plan.placement)
        state.Nominate(member, node, expires);
      return 0;
    });
    std::vector<std::string> evicted;
    for (const Pod& victim : plan.victims) {
      const EvictOutcome outcome =
          Acts() ? evictor_->Evict(victim, fmt::format("reclaim for {}", id)) : EvictOutcome{};
      if (!outcome.ok) {
        if (!outcome.not_sent && Acts())
          metrics_->Count("capacity_extender_evictions_refused_total", "namespace", victim.ns);
        Log(LogLevel::kWarn, "reclaim cut short",
            {{"group", id}, {"victim", victim.Key()}, {"error", outcome.error}});
        break;
      }
      metrics_->Count("capacity_extender_evictions_total", "namespace", victim.ns);
      evicted.push_back(victim.Key());
      if (events_ != nullptr) {
        const EventWriteResult r = events_->Create(MakeVictimEvent(victim, id, summary, now_ms,
                                                                   static_cast<int>(evicted.size()),
                                                                   options_.reporting_instance));
        if (r.code != EventWriteCode::kOk)
          Log(LogLevel::kWarn, "victim event failed", {{"pod", victim.Key()}, {"error", r.error}});
      }
    }
    if (evicted.empty()) {
      // Nothing freed: the room is not the gang's. Planned again at the next change.
      cache_->Write([&](ClusterState& state) {
        for (const auto& [member, node] : plan.placement)
          state.ReleaseNomination(member);
        return 0;
      });
      unplanned_[id] = sequence;
      continue;
    }
    metrics_->Count("capacity_extender_reclaims_started_total");
    metrics_->Count("capacity_extender_reclaim_plans_total", "outcome", "found");
    metrics_->Count("capacity_extender_reclaim_plan_victims_total", "", "",
                    static_cast<double>(evicted.size()));
    metrics_->Count("capacity_extender_reclaim_units_broken_total", "", "",
                    static_cast<double>(plan.cores));
    Log(LogLevel::kInfo, "reclaim started", {{"group", id}, {"plan", summary}});
    GangPlan& in_flight = gang_plans_[id];
    in_flight.summary = summary;
    in_flight.victims = evicted;
    in_flight.started_ms = now_ms;
    in_flight.view = plan.view;
    in_flight.view.hold_expires_ms = expires;
    for (const auto& [member, node] : plan.placement) {
      in_flight.members.push_back(member);
      in_flight_pods_[member] = id;
      auto it = round->waiting.find(member);
      if (it != round->waiting.end()) {
        it->second.message = InFlightMessage(id, summary);
      }
    }
    unplanned_.erase(id);
  }
}

}  // namespace capext
