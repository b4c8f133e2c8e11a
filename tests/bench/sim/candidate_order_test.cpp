// 1.3's order as the simulator compares it must be the core's ChooseCandidate, and the lower
// bound must never be after a real key it bounds.
#include "bench/sim/candidate_order.h"

#include <catch2/catch.hpp>
#include <deque>

#include "core/preemption.h"

namespace capext {
namespace {

uint64_t Next(uint64_t* s) {
  *s = *s * 6364136223846793005ull + 1442695040888963407ull;
  return *s >> 33;
}

TEST_CASE("Before agrees with ChooseCandidate", "[sim][candidates]") {
  uint64_t seed = 3;
  std::deque<Pod> pods;  // stable addresses
  for (int round = 0; round < 500; ++round) {
    std::vector<NodeVictims> candidates;
    const int count = 1 + static_cast<int>(Next(&seed) % 6);
    for (int c = 0; c < count; ++c) {
      NodeVictims v;
      v.node = "n" + std::to_string(Next(&seed) % 1000);
      v.candidate = true;
      v.pdb_violations = static_cast<int32_t>(Next(&seed) % 2);
      const int victims = 1 + static_cast<int>(Next(&seed) % 3);
      for (int k = 0; k < victims; ++k) {
        Pod p;
        p.priority = static_cast<int32_t>(Next(&seed) % 3) * 100;
        p.start_ms = static_cast<int64_t>(Next(&seed) % 4) * 1000;
        pods.push_back(p);
        v.victims.push_back(&pods.back());
      }
      candidates.push_back(std::move(v));
    }
    std::size_t best = 0;
    for (std::size_t i = 1; i < candidates.size(); ++i) {
      if (Before(KeyOf(candidates[i]), KeyOf(candidates[best]))) best = i;
    }
    const std::size_t core = ChooseCandidate(candidates);
    INFO("round " << round);
    // Equal names may repeat in this random data; the chosen keys must then be equal.
    const CandidateKey a = KeyOf(candidates[best]);
    const CandidateKey b = KeyOf(candidates[core]);
    CHECK_FALSE(Before(a, b));
    CHECK_FALSE(Before(b, a));
  }
}

TEST_CASE("the lower bound never comes after the key it bounds", "[sim][candidates]") {
  Pod low, high;
  low.priority = 0;
  low.start_ms = 5000;
  high.priority = 100;
  high.start_ms = 9000;
  NodeVictims v;
  v.node = "n1";
  v.candidate = true;
  v.victims = {&high, &low};
  const CandidateKey key = KeyOf(v);
  CHECK(key.highest_priority == 100);
  CHECK(key.earliest_start_of_highest == 9000);
  CHECK(key.priority_sum == 100 + 2 * (int64_t{1} << 31));
  CHECK_FALSE(Before(key, LowerBoundKey("n1", 100, 9000)));
  CHECK_FALSE(Before(key, LowerBoundKey("n1", 0, 0)));
  CHECK(Before(key, LowerBoundKey("n1", 101, 9000)));       // a higher minimum is a worse bound
  CHECK(Before(LowerBoundKey("n1", 100, 9000), key));
  CHECK(Before(LowerBoundKey("n0", 100, 9000), LowerBoundKey("n1", 100, 9000)));
}

}  // namespace
}  // namespace capext
