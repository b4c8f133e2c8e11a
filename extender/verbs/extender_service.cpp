#include "extender/verbs/extender_service.h"

#include <thread>

#include "extender/log.h"

namespace capext {

ExtenderService::ExtenderService(SchedulerCache* cache, Metrics* metrics,
                                 std::unique_ptr<NodeScorer> scorer,
                                 std::unique_ptr<VictimOrder> order, PodBinder* binder,
                                 ServiceOptions options)
    : cache_(cache),
      metrics_(metrics),
      scorer_(std::move(scorer)),
      order_(std::move(order)),
      binder_(binder),
      options_(options) {}

void ExtenderService::LearnPod(const Pod& pod) {
  if (pod.IsBound()) return;  // bound pods come from the snapshot or the API server
  const std::string key = CacheKey(pod);
  const bool current = cache_->Read([&](const ClusterState& state) {
    const Pod* known = state.FindPod(key);
    return known != nullptr &&
           (known->IsBound() || (known->requests == pod.requests &&
                                 known->nominated_node_name == pod.nominated_node_name &&
                                 known->spec_priority == pod.spec_priority));
  });
  if (current) return;
  cache_->Write([&](ClusterState& state) {
    const Pod* known = state.FindPod(key);
    if (known != nullptr && known->IsBound()) return;  // a bind won the race
    state.UpsertPod(pod);
  });
}

}  // namespace capext
