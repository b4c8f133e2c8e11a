#include "extender/embedded/embedded_binder.h"

namespace capext {

void EmbeddedBinder::Bind(const BindRequest& request, BindDone done) {
  done(BindNow(request));
}

BindOutcome EmbeddedBinder::BindNow(const BindRequest& request) {
  const int64_t now = cache_->NowMs();
  return cache_->Write([&](ClusterState& state) {
    const Pod* pod = state.FindPod(request.uid);
    if (pod == nullptr) pod = state.FindPodByName(request.ns, request.name);
    if (pod == nullptr) return BindOutcome{false, 404, "pod not found", false};
    Pod bound = *pod;
    bound.node_name = request.node;
    bound.phase = PodPhase::kRunning;
    bound.start_ms = now;
    bound.nominated_node_name.clear();
    state.UpsertPod(std::move(bound));
    return BindOutcome{true, 0, "", true};
  });
}

}  // namespace capext
