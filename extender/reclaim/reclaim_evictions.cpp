#include "extender/reclaim/reclaim_evictions.h"

#include <utility>

#include "extender/log.h"
#include "extender/reclaim/victim_event.h"

namespace capext {

ReclaimEvictions::ReclaimEvictions(Evictor* evictor, Metrics* metrics,
                                   double max_evictions_per_second,
                                   int max_evictions_per_namespace_per_minute)
    : evictor_(evictor),
      metrics_(metrics),
      budget_(max_evictions_per_second, max_evictions_per_namespace_per_minute) {}

void ReclaimEvictions::QueueVictimEvents(std::string reporting_instance) {
  reporting_instance_ = std::move(reporting_instance);
}

bool ReclaimEvictions::TakeTokens(const std::vector<std::string>& victim_namespaces,
                                  int64_t now_ms) {
  std::lock_guard lock(mutex_);
  if (!budget_.HasRoomFor(victim_namespaces, now_ms)) return false;
  for (const auto& ns : victim_namespaces)
    budget_.Take(ns, now_ms);
  return true;
}

void ReclaimEvictions::GiveBack(const std::string& ns, int64_t now_ms) {
  std::lock_guard lock(mutex_);
  budget_.GiveBack(ns, now_ms);
}

EvictionRun ReclaimEvictions::EvictInOrder(const std::vector<const Pod*>& victims,
                                           const std::string& preemptor, const std::string& plan,
                                           int64_t now_ms) {
  EvictionRun run;
  const std::string reason = "reclaim for " + preemptor;
  for (const Pod* victim : victims) {
    // Asked before every eviction: a replica that lost the lease stops at once.
    EvictOutcome outcome = Acts() ? evictor_->Evict(*victim, reason) : EvictOutcome{};
    if (!outcome.ok && (outcome.not_sent || !Acts())) {
      Log(LogLevel::kWarn, "reclaim cut short: this replica stopped acting",
          {{"for", preemptor}, {"victim", victim->Key()}});
      if (outcome.error.empty()) outcome.error = "not sent: this replica stopped acting";
      outcome.not_sent = true;
      run.stopped_acting = true;
      run.stop = std::move(outcome);
      break;
    }
    if (!outcome.ok) {
      Log(LogLevel::kWarn, "eviction refused",
          {{"for", preemptor},
           {"victim", victim->Key()},
           {"pdb", outcome.refused_by_pdb ? "true" : "false"},
           {"error", outcome.error}});
      metrics_->Count("capacity_extender_evictions_refused_total", "namespace", victim->ns);
      run.stop = std::move(outcome);
      break;
    }
    metrics_->Count("capacity_extender_evictions_total", "namespace", victim->ns);
    ++run.evicted;
    if (reporting_instance_) {
      std::lock_guard lock(mutex_);
      victim_events_.push_back(MakeVictimEvent(
          *victim, preemptor, plan, now_ms, victim_event_sequence_++ % 1000, *reporting_instance_));
    }
  }
  for (std::size_t i = run.evicted; i < victims.size(); ++i)
    GiveBack(victims[i]->ns, now_ms);
  return run;
}

std::vector<EventObject> ReclaimEvictions::TakeVictimEvents() {
  std::lock_guard lock(mutex_);
  std::vector<EventObject> out;
  out.swap(victim_events_);
  return out;
}

}  // namespace capext
