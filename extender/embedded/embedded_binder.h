// EmbeddedBinder: binding in embedded mode (no API server): the pod becomes bound in the cache
// (node set, phase Running, started now), so a sequence of calls behaves like a small cluster.
// Thread-safety: safe from any thread.
#pragma once

#include "extender/pod_binder.h"
#include "extender/scheduler_cache.h"

namespace capext {

class EmbeddedBinder final : public PodBinder {
 public:
  explicit EmbeddedBinder(SchedulerCache* cache) : cache_(cache) {}
  // Completes inline.
  void Bind(const BindRequest& request, BindDone done) override;
  BindOutcome BindNow(const BindRequest& request);

 private:
  SchedulerCache* cache_;
};

}  // namespace capext
