// Embedded mode's side effects of reclaim: an evicted pod is removed from the cache at once (no
// grace period, as in the scenarios), and a requeue nudge is only logged (there is no
// kube-scheduler to wake; the next /filter call sees the freed room).
// Thread-safety: safe from any thread.
#pragma once

#include "extender/reclaim/reclaim_controller.h"

namespace capext {

class EmbeddedEvictor final : public Evictor {
 public:
  explicit EmbeddedEvictor(SchedulerCache* cache) : cache_(cache) {}
  EvictOutcome Evict(const Pod& victim, const std::string& reason) override;

 private:
  SchedulerCache* cache_;
};

class LoggingNudger final : public RequeueNudger {
 public:
  bool Nudge(const Pod& pod) override;
};

}  // namespace capext
