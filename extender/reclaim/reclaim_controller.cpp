#include "extender/reclaim/reclaim_controller.h"

#include <algorithm>

#include <fmt/format.h>

#include "core/placement.h"
#include "extender/http/thread_name.h"
#include "extender/log.h"

namespace capext {
namespace {

std::string JoinKeys(const std::vector<std::string>& keys) {
  std::string out;
  for (const auto& k : keys)
    out += (out.empty() ? "" : ", ") + k;
  return out;
}

}  // namespace

ReclaimController::ReclaimController(SchedulerCache* cache, Metrics* metrics,
                                     const VictimOrder& victim_order, Evictor* evictor,
                                     RequeueNudger* nudger, ReclaimControllerOptions options)
    : cache_(cache),
      metrics_(metrics),
      victim_order_(victim_order),
      nudger_(nudger),
      options_(options),
      board_(options.reclaim_history),
      evictions_(evictor, metrics, options.max_evictions_per_second,
                 options.max_evictions_per_namespace_per_minute) {
  metrics_->DeclareHistogram("capacity_extender_reclaim_pending_to_bound_seconds",
                             "Time from the start of a reclaim to the pod's binding.");
  metrics_->DeclareHistogram("capacity_extender_reclaim_plan_search_seconds",
                             "Time of one plan search across nodes for a gang.",
                             Metrics::Scale::kLatency);
  metrics_->SetGauge("capacity_extender_reclaim_held", 0);
  cache_->Write([&](ClusterState& state) {
    state.EnableChangeJournal(options_.journal_capacity);
    return 0;
  });
}

ReclaimController::~ReclaimController() {
  Stop();
}

void ReclaimController::Start() {
  auto every = [this](const char* name, int64_t interval_ms, auto work) {
    return std::thread([this, name, interval_ms, work] {
      http::NameThisThread(name);
      std::unique_lock lock(stop_mutex_);
      while (!stopping_) {
        lock.unlock();
        work();
        lock.lock();
        stop_cv_.wait_for(lock, std::chrono::milliseconds(interval_ms),
                          [this] { return stopping_; });
      }
    });
  };
  thread_ = every("ce-reclaim", options_.interval_ms, [this] { RunOnce(); });
  if (recorder_ != nullptr && sink_ != nullptr) {
    events_thread_ =
        every("ce-events", options_.event_flush_interval_ms, [this] { FlushEvents(); });
  }
}

void ReclaimController::Stop() {
  {
    std::lock_guard lock(stop_mutex_);
    stopping_ = true;
  }
  stop_cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  if (events_thread_.joinable()) events_thread_.join();
}

void ReclaimController::MaybeNudge(const NormalizedPod& pod, int64_t now_ms, WakeRule* wake) {
  if (!options_.requeue_nudge || nudger_ == nullptr || !pod.unschedulable_condition) return;
  if (!Acts()) return;  // the new actor plans every pod again
  const std::string key = pod.store_key();
  auto it = last_nudge_ms_.find(key);
  if (it != last_nudge_ms_.end() && now_ms - it->second < options_.requeue_nudge_interval_ms) {
    wake->at_ms =
        it->second + options_.requeue_nudge_interval_ms;  // nudged again then if it still fits
    return;
  }
  last_nudge_ms_[key] = now_ms;
  wake->at_ms = now_ms + options_.requeue_nudge_interval_ms;
  if (nudger_->Nudge(pod)) {
    metrics_->Count("capacity_extender_requeue_nudges_total");
    Log(LogLevel::kInfo, "requeue nudge: pending pod fits now", {{"pod", pod.Key()}});
  }
}

int64_t ReclaimController::NextRetryAt(const std::string& uid, int retry_after_seconds,
                                       int64_t now_ms) {
  const int64_t backoff =
      refused_[uid].Next(options_.refusal_backoff_ms, options_.max_refusal_backoff_ms);
  return now_ms + std::max(backoff, int64_t{retry_after_seconds} * 1000);
}

PodVerdict ReclaimController::ReclaimFor(const NormalizedPod& pod, int64_t now_ms, bool* started,
                                         WakeRule* wake) {
  const std::string pod_uid = pod.store_key();
  *wake = WakeRule{};
  if (auto it = refused_.find(pod_uid); it != refused_.end() && now_ms < it->second.until_ms) {
    wake->at_ms = it->second.until_ms;
    return it->second.verdict;  // its last candidates were all refused: wait out the backoff
  }
  // A reclaim cut short after some evictions, planned again: the room it holds is its own.
  bool resuming = false;
  if (auto it = refused_.find(pod_uid); it != refused_.end() && it->second.resume) {
    it->second.resume = false;
    resuming = cache_->Read(
        [&](const ClusterState& state) { return state.FindOurNomination(pod_uid) != nullptr; });
  }
  if (std::optional<PodVerdict> gang = ReclaimForGang(pod, now_ms, resuming, started, wake)) {
    return *gang;
  }
  // The resumed plan did not evict: the room held for it goes, with its record.
  auto end_resumed = [&] {
    if (!resuming) return;
    resuming = false;
    cache_->Write([&](ClusterState& state) {
      state.ReleaseNomination(pod_uid);
      return 0;
    });
    records_to_clear_.insert(pod_uid);
  };
  std::vector<std::string> excluded;
  std::vector<RefusedEviction> refusals;
  bool all_by_pdb = true;
  int max_retry_after_seconds = 0;
  // The record of a reclaim that ends without an eviction is removed (while this replica acts):
  // it would otherwise hold the room in every replica for nothing.
  bool recorded = false;
  auto drop_record = [&] {
    if (!recorded || records_ == nullptr || !Acts()) return;
    recorded = false;
    records_->Clear(pod);
  };
  // Every candidate tried was refused: back off (doubling), or as long as Retry-After says.
  auto back_off = [&] {
    drop_record();
    RefusalBackoff& b = refused_[pod_uid];
    b.until_ms = NextRetryAt(pod_uid, max_retry_after_seconds, now_ms);
    const int64_t wait = b.until_ms - now_ms;
    *wake = WakeRule{};
    wake->at_ms = b.until_ms;
    // One reason for the whole refuse-wait-retry cycle, with a message that stays the same.
    b.verdict = PodVerdict{};
    b.verdict.code = all_by_pdb ? VerdictCode::kReclaimRefused : VerdictCode::kReclaimBackoff;
    b.verdict.message = all_by_pdb ? verdicts::RefusedByDisruptionBudget(pod.Key(), refusals)
                                   : verdicts::EvictionsFailed(pod.Key(), refusals);
    b.verdict.reclaim = ReclaimState::kBackoff;
    b.verdict.retry_at_ms = b.until_ms;
    b.verdict.node = refusals.back().node;
    for (const auto& r : refusals)
      b.verdict.victims.push_back(r.victim);
    Log(LogLevel::kWarn, "reclaim postponed: every candidate's eviction was refused",
        {{"pod", pod.Key()}, {"retry_in_ms", std::to_string(wait)}});
    metrics_->CountDecision("reclaim", "refused");
    return b.verdict;
  };
  for (int attempt = 0; attempt < options_.max_candidate_attempts; ++attempt) {
    const Plan plan = PlanFor(pod, excluded, resuming);
    *wake = WakeRuleFor(plan);
    if (plan.decision != ReclaimDecision::kEvict) end_resumed();
    if (plan.decision == ReclaimDecision::kFitsNow) {
      drop_record();
      MaybeNudge(pod, now_ms, wake);
      return NoEviction(pod, plan, false);
    }
    if (plan.decision != ReclaimDecision::kEvict) {
      return refusals.empty() ? NoEviction(pod, plan, false) : back_off();
    }
    std::vector<std::string> victim_keys, victim_namespaces;
    for (const auto& v : plan.victims) {
      victim_keys.push_back(v.Key());
      victim_namespaces.push_back(v.ns);
    }
    const std::string names = JoinKeys(victim_keys);
    if (options_.mode == ReclaimMode::kDryRun) {
      const std::string signature = pod.Key() + "@" + plan.node + ":" + names;
      if (dry_run_logged_.insert(signature).second) {
        Log(LogLevel::kInfo, "reclaim dry-run: would evict",
            {{"pod", pod.Key()}, {"node", plan.node}, {"victims", names}, {"reason", plan.reason}});
        metrics_->CountDecision("reclaim", "dry-run");
      }
      return NoEviction(pod, plan, true);
    }
    if (!Acts()) return FollowerVerdict(pod, wake);  // stopped acting during this pass
    // All victims of a plan or none: tokens are only taken when the whole plan fits the budget.
    if (!evictions_.TakeTokens(victim_namespaces, now_ms)) {
      drop_record();
      Log(LogLevel::kWarn, "reclaim postponed: eviction rate limit reached",
          {{"pod", pod.Key()}, {"victims", names}});
      metrics_->CountDecision("reclaim", "rate-limited");
      *wake = WakeRule{};
      wake->at_ms = now_ms + 1;  // the next pass: the budget refills with time
      PodVerdict v;
      v.code = VerdictCode::kReclaimRefused;
      v.reclaim = ReclaimState::kRefused;
      v.node = plan.node;
      v.victims = victim_keys;
      v.message = verdicts::RateLimited(pod.Key(), victim_keys, plan.node, evictions_.per_second(),
                                        evictions_.per_namespace_per_minute());
      return v;
    }
    // Recorded on the pod before the first eviction, so that a replica taking over knows.
    if (records_ != nullptr) {
      std::optional<std::string> record = records_->Record(pod, plan.node);
      if (!record) {
        for (const auto& ns : victim_namespaces)
          evictions_.GiveBack(ns, now_ms);
        refusals.push_back({victim_keys.front(), plan.node,
                            "not evicted: the reclaim could not be recorded on the pod"});
        all_by_pdb = false;
        return back_off();
      }
      recorded = true;
      seen_records_[pod_uid] = *record;  // ours: never adopted
    }
    Log(LogLevel::kInfo, "reclaim started",
        {{"pod", pod.Key()}, {"node", plan.node}, {"victims", names}, {"reason", plan.reason}});
    // The room is held for the pod before the first eviction frees any of it: a pod that
    // kube-scheduler tries between two evictions must not take it
    // (docs/capacity-semantics.md#8-the-reclaim-controller).
    cache_->Write([&](ClusterState& state) {
      state.Nominate(pod_uid, plan.node, now_ms + options_.nomination_ttl_ms);
      return 0;
    });
    // Least important first (the plan lists them most important first): a reclaim cut short
    // by a refusal, a lost lease or a server gone has taken only the cheapest victims.
    std::vector<const Pod*> order;
    for (auto it = plan.victims.rbegin(); it != plan.victims.rend(); ++it)
      order.push_back(&*it);
    const EvictionRun run = evictions_.EvictInOrder(
        order, "pod " + pod.Key(),
        fmt::format("victims on {}: {} ({})", plan.node, names, plan.reason), now_ms);
    std::vector<std::string> evicted, evicted_keys;
    for (std::size_t i = 0; i < run.evicted; ++i) {
      const NormalizedPod& v = plan.victims[plan.victims.size() - 1 - i];
      evicted.push_back(v.store_key());
      evicted_keys.push_back(v.Key());
    }
    const bool stopped_acting = run.stopped_acting;
    std::optional<EvictOutcome> refusal;
    if (run.stop && !run.stopped_acting) {
      refusals.push_back({order[run.evicted]->Key(), plan.node, run.stop->error});
      refusal = run.stop;
    }
    // Nothing evicted: the record stays for the next actor, which holds the room until the
    // nomination expires (docs/architecture.md#two-replicas-one-actor).
    if (stopped_acting && evicted.empty()) return FollowerVerdict(pod, wake);
    if (refusal && evicted.empty()) {
      // Closes the "reclaim started" above for the operator: nothing was evicted on this node.
      Log(LogLevel::kInfo, "reclaim given up: its first eviction failed",
          {{"pod", pod.Key()}, {"node", plan.node}, {"error", refusal->error}});
      resuming = false;  // the room it held is released here
      cache_->Write([&](ClusterState& state) {
        state.ReleaseNomination(pod_uid);  // nothing freed there: the room is not ours
        return 0;
      });
      excluded.push_back(plan.node);  // try the next candidate
      max_retry_after_seconds = std::max(max_retry_after_seconds, refusal->retry_after_seconds);
      all_by_pdb = all_by_pdb && refusal->refused_by_pdb;
      continue;
    }
    // The nomination stays even after a partial eviction: what was freed belongs to this pod.
    // Cut short by a refusal: planned again after the backoff, keeping that room.
    int64_t resume_at_ms = 0;
    if (refusal) {
      resume_at_ms = NextRetryAt(pod_uid, refusal->retry_after_seconds, now_ms);
      Log(LogLevel::kWarn, "reclaim cut short: planned again after the backoff",
          {{"pod", pod.Key()},
           {"node", plan.node},
           {"evicted", JoinKeys(evicted_keys)},
           {"retry_in_ms", std::to_string(resume_at_ms - now_ms)}});
    } else {
      refused_.erase(pod_uid);
    }
    metrics_->Count("capacity_extender_reclaims_started_total");
    if (resuming) metrics_->Count("capacity_extender_reclaims_resumed_total");
    {
      std::lock_guard lock(mutex_);
      InFlightReclaim& r = in_flight_[pod_uid];
      r = InFlightReclaim{pod.Key(), plan.node, evicted, evicted_keys, now_ms, false};
      r.resume_at_ms = resume_at_ms;
    }
    board_.ReclaimStarted({pod_uid, pod.Key(), plan.node, evicted_keys, "in-flight", now_ms, 0});
    *started = true;
    *wake = WakeRule{};  // in flight: our nomination of it ending wakes it
    PodVerdict v;
    v.code = VerdictCode::kWaitingForReclaim;
    v.reclaim = ReclaimState::kInFlight;
    v.node = plan.node;
    v.victims = evicted_keys;
    v.reclaim_started_ms = now_ms;
    v.message = verdicts::WaitingForReclaim(pod.Key(), evicted_keys, plan.node);
    return v;
  }
  if (!refusals.empty()) return back_off();
  wake->on = kWakeOnQuota | kWakeOnClusterQuota | kWakeOnAnyNode;
  PodVerdict none;  // max_candidate_attempts is 0: reclaim never tries
  none.code = VerdictCode::kUnschedulable;
  none.message = verdicts::NoReclaimPossible("no candidate attempts are allowed");
  return none;
}

void ReclaimController::Hold(const std::string& reason, int64_t now_ms) {
  if (!held_since_ms_) {
    held_since_ms_ = now_ms;
    // Waiting for the first lists is expected at every start: not worth a warning.
    Log(cache_->ready() ? LogLevel::kWarn : LogLevel::kInfo,
        "reclaim held: nothing is planned, evicted or expired", {{"reason", reason}});
  }
  board_.SetHold(PendingBoard::Hold{reason, *held_since_ms_});
  metrics_->SetGauge("capacity_extender_reclaim_held", 1);
  metrics_->Count("capacity_extender_reclaim_held_passes_total");
}

int ReclaimController::RunOnce() {
  const int64_t now = cache_->NowMs();
  last_pass_ = PassStats{};
  // Nothing is decided on a cache that is out of sync
  // (docs/capacity-semantics.md#12-deciding-on-a-cache-that-is-out-of-sync): no plan, no eviction,
  // no expiry of a reservation the watch cannot confirm now, no nudge.
  if (const std::string hold = cache_->SyncReport().Hold(); !hold.empty()) {
    Hold(hold, now);
    return 0;
  }
  if (held_since_ms_) {
    Log(LogLevel::kInfo, "reclaim resumed: the cache is in sync",
        {{"held_ms", std::to_string(now - *held_since_ms_)}});
    held_since_ms_.reset();
    board_.SetHold(std::nullopt);
    metrics_->SetGauge("capacity_extender_reclaim_held", 0);
  }
  const bool acts = Acts();
  if (acts && !acted_last_pass_) rederive_ = true;  // a new actor plans every pod again
  acted_last_pass_ = acts;
  // Reservations and nominations expire here whatever the mode: a binding the watch never
  // confirms must not hold quota forever.
  cache_->Write([&](ClusterState& state) { return state.Expire(now).size(); });
  TrackInFlight(now, acts);
  LearnChanges();
  AdoptRecords(now);
  if (acts) ClearEndedRecords();
  index_.WakeDue(now);

  struct PendingPod {
    NormalizedPod pod;
    std::string quota;
  };
  const std::vector<std::string> batch = index_.TakeQueued(options_.max_pods_per_pass);
  std::vector<PendingPod> pending = cache_->Read([&](const ClusterState& state) {
    std::vector<PendingPod> out;
    out.reserve(batch.size());
    for (const auto& uid : batch) {
      const NormalizedPod* pod = state.FindPod(uid);
      const ElasticQuota* quota = pod != nullptr ? state.QuotaFor(pod->ns) : nullptr;
      if (quota == nullptr || pod->IsBound() || pod->IsTerminal() || pod->IsGated() ||
          state.FindReservation(uid) != nullptr) {
        continue;  // the journal's next entries say so too; LearnChanges forgets it then
      }
      out.push_back({*pod, pod->ns + "/" + quota->name});
    }
    return out;
  });
  // In scheduling order, as kube-scheduler would try them: higher priority reclaims first.
  std::sort(pending.begin(), pending.end(), [](const PendingPod& a, const PendingPod& b) {
    if (a.pod.priority != b.pod.priority) return a.pod.priority > b.pod.priority;
    if (a.pod.creation_ms != b.pod.creation_ms) return a.pod.creation_ms < b.pod.creation_ms;
    return a.pod.store_key() < b.pod.store_key();
  });

  int started = 0;
  for (const auto& [pod, quota] : pending) {
    PodVerdict verdict;
    WakeRule wake;
    if (options_.mode == ReclaimMode::kOff) {
      // Verdicts and nudges only.
      const Plan plan = PlanFor(pod, {});
      wake = WakeRuleFor(plan);
      if (plan.decision == ReclaimDecision::kFitsNow) MaybeNudge(pod, now, &wake);
      verdict = NoEviction(pod, plan, false);
    } else if (options_.require_unschedulable_condition && !pod.unschedulable_condition) {
      verdict.code = VerdictCode::kAwaitingScheduler;
      verdict.message = std::string(verdicts::kAwaitingScheduler);
    } else if (!acts) {
      verdict = FollowerVerdict(pod, &wake);
    } else {
      bool reclaim_started = false;
      verdict = ReclaimFor(pod, now, &reclaim_started, &wake);
      if (reclaim_started) ++started;
    }
    last_pass_.planned.push_back(pod.Key());
    index_.SetRule(pod.store_key(), std::move(wake));
    Publish(pod, quota, std::move(verdict), now);
  }
  last_pass_.backlog = index_.queued();
  last_pass_.tracked = index_.size();
  metrics_->Count("capacity_extender_reclaim_passes_total");
  metrics_->Count("capacity_extender_reclaim_pods_planned_total", "", "",
                  static_cast<double>(last_pass_.planned.size()));
  metrics_->SetGauge("capacity_extender_reclaim_planned_last_pass",
                     static_cast<double>(last_pass_.planned.size()));
  metrics_->SetGauge("capacity_extender_reclaim_backlog", static_cast<double>(last_pass_.backlog));
  metrics_->SetGauge("capacity_extender_reclaim_tracked_pods",
                     static_cast<double>(last_pass_.tracked));
  return started;
}

std::optional<WakeRule> ReclaimController::WakeRuleOf(const std::string& uid) const {
  const WakeRule* rule = index_.RuleOf(uid);
  return rule != nullptr ? std::optional<WakeRule>(*rule) : std::nullopt;
}

}  // namespace capext
