#include "core/preemption.h"

#include <algorithm>
#include <limits>

#include "core/node_fit.h"
#include "core/reasons.h"

namespace capext {

bool EligibleToPreempt(const ClusterState& state, const PreemptorContext& p, std::string* reason) {
  const Pod& pod = *p.pod;
  if (pod.preemption_policy == PreemptionPolicy::kNever) {
    *reason = std::string(reasons::kPreemptionPolicyNever);
    return false;
  }
  std::string nominated = pod.nominated_node_name;
  const std::string self = pod.uid.empty() ? pod.Key() : pod.uid;
  if (const Nomination* ours = state.FindOurNomination(self)) nominated = ours->node;
  if (nominated.empty() || !state.FindNode(nominated)) return true;
  const QuotaBook& book = state.quotas();
  for (const Pod* x : state.PodsOnNode(nominated)) {
    if (!x->terminating) continue;
    const ElasticQuota* xq = book.QuotaFor(x->ns);
    bool would_be_victim = false;
    if (p.quota != nullptr) {
      if (xq == nullptr) continue;
      if (x->ns == pod.ns) {
        would_be_victim = x->priority < pod.priority;
      } else {
        would_be_victim = !p.more_than_min && IsBorrowing(book.semantics(), *xq, book.Used(x->ns));
      }
    } else {
      would_be_victim = xq == nullptr && x->priority < pod.priority;
    }
    if (would_be_victim) {
      *reason = std::string(reasons::kTerminatingVictimOnNominatedNode);
      return false;
    }
  }
  return true;
}

namespace {

struct Score {
  int32_t pdb_violations;
  int32_t highest_priority;
  int64_t priority_sum;
  std::size_t victims;
  int64_t earliest_start_of_highest;
};

Score ScoreOf(const NodeVictims& c) {
  Score s{c.pdb_violations, std::numeric_limits<int32_t>::min(), 0, c.victims.size(),
          std::numeric_limits<int64_t>::max()};
  for (const Pod* v : c.victims) {
    s.highest_priority = std::max(s.highest_priority, v->priority);
    s.priority_sum += static_cast<int64_t>(v->priority) + (int64_t{1} << 31);
  }
  for (const Pod* v : c.victims) {
    if (v->priority == s.highest_priority) {
      s.earliest_start_of_highest = std::min(s.earliest_start_of_highest, EffectiveStartMs(*v));
    }
  }
  return s;
}

// True when a is strictly better than b under 1.3 (ignoring the final name tie-break).
bool Better(const Score& a, const Score& b) {
  if (a.pdb_violations != b.pdb_violations) return a.pdb_violations < b.pdb_violations;
  if (a.highest_priority != b.highest_priority) return a.highest_priority < b.highest_priority;
  if (a.priority_sum != b.priority_sum) return a.priority_sum < b.priority_sum;
  if (a.victims != b.victims) return a.victims < b.victims;
  return a.earliest_start_of_highest > b.earliest_start_of_highest;
}

}  // namespace

std::size_t ChooseCandidate(const std::vector<NodeVictims>& candidates) {
  std::size_t best = 0;
  Score best_score = ScoreOf(candidates[0]);
  for (std::size_t i = 1; i < candidates.size(); ++i) {
    Score s = ScoreOf(candidates[i]);
    if (Better(s, best_score) ||
        (!Better(best_score, s) && candidates[i].node < candidates[best].node)) {
      best = i;
      best_score = s;
    }
  }
  return best;
}

PreemptionPlan FindPreemption(const ClusterState& state, const Pod& preemptor,
                              const MoreImportantFn& more_important,
                              const std::vector<std::string>& nodes) {
  PreemptionPlan plan;
  PreemptorContext ctx = MakePreemptorContext(state, preemptor);
  if (!EligibleToPreempt(state, ctx, &plan.reason)) return plan;

  auto consider = [&](const NodeInfo& info) {
    if (!CheckNodeStatic(preemptor, info.node).ok()) return;
    for (const auto& [name, amount] : preemptor.requests.entries()) {
      if (name != kResourcePods && amount > 0 && amount > info.node.allocatable.Get(name)) return;
    }
    NodeVictims v = SelectVictimsOnNode(state, ctx, info, more_important);
    if (v.candidate) plan.candidates.push_back(std::move(v));
  };
  if (nodes.empty()) {
    for (const auto& [name, node] : state.nodes())
      consider(NodeInfo{node, &state.UsageOf(name)});
  } else {
    std::vector<std::string> sorted = nodes;
    std::sort(sorted.begin(), sorted.end());
    sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
    for (const auto& name : sorted) {
      if (auto info = state.FindNode(name)) consider(*info);
    }
  }
  if (plan.candidates.empty()) {
    plan.reason = "no node has victims whose removal lets the pod fit";
    return plan;
  }
  plan.found = true;
  plan.chosen = plan.candidates[ChooseCandidate(plan.candidates)];
  return plan;
}

}  // namespace capext
