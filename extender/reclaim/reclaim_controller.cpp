#include "extender/reclaim/reclaim_controller.h"

#include <algorithm>
#include <iterator>
#include <set>

#include <fmt/format.h>

#include "core/reclaim_planner.h"
#include "extender/log.h"

namespace capext {

ReclaimController::ReclaimController(SchedulerCache* cache, Metrics* metrics,
                                     MoreImportantFn more_important, Evictor* evictor,
                                     RequeueNudger* nudger, ReclaimControllerOptions options)
    : cache_(cache),
      metrics_(metrics),
      more_important_(std::move(more_important)),
      evictor_(evictor),
      nudger_(nudger),
      options_(options) {}

ReclaimController::~ReclaimController() {
  Stop();
}

void ReclaimController::Start() {
  thread_ = std::thread([this] {
    std::unique_lock lock(stop_mutex_);
    while (!stopping_) {
      lock.unlock();
      RunOnce();
      lock.lock();
      stop_cv_.wait_for(lock, std::chrono::milliseconds(options_.interval_ms),
                        [this] { return stopping_; });
    }
  });
}

void ReclaimController::Stop() {
  {
    std::lock_guard lock(stop_mutex_);
    stopping_ = true;
  }
  stop_cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

std::map<std::string, std::string> ReclaimController::InFlight() const {
  std::lock_guard lock(mutex_);
  std::map<std::string, std::string> out;
  for (const auto& [uid, r] : in_flight_)
    out[r.pod_key] = r.node;
  return out;
}

bool ReclaimController::HasEvictionBudget(const std::vector<NormalizedPod>& victims,
                                          int64_t now_ms) {
  while (!recent_evictions_.empty() && recent_evictions_.front() <= now_ms - 1000) {
    recent_evictions_.pop_front();
  }
  if (static_cast<double>(recent_evictions_.size() + victims.size()) >
      options_.max_evictions_per_second) {
    return false;
  }
  std::map<std::string, int> per_namespace;
  for (const auto& v : victims)
    ++per_namespace[v.ns];
  for (const auto& [ns, count] : per_namespace) {
    auto& window = recent_by_namespace_[ns];
    while (!window.empty() && window.front() <= now_ms - 60'000)
      window.pop_front();
    if (static_cast<int>(window.size()) + count > options_.max_evictions_per_namespace_per_minute) {
      return false;
    }
  }
  return true;
}

void ReclaimController::ReturnEvictionBudget(const std::string& ns, int64_t now_ms) {
  // Tokens are appended in time order, so the one taken at now_ms is the last such entry.
  auto give_back = [now_ms](std::deque<int64_t>& window) {
    for (auto it = window.rbegin(); it != window.rend() && *it >= now_ms; ++it) {
      if (*it == now_ms) {
        window.erase(std::next(it).base());
        return;
      }
    }
  };
  give_back(recent_evictions_);
  give_back(recent_by_namespace_[ns]);
}

bool ReclaimController::TakeEvictionBudget(const std::string& ns, int64_t now_ms) {
  while (!recent_evictions_.empty() && recent_evictions_.front() <= now_ms - 1000) {
    recent_evictions_.pop_front();
  }
  auto& window = recent_by_namespace_[ns];
  while (!window.empty() && window.front() <= now_ms - 60'000)
    window.pop_front();
  if (static_cast<double>(recent_evictions_.size()) + 1 > options_.max_evictions_per_second ||
      static_cast<int>(window.size()) + 1 > options_.max_evictions_per_namespace_per_minute) {
    return false;
  }
  recent_evictions_.push_back(now_ms);
  window.push_back(now_ms);
  return true;
}

void ReclaimController::TrackInFlight(int64_t now_ms) {
  std::vector<std::string> done;
  std::lock_guard lock(mutex_);
  for (auto& [uid, r] : in_flight_) {
    struct View {
      bool exists, bound, nominated, victims_gone;
    };
    View v = cache_->Read([&](const ClusterState& state) {
      const NormalizedPod* pod = state.FindPod(uid);
      bool gone = true;
      for (const auto& victim : r.victim_uids)
        gone = gone && state.FindPod(victim) == nullptr;
      return View{pod != nullptr, pod != nullptr && pod->IsBound(),
                  state.FindOurNomination(uid) != nullptr, gone};
    });
    if (v.bound) {
      metrics_->Count("capacity_extender_reclaims_completed_total");
      metrics_->Count("capacity_extender_reclaim_pending_to_bound_seconds_sum", "", "",
                      static_cast<double>(now_ms - r.started_ms) / 1000.0);
      Log(LogLevel::kInfo, "reclaim completed", {{"pod", r.pod_key}, {"node", r.node}});
      done.push_back(uid);
    } else if (!v.exists || !v.nominated) {
      metrics_->Count("capacity_extender_reclaims_expired_total");
      Log(LogLevel::kWarn, "reclaim ended without a binding",
          {{"pod", r.pod_key},
           {"node", r.node},
           {"reason", v.exists ? "nomination expired" : "pod deleted"}});
      done.push_back(uid);
    } else if (v.victims_gone && !r.nudged && nudger_ != nullptr) {
      const NormalizedPod pod =
          cache_->Read([&](const ClusterState& state) { return *state.FindPod(uid); });
      r.nudged = nudger_->Nudge(pod);
      if (r.nudged) metrics_->Count("capacity_extender_requeue_nudges_total");
    }
  }
  for (const auto& uid : done)
    in_flight_.erase(uid);
}

void ReclaimController::MaybeNudge(const NormalizedPod& pod, int64_t now_ms) {
  if (!options_.requeue_nudge || nudger_ == nullptr || !pod.unschedulable_condition) return;
  const std::string& key = pod.store_key();
  auto it = last_nudge_ms_.find(key);
  if (it != last_nudge_ms_.end() && now_ms - it->second < options_.requeue_nudge_interval_ms)
    return;
  last_nudge_ms_[key] = now_ms;
  if (nudger_->Nudge(pod)) {
    metrics_->Count("capacity_extender_requeue_nudges_total");
    Log(LogLevel::kInfo, "requeue nudge: pending pod fits now", {{"pod", pod.Key()}});
  }
}

bool ReclaimController::ReclaimFor(const NormalizedPod& pod, int64_t now_ms) {
  const std::string& pod_uid = pod.store_key();
  if (auto it = refused_.find(pod_uid); it != refused_.end() && now_ms < it->second.until_ms) {
    return false;  // its last candidates were all refused: wait out the backoff
  }
  ReclaimOptions plan_options;
  bool any_refused = false;
  int max_retry_after_seconds = 0;
  // Every candidate tried was refused: back off (doubling), or as long as Retry-After says.
  auto back_off = [&] {
    if (!any_refused) return false;
    RefusalBackoff& b = refused_[pod_uid];
    b.backoff_ms = b.backoff_ms == 0 ? options_.refusal_backoff_ms
                                     : std::min(b.backoff_ms * 2, options_.max_refusal_backoff_ms);
    const int64_t wait = std::max(b.backoff_ms, int64_t{max_retry_after_seconds} * 1000);
    b.until_ms = now_ms + wait;
    Log(LogLevel::kWarn, "reclaim postponed: every candidate's eviction was refused",
        {{"pod", pod.Key()}, {"retry_in_ms", std::to_string(wait)}});
    metrics_->CountDecision("reclaim", "refused");
    return false;
  };
  for (int attempt = 0; attempt < options_.max_candidate_attempts; ++attempt) {
    ReclaimPlanForPod plan;
    std::vector<NormalizedPod> victims;
    cache_->Read([&](const ClusterState& state) {
      plan = PlanReclaim(state, pod, more_important_, plan_options);
      for (const NormalizedPod* v : plan.victims)
        victims.push_back(*v);
      plan.victims.clear();  // pointers are only valid under the lock
      return 0;
    });
    if (plan.decision == ReclaimDecision::kFitsNow) {
      MaybeNudge(pod, now_ms);
      return false;
    }
    if (plan.decision != ReclaimDecision::kEvict) return back_off();

    std::string names;
    for (const auto& v : victims)
      names += (names.empty() ? "" : ", ") + v.Key();
    if (options_.mode == ReclaimMode::kDryRun) {
      const std::string signature = pod.Key() + "@" + plan.node + ":" + names;
      if (dry_run_logged_.insert(signature).second) {
        Log(LogLevel::kInfo, "reclaim dry-run: would evict",
            {{"pod", pod.Key()},
             {"node", plan.node},
             {"victims", names},
             {"reason", plan.explanation}});
        metrics_->CountDecision("reclaim", "dry-run");
      }
      return false;
    }
    // All victims of a plan or none: tokens are only taken when the whole plan fits the budget.
    if (!HasEvictionBudget(victims, now_ms)) {
      Log(LogLevel::kWarn, "reclaim postponed: eviction rate limit reached",
          {{"pod", pod.Key()}, {"victims", names}});
      metrics_->CountDecision("reclaim", "rate-limited");
      return false;
    }
    for (const auto& v : victims)
      TakeEvictionBudget(v.ns, now_ms);
    Log(LogLevel::kInfo, "reclaim started",
        {{"pod", pod.Key()},
         {"node", plan.node},
         {"victims", names},
         {"reason", plan.explanation}});
    bool refused = false;
    int retry_after_seconds = 0;
    std::vector<std::string> evicted;
    for (const auto& v : victims) {
      EvictOutcome outcome = evictor_->Evict(v, fmt::format("reclaim for {}", pod.Key()));
      if (!outcome.ok) {
        Log(LogLevel::kWarn, "eviction refused",
            {{"victim", v.Key()},
             {"pdb", outcome.refused_by_pdb ? "true" : "false"},
             {"error", outcome.error}});
        metrics_->Count("capacity_extender_evictions_refused_total", "namespace", v.ns);
        refused = true;
        retry_after_seconds = std::max(retry_after_seconds, outcome.retry_after_seconds);
        break;
      }
      metrics_->Count("capacity_extender_evictions_total", "namespace", v.ns);
      evicted.push_back(v.store_key());
    }
    // The victims not evicted (the refused one and those after it) give their tokens back.
    for (std::size_t i = evicted.size(); i < victims.size(); ++i)
      ReturnEvictionBudget(victims[i].ns, now_ms);
    const std::string& uid = pod.store_key();
    if (refused && evicted.empty()) {
      plan_options.excluded_nodes.push_back(plan.node);  // try the next candidate
      max_retry_after_seconds = std::max(max_retry_after_seconds, retry_after_seconds);
      any_refused = true;
      continue;
    }
    refused_.erase(uid);
    // Hold the room even after a partial eviction: what was freed belongs to this pod.
    cache_->Write([&](ClusterState& state) {
      state.Nominate(uid, plan.node, now_ms + options_.nomination_ttl_ms);
      return 0;
    });
    metrics_->Count("capacity_extender_reclaims_started_total");
    std::lock_guard lock(mutex_);
    in_flight_[uid] = InFlightReclaim{pod.Key(), plan.node, evicted, now_ms, false};
    return true;
  }
  return back_off();
}

int ReclaimController::RunOnce() {
  const int64_t now = cache_->NowMs();
  // Reservations and nominations expire here whatever the mode: a binding the watch never
  // confirms must not hold quota forever.
  cache_->Write([&](ClusterState& state) { return state.Expire(now).size(); });
  TrackInFlight(now);
  if (options_.mode == ReclaimMode::kOff && !options_.requeue_nudge) return 0;

  std::vector<NormalizedPod> pending = cache_->Read([&](const ClusterState& state) {
    std::vector<NormalizedPod> out;
    for (const NormalizedPod* pod : state.PendingPods()) {
      if (state.QuotaFor(pod->ns) == nullptr) continue;
      out.push_back(*pod);
    }
    return out;
  });
  // Backoffs of pods that are no longer pending are forgotten.
  std::set<std::string> pending_uids;
  for (const NormalizedPod& pod : pending)
    pending_uids.insert(pod.store_key());
  std::erase_if(refused_, [&](const auto& entry) { return !pending_uids.contains(entry.first); });
  int started = 0;
  for (const NormalizedPod& pod : pending) {
    if (options_.mode == ReclaimMode::kOff) {
      // Nudges only.
      const bool fits = cache_->Read([&](const ClusterState& state) {
        return PlanReclaim(state, pod, more_important_, {}).decision == ReclaimDecision::kFitsNow;
      });
      if (fits) MaybeNudge(pod, now);
      continue;
    }
    if (options_.require_unschedulable_condition && !pod.unschedulable_condition) continue;
    if (ReclaimFor(pod, now)) ++started;
  }
  return started;
}

}  // namespace capext
