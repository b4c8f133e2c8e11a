// SchedulerLoop: kube-scheduler plus capacity-extender, played on a ClusterState: pending pods in
// priority order (then creation time) are filtered (quota + node fit), scored and bound; a pod
// that fits nowhere gets the reclaim controller's plan (1.2 on every node, 1.3 to choose), whose
// victims are evicted at once and whose node is nominated for it. Used by `capacity-sim
// scenario` and `capacity-sim run`.
// Thread-safety: none; owns no state but drives the one it is given.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "core/cluster_state.h"
#include "core/node_score.h"
#include "core/reclaim_planner.h"

namespace capext {

struct SchedulerLoopOptions {
  int64_t nomination_ttl_ms = 120'000;
  bool reclaim = true;
  // Upper bound on passes over the pending pods per RunUntilQuiet (a safety net: every pass
  // either binds, evicts or stops).
  int max_passes = 1000;
};

class SchedulerLoop {
 public:
  struct Eviction {
    Pod victim;
    std::string for_pod;  // the preemptor's key
    std::string node;
  };
  struct Binding {
    std::string pod_key;
    std::string node;
  };
  struct PassResult {
    std::vector<Binding> bound;
    std::vector<Eviction> evicted;
  };

  SchedulerLoop(ClusterState* state, NodeScoring scoring, MoreImportantFn more_important,
                SchedulerLoopOptions options)
      : state_(state),
        scoring_(scoring),
        more_important_(std::move(more_important)),
        options_(options) {}

  // Schedules until nothing more changes at time `now_ms`.
  PassResult RunUntilQuiet(int64_t now_ms);

  // Tries one pending pod once: bind, or plan and execute a reclaim. Returns true on a change.
  bool TryPod(const NormalizedPod& pod, int64_t now_ms, PassResult* result);

  // The last reason each still-pending pod could not be placed, by "namespace/name".
  const std::map<std::string, std::string>& pending_reasons() const { return pending_reasons_; }

  // Called for every decision (bind, reject, evict), for reports and logs.
  std::function<void(const std::string& event, const Pod& pod, const std::string& detail)> observer;

 private:
  ClusterState* state_;
  NodeScoring scoring_;
  MoreImportantFn more_important_;
  SchedulerLoopOptions options_;
  std::map<std::string, std::string> pending_reasons_;
};

}  // namespace capext
