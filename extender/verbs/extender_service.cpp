#include "extender/verbs/extender_service.h"

#include <thread>

#include "extender/log.h"

namespace capext {

ExtenderService::ExtenderService(SchedulerCache* cache, Metrics* metrics, NodeScoring scoring,
                                 const VictimOrder& victim_order, PodBinder* binder,
                                 ServiceOptions options)
    : cache_(cache),
      metrics_(metrics),
      scoring_(scoring),
      victim_order_(victim_order),
      binder_(binder),
      options_(options),
      flights_([this](BindFlights::Waiter waiter, const BindFlights::FlightView& flight) {
        WaiterDeadline(std::move(waiter), flight);
      }) {
  metrics_->DeclareHistogram("capacity_extender_bind_queue_wait_seconds",
                             "Time a Binding waited for a connection of the Binding client.",
                             Metrics::Scale::kLatency);
  metrics_->AddGauge("capacity_extender_binds_in_flight", 0);  // rendered from the start
}

DecisionPod::DecisionPod(const ClusterState& state, const Pod& wire_pod) {
  const std::string key = StoreKeyOf(wire_pod);
  const NormalizedPod* stored = state.FindPod(key);
  if (stored != nullptr && !stored->IsBound() && !stored->IsTerminal()) {
    pod_ = stored;
    return;
  }
  owned_.emplace(state.Normalize(wire_pod));
  pod_ = &*owned_;
}

http::Response BadRequest(std::string_view verb, const Status& status) {
  return {400, "application/json", ErrorJson(std::string(verb) + ": " + status.message()), {}};
}

void ExtenderService::LearnPod(const Pod& pod) {
  if (pod.IsBound()) return;  // bound pods come from the snapshot or the API server
  const std::string key = StoreKeyOf(pod);
  const bool current = cache_->Read([&](const ClusterState& state) {
    const NormalizedPod* known = state.FindPod(key);
    return known != nullptr &&
           (known->IsBound() || (known->requests == pod.requests &&
                                 known->nominated_node_name == pod.nominated_node_name &&
                                 known->spec_priority == pod.spec_priority));
  });
  if (current) return;
  cache_->Write([&](ClusterState& state) {
    const NormalizedPod* known = state.FindPod(key);
    if (known != nullptr && known->IsBound()) return;  // a bind won the race
    state.UpsertPod(pod);
  });
}

}  // namespace capext
