// What the comparisons of decision_paths.h share for one case and one question: the cluster as
// core sees it, the question decoded and normalised, the names a /filter request carries, core's
// verdict per node, and where disagreements are recorded. Internal to decision_paths*.cpp.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/cluster_state.h"
#include "core/node_score.h"
#include "core/preemption.h"
#include "core/victim_selection.h"
#include "tests/e2e/decision_paths.h"

namespace capext::testing {

// A node name no cluster has: /filter and /bind pass it (kube-scheduler vetted it), /preempt
// skips it.
inline constexpr const char* kGhostNode = "ghost-node";

struct PathContext {
  PathContext(const ClusterCase& cluster, const JsonTree& q, uint64_t s, PathTally* t)
      : c(cluster), question(q), seed(s), tally(t), base(cluster.semantics) {}

  const ClusterCase& c;
  const JsonTree& question;
  uint64_t seed;
  PathTally* tally;

  std::string question_json;
  Pod raw;                                // the question as decoded from the wire
  std::optional<NormalizedPod> pod;       // ... normalised by `base`
  ClusterState base;                      // the case's cluster, never changed after building
  std::vector<std::string> state_nodes;   // base's nodes, in name order
  std::vector<std::string> names;         // a /filter request's nodes (+ kGhostNode), in its order
  Status quota;                           // core's PodFilter quota verdict
  std::map<std::string, Status> verdict;  // core's PodFilter verdict for each of `names`
  std::map<std::string, int> scores;      // /prioritize's answer for each of `names`
  NodeScoring scoring = NodeScoring::kLeastAllocated;
  const VictimOrder* victim_order = &PriorityThenStartTimeOrder();  // the victim order policy
  std::vector<Disagreement> out;

  // A number derived from the seed and `salt`: the same for every run of one case.
  uint64_t Draw(uint64_t salt) const {
    uint64_t z = seed * 0x9E3779B97F4A7C15ULL + salt * 0xBF58476D1CE4E5B9ULL + 1;
    z = (z ^ (z >> 31)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 29);
  }
  uint64_t Draw(std::string_view salt) const {
    uint64_t h = 1469598103934665603ULL;  // FNV-1a
    for (const char ch : salt)
      h = (h ^ static_cast<unsigned char>(ch)) * 1099511628211ULL;
    return Draw(h);
  }
  void Disagree(std::string path, std::string detail) {
    out.push_back({std::move(path), std::move(detail)});
  }
  void Count(const std::string& what) {
    if (tally != nullptr) tally->Add(what);
  }
};

// Every comparison for ctx.question on ctx.base (decision_paths.cpp).
void RunPaths(PathContext& ctx);
// The verbs, through ExtenderService with an embedded cache and binder (verb_paths.cpp).
void CompareVerbPaths(PathContext& ctx);
// /binds the question where /filter passes it, the binding left to the watch (so the reservation
// stays, as in live mode), then runs every comparison for an identical pod on the state the bind
// left (verb_paths.cpp). Disagreements are reported under "after /bind: <path>".
void CompareAfterBind(PathContext& ctx);
// Reclaim planning, the candidate searches and the placement searches (core_paths.cpp).
void CompareCorePaths(PathContext& ctx);
// The quota tree's rules against a naive recount: the tree and its usage, admission at every
// ancestor, the LCA rule for every victim of `all` (FindPreemption over every node); counts what
// the trees produced (tree_paths.cpp).
void CompareTreeRules(PathContext& ctx, const PreemptionPlan& all);

// The same decisions on the state with every reservation bound instead
// (docs/capacity-semantics.md#6-accounting-used-reservations-nominations): equal, or disagreements
// under "reserved = bound: <decision>" (reserved_paths.cpp).
void CompareReservedAsBound(PathContext& ctx);

// "ok", or "<code>: <message>".
std::string DescribeStatus(const Status& s);

}  // namespace capext::testing
