#include "extender/admission/admission_loop.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <iterator>
#include <tuple>

#include <fmt/format.h>

#include "extender/admission/concurrent_for_each.h"
#include "extender/http/thread_name.h"
#include "extender/log.h"

namespace capext {
namespace {

const char* ReasonName(AdmissionWaitReason r) {
  switch (r) {
    case AdmissionWaitReason::kQuotaExceeded:
      return "QuotaExceeded";
    case AdmissionWaitReason::kQuotaNever:
      return "QuotaNever";
    case AdmissionWaitReason::kGangIncomplete:
      return "GangWaiting";
    case AdmissionWaitReason::kNoPlacement:
      return "NoPlacement";
    case AdmissionWaitReason::kOtherGates:
      return "OtherGates";
    case AdmissionWaitReason::kFairShare:
      return "FairShare";
  }
  return "Gated";
}

// A quota that blocks is a Warning; a gang waiting for its members or for room on the nodes is
// Normal (docs/workloads-live.md#the-admission-loop, why a pod waits).
bool IsWarning(AdmissionWaitReason r) {
  return r == AdmissionWaitReason::kQuotaExceeded || r == AdmissionWaitReason::kQuotaNever;
}

}  // namespace

AdmissionLoop::AdmissionLoop(SchedulerCache* cache, Metrics* metrics, GateOpener* opener,
                             Evictor* evictor, AdmissionLoopOptions options)
    : cache_(cache),
      metrics_(metrics),
      opener_(opener),
      evictor_(evictor),
      options_(std::move(options)) {}

AdmissionLoop::~AdmissionLoop() {
  Stop();
}

bool AdmissionLoop::Due(int64_t now_ms) {
  const uint64_t sequence = cache_->Read([](const ClusterState& state) -> uint64_t {
    const ChangeJournal* journal = state.change_journal();
    return journal == nullptr ? 0 : journal->last_sequence();
  });
  const bool changed = sequence != seen_sequence_ || sequence == 0 || held_;
  const bool tick = anything_waiting_ && now_ms - last_round_ms_ >= options_.tick_ms;
  if (!changed && !tick) return false;
  seen_sequence_ = sequence;
  last_round_ms_ = now_ms;
  return true;
}

bool AdmissionLoop::Acts() const {
  return leadership_ == nullptr || leadership_->Leads();
}

int AdmissionLoop::RunOnce() {
  // Never on a cache out of sync (docs/workloads-live.md#the-admission-loop): before the first
  // lists, a namespace whose ElasticQuota is not listed yet looks quota-free and every gated pod
  // of it would be admitted at once. Checked every interval until the cache follows again.
  if (const std::string hold = cache_->SyncReport().Hold(); !hold.empty()) {
    if (!held_) {
      Log(LogLevel::kInfo, "admission held: no gate is lifted", {{"reason", hold}});
      metrics_->Count("capacity_extender_admission_held_rounds_total");
    }
    held_ = true;
    return 0;
  }
  if (held_) Log(LogLevel::kInfo, "admission resumed: the cache is in sync", {});
  held_ = false;
  const int64_t now_ms = cache_->NowMs();
  AdmissionRound round = cache_->Read(
      [&](const ClusterState& state) { return PlanAdmissions(state, options_.plan, now_ms); });
  int lifted = 0;
  // A follower plans and publishes its verdicts but writes nothing: no hold, patch, eviction or
  // Event (docs/architecture.md#two-replicas-one-actor). Its cache stays warm from the watches.
  const bool acts = Acts();
  if (acts) {
    Admit(round, now_ms, &lifted);
    Expire(round);
    Revoke(round, now_ms);
  }
  Reclaim(&round, now_ms, acts);
  Publish(round, now_ms, acts);
  const auto [any_hold, creation_holds] = cache_->Read([](const ClusterState& s) {
    return std::make_pair(!s.holds().empty(), s.creation_holds().size());
  });
  metrics_->SetGauge("capacity_extender_creation_holds", static_cast<double>(creation_holds));
  anything_waiting_ = !round.waiting.empty() || !round.admit.empty() || !round.timed_out.empty() ||
                      !revoking_.empty() || any_hold;
  metrics_->Count("capacity_extender_admission_rounds_total");
  return lifted;
}

void AdmissionLoop::Admit(const AdmissionRound& round, int64_t now_ms, int* lifted) {
  struct Lift {
    Pod pod;
    std::string unit;  // the unit's name, for the log
  };
  std::vector<Lift> lifts;
  for (const AdmissionUnit& unit : round.admit) {
    // Hold first: from here on no /filter and no later unit sees the room free. The pods still
    // carry our gate; core keeps such a hold and counts the pod admitted until the watch shows
    // the patch (docs/workloads.md#2-holds-quota-without-a-node, a gate removal in flight), when
    // the admitted-at annotation takes over (a derived hold). The explicit hold ends with the TTL
    // if that never happens.
    std::vector<Pod> pods = cache_->Write([&](ClusterState& state) {
      std::vector<Pod> out;
      for (const auto& key : unit.pods) {
        const NormalizedPod* pod = state.FindPod(key);
        if (pod == nullptr || !pod->quota_gated || pod->other_gates) continue;
        state.Hold(key, now_ms, now_ms + options_.hold_ttl_ms);
        if (state.FindHold(key) != nullptr) out.push_back(*pod);
      }
      return out;
    });
    const std::string what = unit.group.empty() ? "pod" : unit.group.Display();
    for (Pod& pod : pods)
      lifts.push_back({std::move(pod), what});
  }
  // Every unit of the round is held: the patches may go out in any order, several at once.
  std::atomic<int> opened{0};
  ForEachConcurrently(lifts.size(), static_cast<std::size_t>(options_.max_lifts_in_flight),
                      [&](std::size_t i) {
                        if (OpenGate(lifts[i].pod, lifts[i].unit, now_ms)) ++opened;
                      });
  *lifted += opened.load();
}

bool AdmissionLoop::OpenGate(const Pod& pod, const std::string& unit, int64_t now_ms) {
  const GateOpenOutcome outcome = opener_->Open(pod, now_ms);
  if (outcome.reread) metrics_->Count("capacity_extender_gate_rereads_total");
  if (outcome.ok) {
    metrics_->Count("capacity_extender_admissions_total");
    Log(LogLevel::kInfo, "admitted", {{"pod", pod.Key()}, {"unit", unit}});
    return true;
  }
  // A failed patch releases that pod's hold (unless the watch already shows it admitted: then
  // the hold is derived and stays); the unit's other members stay admitted (the group's timeout
  // covers a unit that never completes).
  cache_->Write([&](ClusterState& state) {
    const std::string key = StoreKeyOf(pod);
    const QuotaHold* hold = state.FindHold(key);
    if (hold != nullptr && !hold->derived) state.ReleaseHold(key);
    return 0;
  });
  metrics_->Count("capacity_extender_admission_failures_total");
  Log(LogLevel::kWarn, "gate removal failed: hold released",
      {{"pod", pod.Key()}, {"unit", unit}, {"error", outcome.error}});
  return false;
}

void AdmissionLoop::Expire(const AdmissionRound& round) {
  for (const GroupTimeout& t : round.timed_out) {
    const std::string id = fmt::format("{}@{}", t.group.Display(), t.admitted_ms);
    std::vector<Pod> victims = cache_->Write([&](ClusterState& state) {
      std::vector<Pod> out;
      for (const auto& key : t.release_holds)
        state.ReleaseHold(key);
      for (const auto& key : t.evict) {
        if (const NormalizedPod* pod = state.FindPod(key); pod != nullptr) out.push_back(*pod);
      }
      return out;
    });
    const std::string reason = fmt::format(
        "{} not complete {} s after its admission: members evicted so their "
        "controller re-creates them gated",
        t.group.Display(), t.timeout_ms / 1000);
    for (const Pod& pod : victims) {
      if (!evicted_.insert(pod.uid).second) continue;
      const EvictOutcome out = evictor_->Evict(pod, reason);
      if (!out.ok) evicted_.erase(pod.uid);  // refused (a PDB) or failed: next round again
    }
    if (reported_timeouts_.insert(id).second) {
      metrics_->Count("capacity_extender_gang_timeouts_total");
      Log(LogLevel::kWarn, "gang timed out",
          {{"group", t.group.Display()},
           {"timeout_ms", std::to_string(t.timeout_ms)},
           {"evicted", std::to_string(t.evict.size())},
           {"left_alone_without_controller", fmt::format("{}", fmt::join(t.reported, ","))}});
    }
  }
}

void AdmissionLoop::Publish(const AdmissionRound& round, int64_t now_ms, bool acts) {
  std::map<std::string, PendingPodRecord> next;
  cache_->Read([&](const ClusterState& state) {
    auto add = [&](const std::string& key, const std::string& gate, const std::string& message) {
      const NormalizedPod* pod = state.FindPod(key);
      if (pod == nullptr) return;
      PendingPodRecord r;
      r.uid = key;
      r.ns = pod->ns;
      r.name = pod->name;
      if (const ElasticQuota* quota = state.QuotaFor(pod->ns))
        r.quota = pod->ns + "/" + quota->name;
      r.priority = pod->priority;
      r.creation_ms = pod->creation_ms;
      r.verdict_ms = now_ms;
      r.verdict.code = VerdictCode::kGated;
      r.verdict.message = message;
      r.gate = gate;
      next.emplace(key, std::move(r));
    };
    for (const auto& [key, wait] : round.waiting)
      add(key, in_flight_pods_.count(key) ? "ReclaimInFlight" : ReasonName(wait.reason),
          wait.message);
    // A plan in flight shows its fields (docs/reclaim-plan.md#5-where-a-user-sees-it).
    for (auto& [key, r] : next) {
      auto member = in_flight_pods_.find(key);
      if (member == in_flight_pods_.end()) continue;
      if (auto plan = gang_plans_.find(member->second); plan != gang_plans_.end())
        r.verdict.plan = plan->second.view;
    }
    // A follower's pods the plan admits stay gated until the leader lifts their gates.
    if (!acts) {
      for (const AdmissionUnit& unit : round.admit) {
        const std::string what = unit.group.empty() ? "" : unit.group.Display() + ": ";
        for (const auto& key : unit.pods)
          add(key, "NotActing",
              fmt::format("{}admitted by the plan: the replica that acts lifts the gate (this "
                          "replica does not act)",
                          what));
      }
    }
    return 0;
  });
  {
    std::lock_guard lock(mutex_);
    for (auto& [key, r] : next) {
      auto old = gated_.find(key);
      if (old != gated_.end() && old->second.verdict.message == r.verdict.message)
        r.verdict_ms = old->second.verdict_ms;
    }
    gated_ = next;
  }
  // Events: once per change of the message, at most max_events_per_round a round.
  for (auto it = evented_.begin(); it != evented_.end();) {
    it = next.count(it->first) ? std::next(it) : evented_.erase(it);
  }
  if (events_ == nullptr || !acts) return;
  int written = 0;
  for (const auto& [key, v] : next) {
    if (written >= options_.max_events_per_round) break;
    auto seen = evented_.find(key);
    if (seen != evented_.end() && seen->second == v.verdict.message) continue;
    const auto wait = round.waiting.at(key);
    const EventWriteResult r = events_->Create(
        PodEvent(v.ns, v.name, v.uid, fmt::format("{}.{:x}", v.name, now_ms * 1'000'000 + written),
                 IsWarning(wait.reason) && in_flight_pods_.count(key) == 0 ? "Warning" : "Normal",
                 "Gated", v.verdict.message, now_ms));
    ++written;
    if (r.code == EventWriteCode::kOk) {
      evented_[key] = v.verdict.message;
    } else {
      Log(LogLevel::kWarn, "gated pod event failed", {{"pod", key}, {"error", r.error}});
    }
  }
}

EventObject AdmissionLoop::PodEvent(const std::string& ns, const std::string& pod_name,
                                    const std::string& uid, std::string name, const char* type,
                                    const char* reason, const std::string& note,
                                    int64_t now_ms) const {
  EventObject e;
  e.ns = ns;
  e.name = std::move(name);
  e.pod_name = pod_name;
  e.pod_uid = uid;
  e.type = type;
  e.reason = reason;
  e.action = "Admission";
  e.note = note.substr(0, 1024);
  e.reporting_controller = "capacity-extender.io/admission";
  e.reporting_instance = options_.reporting_instance;
  e.event_time_us = now_ms * 1000;
  return e;
}

std::vector<PendingPodRecord> AdmissionLoop::Gated() const {
  std::vector<PendingPodRecord> out;
  {
    std::lock_guard lock(mutex_);
    out.reserve(gated_.size());
    for (const auto& [key, r] : gated_)
      out.push_back(r);
  }
  std::sort(out.begin(), out.end(), [](const PendingPodRecord& a, const PendingPodRecord& b) {
    return std::tie(a.creation_ms, a.ns, a.name) < std::tie(b.creation_ms, b.ns, b.name);
  });
  return out;
}

void AdmissionLoop::Start() {
  thread_ = std::jthread([this](std::stop_token stop) {
    http::NameThisThread("ce-admission");
    std::unique_lock lock(wake_mutex_);
    while (!stop.stop_requested()) {
      if (Due(cache_->NowMs())) RunOnce();
      wake_.wait_for(lock, std::chrono::milliseconds(options_.interval_ms),
                     [&] { return stop.stop_requested(); });
    }
  });
}

void AdmissionLoop::Stop() {
  if (thread_.joinable()) {
    thread_.request_stop();
    wake_.notify_all();
    thread_.join();
  }
}

}  // namespace capext
