#include "extender/admission/admission_loop.h"

#include <chrono>
#include <iterator>

#include <fmt/format.h>

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
  }
  return "Gated";
}

// A quota that blocks is a Warning; a gang waiting for its members or for room on the nodes is
// Normal (docs/workloads-live.md "Why a pod waits").
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
  const bool changed = sequence != seen_sequence_ || sequence == 0;
  const bool tick = anything_waiting_ && now_ms - last_round_ms_ >= options_.tick_ms;
  if (!changed && !tick) return false;
  seen_sequence_ = sequence;
  last_round_ms_ = now_ms;
  return true;
}

int AdmissionLoop::RunOnce() {
  const int64_t now_ms = cache_->NowMs();
  AdmissionRound round = cache_->Read(
      [&](const ClusterState& state) { return PlanAdmissions(state, options_.plan, now_ms); });
  int lifted = 0;
  Admit(round, now_ms, &lifted);
  Expire(round);
  Publish(round, now_ms);
  anything_waiting_ = !round.waiting.empty() || !round.admit.empty() || !round.timed_out.empty() ||
                      cache_->Read([](const ClusterState& s) { return !s.holds().empty(); });
  metrics_->Count("capacity_extender_admission_rounds_total");
  return lifted;
}

void AdmissionLoop::Admit(const AdmissionRound& round, int64_t now_ms, int* lifted) {
  for (const AdmissionUnit& unit : round.admit) {
    // Hold first: from here on no /filter and no later unit sees the room free. The cache's
    // copy of each pod is assumed admitted (ungated, admitted-at now: a derived hold, as the
    // watch will show it once the patch lands; kube-scheduler's cache "assumes" a pod the same
    // way), plus an explicit hold that ends with the TTL if the watch never confirms.
    std::vector<Pod> pods;
    std::vector<Pod> before;
    cache_->Write([&](ClusterState& state) {
      for (const auto& key : unit.pods) {
        const NormalizedPod* pod = state.FindPod(key);
        if (pod == nullptr || !pod->quota_gated) continue;
        before.push_back(static_cast<const Pod&>(*pod));
        Pod assumed = static_cast<const Pod&>(*pod);
        assumed.quota_gated = false;
        assumed.admitted_ms = now_ms;
        state.UpsertPod(std::move(assumed));
        state.Hold(key, now_ms, now_ms + options_.hold_ttl_ms);
        pods.push_back(before.back());
      }
      return 0;
    });
    const std::string what = unit.group.empty() ? "pod" : unit.group.Display();
    for (std::size_t i = 0; i < pods.size(); ++i) {
      const Pod& pod = pods[i];
      const GateOpenOutcome outcome = opener_->Open(pod, now_ms);
      if (outcome.ok) {
        ++*lifted;
        metrics_->Count("capacity_extender_admissions_total");
        Log(LogLevel::kInfo, "admitted", {{"pod", pod.Key()}, {"unit", what}});
      } else {
        // A failed patch releases that pod's hold; the unit's other members stay admitted (the
        // group's timeout covers a unit that never completes).
        cache_->Write([&](ClusterState& state) {
          const std::string key = StoreKeyOf(before[i]);
          const NormalizedPod* now = state.FindPod(key);
          // Undo the assumption unless the watch already brought a newer version of the pod.
          if (now != nullptr && now->admitted_ms == now_ms && !now->quota_gated)
            state.UpsertPod(Pod(before[i]));
          state.ReleaseHold(key);
          return 0;
        });
        metrics_->Count("capacity_extender_admission_failures_total");
        Log(LogLevel::kWarn, "gate removal failed: hold released",
            {{"pod", pod.Key()}, {"unit", what}, {"error", outcome.error}});
      }
    }
  }
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

void AdmissionLoop::Publish(const AdmissionRound& round, int64_t now_ms) {
  std::map<std::string, GatedVerdict> next;
  cache_->Read([&](const ClusterState& state) {
    for (const auto& [key, wait] : round.waiting) {
      const NormalizedPod* pod = state.FindPod(key);
      if (pod == nullptr) continue;
      GatedVerdict v{pod->ns, pod->name, pod->uid, ReasonName(wait.reason), wait.message, now_ms};
      next.emplace(key, std::move(v));
    }
    return 0;
  });
  {
    std::lock_guard lock(mutex_);
    for (auto& [key, v] : next) {
      auto old = gated_.find(key);
      if (old != gated_.end() && old->second.message == v.message)
        v.since_ms = old->second.since_ms;
    }
    gated_ = next;
  }
  // Events: once per change of the message, at most max_events_per_round a round.
  for (auto it = evented_.begin(); it != evented_.end();) {
    it = next.count(it->first) ? std::next(it) : evented_.erase(it);
  }
  if (events_ == nullptr) return;
  int written = 0;
  for (const auto& [key, v] : next) {
    if (written >= options_.max_events_per_round) break;
    auto seen = evented_.find(key);
    if (seen != evented_.end() && seen->second == v.message) continue;
    const auto wait = round.waiting.at(key);
    EventObject e;
    e.ns = v.ns;
    e.name = fmt::format("{}.{:x}", v.name, now_ms * 1'000'000 + written);
    e.pod_name = v.name;
    e.pod_uid = v.uid;
    e.type = IsWarning(wait.reason) ? "Warning" : "Normal";
    e.reason = "Gated";
    e.action = "Admission";
    e.note = v.message.substr(0, 1024);
    e.reporting_controller = "capacity-extender.io/admission";
    e.reporting_instance = options_.reporting_instance;
    e.event_time_us = now_ms * 1000;
    const EventWriteResult r = events_->Create(e);
    ++written;
    if (r.code == EventWriteCode::kOk) {
      evented_[key] = v.message;
    } else {
      Log(LogLevel::kWarn, "gated pod event failed", {{"pod", key}, {"error", r.error}});
    }
  }
}

std::map<std::string, GatedVerdict> AdmissionLoop::Gated() const {
  std::lock_guard lock(mutex_);
  return gated_;
}

void AdmissionLoop::Start() {
  thread_ = std::jthread([this](std::stop_token stop) {
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
