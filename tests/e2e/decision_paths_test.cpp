// The decision engine's differential test (issues 11, 13 and 18): on generated clusters (flat,
// or with quota trees of depth 2 to 4; many with /bind reservations in flight) and questions,
// every path that decides about a pod answers the same, also on the state with its reservations
// bound instead, and the tree rules hold on a naive recount (decision_paths.h lists the
// comparisons). A disagreement fails with the seed and the smallest snapshot (YAML, loadable by
// `capacity-extender serve --snapshot` and `explain --snapshot`) that still disagrees on the same
// path.
//   CE_DIFFTEST_STATES=N   how many clusters (default 10,000 in four test cases of 2,500; 1,000
//                          under sanitizers)
//   CE_DIFFTEST_SEED=S     the first seed (default 1): CE_DIFFTEST_STATES=1 CE_DIFFTEST_SEED=S
//                          replays one reported failure.
#include "tests/e2e/decision_paths.h"

#include <cstdio>
#include <cstdlib>
#include <string>

#include <fmt/format.h>
#include <catch2/catch.hpp>

#include "tests/support/random_cluster.h"
#include "tests/support/sanitizer_build.h"

namespace capext::testing {
namespace decision_paths_test {
namespace {

constexpr int kQuestionsPerState = 2;

int64_t EnvOr(const char* name, int64_t fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? std::strtoll(v, nullptr, 10) : fallback;
}

int DefaultStates() {
  return kSanitizerBuild ? 1'000 : 10'000;  // a sanitizer build runs 10-50 times slower
}

// The failure report: seed, path, and the minimal case as a snapshot (the question pod added).
std::string Report(const ClusterCase& c, const JsonTree& question, uint64_t question_seed,
                   const Disagreement& first) {
  auto fails = [&](const ClusterCase& smaller) {
    for (const Disagreement& d : CompareDecisionPaths(smaller, question, question_seed)) {
      if (d.path == first.path) return true;
    }
    return false;
  };
  ClusterCase minimal = ShrinkCase(c, fails);
  std::string detail = first.detail;
  for (const Disagreement& d : CompareDecisionPaths(minimal, question, question_seed)) {
    if (d.path == first.path) {
      detail = d.detail;
      break;
    }
  }
  const std::string key = PodKey(question);
  if (minimal.FindPod(key) == nullptr) minimal.objects.push_back(question);
  const std::vector<std::string> notes = {
      fmt::format("decision paths disagree on {}: {}", first.path, detail),
      fmt::format("question pod: {} (key {}); path-choice seed {}", ObjectName(question), key,
                  question_seed),
      fmt::format("replay: CE_DIFFTEST_STATES=1 CE_DIFFTEST_SEED={} build/tests/e2e_tests "
                  "'[difftest]'",
                  c.seed)};
  return SnapshotYaml(minimal, notes);
}

// Seeds [first_seed, first_seed + states): every question on every path, then the generator's
// coverage on runs large enough for its fractions to be stable.
void CheckDecisionPaths(uint64_t first_seed, int64_t states) {
  PathTally tally;
  int64_t questions = 0;
  for (int64_t i = 0; i < states; ++i) {
    const uint64_t seed = first_seed + static_cast<uint64_t>(i);
    RandomCluster generator(seed);
    ClusterCase c = generator.Generate();
    c.seed = seed;
    for (int q = 0; q < kQuestionsPerState; ++q) {
      const JsonTree question = generator.Question(c);
      const uint64_t question_seed = seed * 16 + static_cast<uint64_t>(q);
      const std::vector<Disagreement> found =
          CompareDecisionPaths(c, question, question_seed, &tally);
      ++questions;
      if (!found.empty()) FAIL(Report(c, question, question_seed, found.front()));
    }
  }
  std::string summary = fmt::format("{} clusters, {} questions:\n", states, questions);
  for (const auto& [what, count] : tally.counts) {
    summary +=
        fmt::format("  {:>6.2f}%  {}\n",
                    100.0 * static_cast<double>(count) / static_cast<double>(questions), what);
  }
  std::fputs(summary.c_str(), stdout);
  // The generator must keep producing every interesting situation (a differential test over
  // easy cases proves little). Checked on runs large enough for the fractions to be stable.
  if (states >= 2000) {
    INFO(summary);
    for (const char* what : {"quota: over max",
                             "quota: over the sum of mins",
                             "quota: request alone above max (unresolvable)",
                             "quota: namespace without a quota",
                             "nodes: no node fits (quota passes)",
                             "nodes: some node short of room (resolvable)",
                             "nodes: some node unresolvable (static checks, allocatable)",
                             "preemption: found",
                             "preemption: not eligible",
                             "reclaim: evict",
                             "reclaim: fits-now",
                             "reclaim: in-flight",
                             "bind: bound",
                             "bind: refused",
                             "preempt: candidates answered",
                             "candidate search: stopped early",
                             "placement: a limited scan stopped early",
                             "cluster: some quota borrows (used above min)",
                             "tree: a forest of 2 quota levels",
                             "tree: a forest of 3 quota levels",
                             "tree: a forest of 4 quota levels",
                             "tree: an invalid parent (a root at runtime)",
                             "tree: over the max of the parent",
                             "tree: over the max of an ancestor",
                             "reserved = bound: a state with reservations"}) {
      INFO(what);
      CHECK(tally.counts[what] * 100 >= questions);  // at least 1% of the questions
    }
    // Rarer, but each must keep occurring: the tree rules at work on victims, and pods whose
    // bind is in flight taken as victims.
    for (const char* what : {"tree: request alone above a parent's or ancestor's max",
                             "tree: victims meet the preemptor at its parent (siblings)",
                             "tree: victims meet the preemptor above its parent (cousins)",
                             "tree: victims across a parent's own namespace and its children",
                             "tree: victims across the roots of a forest",
                             "reserved = bound: a candidate node's victims include one",
                             "reserved = bound: reclaim takes a reserved pod"}) {
      INFO(what);
      CHECK(tally.counts[what] * 1000 >= questions);  // at least 0.1% of the questions
    }
  }
}

}  // namespace

// The default run in four parts (seeds 1-2,500, 2,501-5,000, ...), so that CTest runs them in
// parallel and each stays well under its timeout on a loaded machine. With CE_DIFFTEST_STATES or
// CE_DIFFTEST_SEED set, part 1 runs exactly what they say and the other parts nothing.
constexpr int kParts = 4;

void RunPart(int part) {
  if (std::getenv("CE_DIFFTEST_STATES") != nullptr || std::getenv("CE_DIFFTEST_SEED") != nullptr) {
    if (part == 0) {
      CheckDecisionPaths(static_cast<uint64_t>(EnvOr("CE_DIFFTEST_SEED", 1)),
                         EnvOr("CE_DIFFTEST_STATES", DefaultStates()));
    }
    return;
  }
  const int64_t per_part = DefaultStates() / kParts;
  CheckDecisionPaths(1 + static_cast<uint64_t>(part * per_part), per_part);
}

TEST_CASE("every decision path answers the same on generated clusters, part 1 of 4", "[difftest]") {
  RunPart(0);
}
TEST_CASE("every decision path answers the same on generated clusters, part 2 of 4", "[difftest]") {
  RunPart(1);
}
TEST_CASE("every decision path answers the same on generated clusters, part 3 of 4", "[difftest]") {
  RunPart(2);
}
TEST_CASE("every decision path answers the same on generated clusters, part 4 of 4", "[difftest]") {
  RunPart(3);
}

}  // namespace decision_paths_test
}  // namespace capext::testing
