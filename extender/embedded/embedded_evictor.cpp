#include "extender/embedded/embedded_evictor.h"

#include "extender/log.h"

namespace capext {

EvictOutcome EmbeddedEvictor::Evict(const Pod& victim, const std::string& reason) {
  const bool found = cache_->Write([&](ClusterState& state) {
    const std::string key = victim.uid.empty() ? victim.Key() : victim.uid;
    if (state.FindPod(key) == nullptr) return false;
    state.DeletePod(key);
    return true;
  });
  Log(LogLevel::kInfo, "evicted",
      {{"pod", victim.Key()}, {"node", victim.node_name}, {"reason", reason}});
  return EvictOutcome{found, false, found ? "" : "pod not found"};
}

bool LoggingNudger::Nudge(const Pod& pod) {
  Log(LogLevel::kInfo, "requeue nudge (embedded mode: nothing to wake)", {{"pod", pod.Key()}});
  return true;
}

}  // namespace capext
