#include "core/pod_request.h"

namespace capext {

ResourceList EffectivePodRequest(const std::vector<ContainerRequests>& containers,
                                 const std::vector<ContainerRequests>& init_containers,
                                 const ResourceList& overhead) {
  ResourceList total;
  for (const auto& c : containers)
    total.Add(c.requests);

  // Sidecars run for the pod's whole life, so they add to the steady state; an ordinary init
  // container runs alone next to the sidecars started before it.
  ResourceList sidecars_so_far;
  ResourceList init_peak;
  for (const auto& init : init_containers) {
    if (init.restartable) {
      total.Add(init.requests);
      sidecars_so_far.Add(init.requests);
      init_peak.MaxWith(sidecars_so_far);
    } else {
      init_peak.MaxWith(init.requests + sidecars_so_far);
    }
  }
  total.MaxWith(init_peak);
  total.Add(overhead);
  return total;
}

}  // namespace capext
