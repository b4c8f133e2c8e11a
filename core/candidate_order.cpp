#include "core/candidate_order.h"

#include <algorithm>

namespace capext {

CandidateKey KeyOf(const NodeVictims& c) {
  CandidateKey k;
  k.distance = c.distance;
  k.pdb_violations = c.pdb_violations;
  k.victims = c.victims.size() + c.released.size();
  k.node = c.node;
  // A core's released holds count as the victims they would be, bound at their admission time.
  auto count = [&](const NormalizedPod& v) {
    k.highest_priority = std::max(k.highest_priority, v.priority);
    k.priority_sum += static_cast<int64_t>(v.priority) + (int64_t{1} << 31);
  };
  auto start = [&](const NormalizedPod& v, int64_t start_ms) {
    if (v.priority == k.highest_priority)
      k.earliest_start_of_highest = std::min(k.earliest_start_of_highest, start_ms);
  };
  for (const NormalizedPod* v : c.victims)
    count(*v);
  for (const auto& r : c.released)
    count(*r.pod);
  for (const NormalizedPod* v : c.victims)
    start(*v, EffectiveStartMs(*v));
  for (const auto& r : c.released)
    start(*r.pod, r.start_ms);
  return k;
}

bool Before(const CandidateKey& a, const CandidateKey& b) {
  if (a.distance != b.distance) return a.distance < b.distance;
  if (a.pdb_violations != b.pdb_violations) return a.pdb_violations < b.pdb_violations;
  if (a.highest_priority != b.highest_priority) return a.highest_priority < b.highest_priority;
  if (a.priority_sum != b.priority_sum) return a.priority_sum < b.priority_sum;
  if (a.victims != b.victims) return a.victims < b.victims;
  if (a.earliest_start_of_highest != b.earliest_start_of_highest) {
    return a.earliest_start_of_highest > b.earliest_start_of_highest;
  }
  return a.node < b.node;
}

std::size_t ChooseCandidate(const std::vector<NodeVictims>& candidates) {
  std::size_t best = 0;
  CandidateKey best_key = KeyOf(candidates[0]);
  for (std::size_t i = 1; i < candidates.size(); ++i) {
    CandidateKey key = KeyOf(candidates[i]);
    if (Before(key, best_key)) {
      best = i;
      best_key = std::move(key);
    }
  }
  return best;
}

CandidateKey LowerBoundKey(const std::string& node, int32_t min_highest_priority,
                           int64_t latest_start, std::size_t min_victims, int32_t lowest_priority,
                           int32_t min_distance) {
  CandidateKey k;
  k.distance = min_distance;
  k.pdb_violations = 0;
  k.highest_priority = min_highest_priority;
  // Each victim adds priority + 2^31 >= 0: the most important at least min_highest_priority, the
  // others at least lowest_priority.
  const std::size_t victims = std::max<std::size_t>(1, min_victims);
  k.priority_sum = static_cast<int64_t>(min_highest_priority) + (int64_t{1} << 31) +
                   static_cast<int64_t>(victims - 1) *
                       (static_cast<int64_t>(lowest_priority) + (int64_t{1} << 31));
  k.victims = victims;
  k.earliest_start_of_highest = latest_start;
  k.node = node;
  return k;
}

}  // namespace capext
