// Gate mode's reclaim for gated gangs
// (docs/reclaim-plan.md#gate-mode-the-admission-loop-plans-for-a-gated-gang): after a round of
// the admission queue, each gang whose unit waits on the quota or the nodes gets one plan across
// nodes (core/reclaim_plan.h's SearchReclaimPlan, the search every caller shares). A plan with
// victims is held first (each member nominated on its planned node for nominationTTL), then its
// victims are evicted in order; the gates stay on until a later round of the queue admits the
// unit, once the room is free. A gang with a member nominated has a plan in flight and is not
// planned again; a hold that ends with no member admitted expired: logged, counted, its victims
// wasted. The evictions are the reclaim controller's (ReclaimEvictions): its rate limits, shared
// by both loops, its lease check before each eviction, and its events thread for the victims'
// Events; a refusal backs the gang off as the controller backs a pod off.
#include <chrono>
#include <cstdint>
#include <iterator>

#include <fmt/format.h>

#include "core/reclaim_plan.h"
#include "extender/admission/admission_loop.h"
#include "extender/log.h"
#include "extender/reclaim/plan_copy.h"

namespace capext {
namespace {

bool WaitsForRoom(AdmissionWaitReason r) {
  return r == AdmissionWaitReason::kQuotaExceeded || r == AdmissionWaitReason::kNoPlacement;
}

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
  if (options.mode == ReclaimMode::kOff || !options.victim_order || evictions_ == nullptr) return;
  const bool fair = options.fair.enabled;
  // The gangs waiting for room, each asked by its unit's first pod (the oldest member under our
  // gate alone), and with fair sharing the single units the shared capacity blocks (the barrier,
  // units within min), each asked by its pod: not in flight, not backing off after a refusal, and
  // not planned in vain since the cluster last changed.
  uint64_t sequence = 0;
  std::vector<std::pair<std::string, std::string>> asking;    // unit id, store key
  std::map<std::string, std::vector<std::string>> unit_keys;  // unit id -> its waiting pods
  cache_->Read([&](const ClusterState& state) {
    const ChangeJournal* journal = state.change_journal();
    sequence = journal == nullptr ? 0 : journal->last_sequence();
    std::set<std::string> seen;
    for (auto& [key, wait] : round->waiting) {
      if (!WaitsForRoom(wait.reason) || in_flight_pods_.count(key) != 0) continue;
      const NormalizedPod* pod = state.FindPod(key);
      if (pod == nullptr) continue;
      const GroupView* group = pod->group.empty() ? nullptr : state.GroupOf(*pod);
      const bool gang = group != nullptr && group->starting() && group->need() > 0;
      // A single pod (or a surplus member) only with fair sharing, when the sum of all mins
      // blocks it.
      if (!gang && !(fair && wait.shared_capacity)) continue;
      const std::string id = gang ? group->key.Display() : "pod " + pod->Key();
      unit_keys[id].push_back(key);
      if (auto b = backoff_.find(id); b != backoff_.end() && now_ms < b->second.until_ms) {
        wait.message = b->second.message;  // every waiting member says why, each round
        continue;
      }
      if (!seen.insert(id).second || gang_plans_.count(id) != 0) continue;
      // Without a change journal (sequence 0) every round counts as a change; with fair sharing a
      // victim reaching the minimum run time counts as one too.
      if (auto memo = unplanned_.find(id); memo != unplanned_.end() && sequence != 0 &&
                                           memo->second == sequence &&
                                           (!fair || now_ms < replan_at_ms_[id]))
        continue;
      if (!gang) {
        if (state.FindOurNomination(key) == nullptr) asking.emplace_back(id, key);
        continue;
      }
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
  FairReclaimOptions fair_options = options.fair;
  fair_options.now_ms = now_ms;
  fair_options.cache = &fairness_cache_;
  auto say = [&](const PlanCopy& plan, const std::string& message) {
    for (const auto& [member, node] : plan.placement) {
      auto it = round->waiting.find(member.store_key());
      if (it != round->waiting.end()) it->second.message = message;
    }
  };
  // Named references, not a structured binding: the lambdas below use them, and clang before 16
  // cannot capture a structured binding (test.sh's ASan+UBSan build uses clang 14).
  for (const auto& unit : asking) {
    const std::string& id = unit.first;
    const std::string& key = unit.second;
    const auto search_start = std::chrono::steady_clock::now();
    int64_t replan_at_ms = INT64_MAX;
    const PlanCopy plan = cache_->Read([&](const ClusterState& state) {
      const NormalizedPod* pod = state.FindPod(key);
      if (pod == nullptr) return PlanCopy{};
      ReclaimPlanBudget budget;
      budget.max_steps = options.plan_max_steps;
      budget.should_stop = [&] {
        return std::chrono::steady_clock::now() - search_start >
               std::chrono::milliseconds(options.plan_time_cap_ms);
      };
      PlanCopy copy =
          CopyPlan(SearchReclaimPlan(state, *pod, *options.victim_order, budget, fair_options), id);
      if (fair && !copy.found())
        replan_at_ms = NextMinRunTimeCrossing(state, now_ms, fair_options.min_run_time_ms);
      return copy;
    });
    replan_at_ms_[id] = replan_at_ms;
    metrics_->Observe(
        "capacity_extender_reclaim_plan_search_seconds",
        std::chrono::duration<double>(std::chrono::steady_clock::now() - search_start).count());
    no_plan_why_.erase(id);
    if (!plan.found() || plan.victims.empty()) {
      // No plan, or the pods fit as things are (the queue admits them when it can): planned
      // again once the cluster changed. With fair sharing the unit says why there is none.
      if (!plan.found()) {
        metrics_->Count("capacity_extender_reclaim_plans_total", "outcome",
                        ReclaimPlanOutcomeName(plan.outcome));
        if (fair) no_plan_why_[id] = plan.reason;
      }
      unplanned_[id] = sequence;
      continue;
    }
    const std::string summary = plan.Summary();
    if (options.mode == ReclaimMode::kDryRun || !acts) {
      if (options.mode == ReclaimMode::kDryRun)
        Log(LogLevel::kInfo, "reclaim dry-run: would evict", {{"group", id}, {"plan", summary}});
      unplanned_[id] = sequence;
      continue;
    }
    // The whole plan within the eviction rate limits the reclaim controller shares, or nothing:
    // planned again next round (the limits refill with time), nothing held meanwhile.
    std::vector<std::string> namespaces;
    for (const NormalizedPod& victim : plan.victims)
      namespaces.push_back(victim.ns);
    if (!evictions_->TakeTokens(namespaces, now_ms)) {
      metrics_->CountDecision("reclaim", "rate-limited");
      Log(LogLevel::kWarn, "reclaim postponed: eviction rate limit reached",
          {{"group", id}, {"plan", summary}});
      say(plan, fmt::format("{}: reclaim postponed by the eviction rate limit ({} per second "
                            "cluster-wide, {} per namespace per minute) for {} victims; planned "
                            "again at the next round",
                            id, evictions_->per_second(), evictions_->per_namespace_per_minute(),
                            plan.victims.size()));
      unplanned_.erase(id);
      continue;
    }
    // Held before the first eviction: no round, /filter or re-created victim sees the room free.
    const int64_t expires = now_ms + options.nomination_ttl_ms;
    cache_->Write([&](ClusterState& state) {
      for (const auto& [member, node] : plan.placement)
        state.Nominate(member.store_key(), node, expires);
      return 0;
    });
    const EvictionRun run = evictions_->EvictInOrder(plan.VictimPointers(), id, summary, now_ms);
    if (run.stop && !run.stopped_acting) {
      // Refused (a PDB, a server error): not planned again before the backoff ends, however the
      // cluster changes; a longer Retry-After wins.
      RefusalBackoff& b = backoff_[id];
      b.backoff_ms = b.backoff_ms == 0 ? options.refusal_backoff_ms
                                       : std::min(b.backoff_ms * 2, options.max_refusal_backoff_ms);
      const int64_t wait = std::max(b.backoff_ms, int64_t{run.stop->retry_after_seconds} * 1000);
      b.until_ms = now_ms + wait;
      b.message = fmt::format(
          "{}: reclaim refused ({} not evicted: {}); {} evicted; planned "
          "again in {} ms",
          id, plan.victims[run.evicted].Key(), run.stop->error, run.evicted, wait);
      Log(LogLevel::kWarn, "reclaim backs off: an eviction was refused",
          {{"group", id}, {"retry_in_ms", std::to_string(wait)}});
    } else if (run.evicted == plan.victims.size()) {
      backoff_.erase(id);
    }
    if (run.evicted == 0) {
      // Nothing freed: the room is not the gang's. Planned again after the backoff (a refusal)
      // or at the next change (this replica stopped acting).
      cache_->Write([&](ClusterState& state) {
        for (const auto& [member, node] : plan.placement)
          state.ReleaseNomination(member.store_key());
        return 0;
      });
      if (auto b = backoff_.find(id); b != backoff_.end() && run.stop && !run.stopped_acting) {
        say(plan, b->second.message);
        unplanned_.erase(id);
      } else {
        unplanned_[id] = sequence;
      }
      continue;
    }
    CountPlanStarted(metrics_, run.evicted, plan.cores);
    Log(LogLevel::kInfo, "reclaim started", {{"group", id}, {"plan", summary}});
    GangPlan& in_flight = gang_plans_[id];
    in_flight.summary = summary;
    in_flight.victims.clear();
    for (std::size_t i = 0; i < run.evicted; ++i)
      in_flight.victims.push_back(plan.victims[i].Key());
    in_flight.started_ms = now_ms;
    in_flight.view = plan.view;
    in_flight.view.hold_expires_ms = expires;
    for (const auto& [member, node] : plan.placement) {
      in_flight.members.push_back(member.store_key());
      in_flight_pods_[member.store_key()] = id;
    }
    say(plan, InFlightMessage(id, summary));
    unplanned_.erase(id);
  }
  // With fair sharing, a unit still waiting for room says why its last search found no plan, in
  // the search's words ("reclaim by fair share: a/a's share 0.250 is not below its fair share
  // 0.250"); the same text every round until it is planned again, so its Event is written once.
  for (auto it = no_plan_why_.begin(); it != no_plan_why_.end();) {
    auto keys = unit_keys.find(it->first);
    if (keys == unit_keys.end()) {
      it = no_plan_why_.erase(it);
      continue;
    }
    for (const std::string& key : keys->second) {
      AdmissionWait& wait = round->waiting.at(key);
      wait.message = fmt::format("{}; {}", wait.message, it->second);
    }
    ++it;
  }
  for (auto it = replan_at_ms_.begin(); it != replan_at_ms_.end();)
    it = unit_keys.count(it->first) != 0 ? std::next(it) : replan_at_ms_.erase(it);
}

}  // namespace capext
