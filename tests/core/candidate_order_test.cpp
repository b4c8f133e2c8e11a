// The candidate order (ChooseCandidate, Before) against an oracle written from
// docs/capacity-semantics.md#5-choosing-among-candidate-nodes alone, and the lower bound never
// after a real key it bounds.
#include "core/candidate_order.h"

#include <catch2/catch.hpp>
#include <deque>
#include <tuple>

#include "core/preemption.h"
#include "tests/support/builders.h"

namespace capext {
namespace candidate_order_test {
namespace {

uint64_t Next(uint64_t* s) {
  *s = *s * 6364136223846793005ull + 1442695040888963407ull;
  return *s >> 33;
}

// The candidate order spelled out as one lexicographic tuple, smallest first: fewest PDB
// violations; lowest priority of the most important victim; smallest sum of (priority + 2^31);
// fewest victims; latest earliest-start among the highest-priority victims; first node name.
auto OracleKey(const NodeVictims& c) {
  int32_t highest = INT32_MIN;
  int64_t sum = 0;
  for (const auto* v : c.victims) {
    highest = std::max(highest, v->priority);
    sum += static_cast<int64_t>(v->priority) + (int64_t{1} << 31);
  }
  int64_t earliest = INT64_MAX;
  for (const auto* v : c.victims) {
    if (v->priority == highest) earliest = std::min(earliest, EffectiveStartMs(*v));
  }
  return std::make_tuple(c.pdb_violations, highest, sum, c.victims.size(), -earliest, c.node);
}

TEST_CASE("ChooseCandidate chooses what 1.3 says", "[candidates]") {
  uint64_t seed = 3;
  std::deque<NormalizedPod> pods;  // stable addresses
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
        p.spec_priority = static_cast<int32_t>(Next(&seed) % 3) * 100;
        p.start_ms = static_cast<int64_t>(Next(&seed) % 4) * 1000;
        pods.push_back(testing::Normalized(p));
        v.victims.push_back(&pods.back());
      }
      candidates.push_back(std::move(v));
    }
    std::size_t best = 0;
    for (std::size_t i = 1; i < candidates.size(); ++i) {
      if (OracleKey(candidates[i]) < OracleKey(candidates[best])) best = i;
    }
    const std::size_t core = ChooseCandidate(candidates);
    INFO("round " << round);
    // Equal names may repeat in this random data; the chosen keys must then be equal.
    CHECK(OracleKey(candidates[core]) == OracleKey(candidates[best]));
    for (std::size_t i = 0; i < candidates.size(); ++i) {
      for (std::size_t j = 0; j < candidates.size(); ++j) {
        CHECK(Before(KeyOf(candidates[i]), KeyOf(candidates[j])) ==
              (OracleKey(candidates[i]) < OracleKey(candidates[j])));
      }
    }
  }
}

TEST_CASE("the lower bound never comes after the key it bounds", "[candidates]") {
  Pod raw_low, raw_high;
  raw_low.spec_priority = 0;
  raw_low.start_ms = 5000;
  raw_high.spec_priority = 100;
  raw_high.start_ms = 9000;
  const NormalizedPod low = testing::Normalized(raw_low), high = testing::Normalized(raw_high);
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
  CHECK(Before(key, LowerBoundKey("n1", 101, 9000)));  // a higher minimum is a worse bound
  CHECK(Before(LowerBoundKey("n1", 100, 9000), key));
  CHECK(Before(LowerBoundKey("n0", 100, 9000), LowerBoundKey("n1", 100, 9000)));
}

}  // namespace
}  // namespace candidate_order_test
}  // namespace capext
