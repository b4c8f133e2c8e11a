#include "bench/sim/workload.h"

#include <algorithm>

namespace capext {

void SortByArrival(std::vector<WorkloadPod>* pods) {
  std::stable_sort(pods->begin(), pods->end(), [](const WorkloadPod& a, const WorkloadPod& b) {
    if (a.arrival_ms != b.arrival_ms) return a.arrival_ms < b.arrival_ms;
    return a.name < b.name;
  });
}

}  // namespace capext
