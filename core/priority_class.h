// PriorityClass (scheduling.k8s.io/v1) and PodDisruptionBudget (policy/v1): the cluster objects
// that victim selection consults.
// Thread-safety: value types.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/label_selector.h"
#include "core/pod.h"

namespace capext {

struct PriorityClass {
  std::string name;
  int32_t value = 0;
  bool global_default = false;
  PreemptionPolicy preemption_policy = PreemptionPolicy::kPreemptLowerPriority;
};

struct PodDisruptionBudget {
  std::string ns;
  std::string name;
  // nullopt = no selector (matches nothing). Kubernetes' preemption also treats an empty
  // selector as matching nothing; we follow it.
  std::optional<LabelSelector> selector;
  int32_t disruptions_allowed = 0;          // status.disruptionsAllowed
  std::vector<std::string> disrupted_pods;  // status.disruptedPods names (already counted)

  bool Selects(const Pod& pod) const {
    return pod.ns == ns && selector && !selector->Empty() && selector->Matches(pod.labels);
  }
};

}  // namespace capext
