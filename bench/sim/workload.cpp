#include "bench/sim/workload.h"

#include <algorithm>
#include <map>
#include <utility>

namespace capext {

void SortByArrival(std::vector<WorkloadPod>* pods) {
  std::stable_sort(pods->begin(), pods->end(), [](const WorkloadPod& a, const WorkloadPod& b) {
    if (a.arrival_ms != b.arrival_ms) return a.arrival_ms < b.arrival_ms;
    return a.name < b.name;
  });
}

std::vector<WorkloadGroup> GroupsOf(const Workload& workload, int64_t* disagreements) {
  std::map<std::pair<std::string, std::string>, std::size_t> index;
  std::vector<WorkloadGroup> all;
  int64_t disagree = 0;
  std::vector<bool> counted;
  for (std::size_t i = 0; i < workload.pods.size(); ++i) {
    const WorkloadPod& p = workload.pods[i];
    if (p.group.empty()) continue;
    auto [it, inserted] = index.emplace(std::make_pair(p.tenant, p.group), all.size());
    if (inserted) {
      WorkloadGroup g;
      g.tenant = p.tenant;
      g.name = p.group;
      g.min_member = p.min_member;  // the oldest member's: pods are in arrival order
      g.arrival_ms = p.arrival_ms;
      all.push_back(std::move(g));
      counted.push_back(false);
    }
    WorkloadGroup& g = all[it->second];
    if (p.min_member != g.min_member && !counted[it->second]) {
      counted[it->second] = true;
      ++disagree;
    }
    g.members.push_back(static_cast<uint32_t>(i));
  }
  if (disagreements != nullptr) *disagreements = disagree;
  std::vector<WorkloadGroup> out;
  for (auto& g : all) {
    if (g.min_member >= 2) out.push_back(std::move(g));
  }
  return out;
}

}  // namespace capext
