// The effective request of a pod, computed as kube-scheduler computes it for node fit
// (docs/capacity-semantics.md#1-words, "request(p)"): for each resource the larger of
//   (a) the sum over regular containers plus every restartable (sidecar) init container, and
//   (b) for each ordinary init container, its request plus the sidecars declared before it;
// then plus spec.overhead. Requests only; limits are ignored.
#pragma once

#include <vector>

#include "core/resource_list.h"

namespace capext {

struct ContainerRequests {
  ResourceList requests;     // decision units
  bool restartable = false;  // an init container with restartPolicy: Always (a sidecar)
};

ResourceList EffectivePodRequest(const std::vector<ContainerRequests>& containers,
                                 const std::vector<ContainerRequests>& init_containers,
                                 const ResourceList& overhead);

}  // namespace capext
