// Core's side of the differential check: the unscreened node check, reclaim planning, the
// candidate searches and the placement searches, compared with each other and with the verbs'
// answers (path_context.h).
#include <fmt/format.h>

#include <algorithm>

#include "core/candidate_search.h"
#include "core/placement_search.h"
#include "core/reclaim_planner.h"
#include "tests/e2e/path_context.h"

namespace capext::testing {
namespace {

std::string DescribeVictims(const NodeVictims& c) {
  std::vector<std::string> uids;
  for (const NormalizedPod* v : c.victims)
    uids.push_back(v->uid);
  return fmt::format("{}:[{}] pdb {}", c.node, fmt::join(uids, ","), c.pdb_violations);
}

std::string DescribeCandidateList(const std::vector<NodeVictims>& candidates) {
  std::vector<std::string> parts;
  for (const NodeVictims& c : candidates)
    parts.push_back(DescribeVictims(c));
  return parts.empty() ? "none" : fmt::format("{}", fmt::join(parts, "; "));
}

std::string DescribePlan(const PreemptionPlan& plan) {
  switch (plan.outcome) {
    case PreemptionPlan::Outcome::kFound:
      return "found " + DescribeVictims(plan.chosen);
    case PreemptionPlan::Outcome::kNotEligible:
      return "not eligible (" + plan.why.message() + ")";
    case PreemptionPlan::Outcome::kNoCandidate:
      break;
  }
  return "no candidate";
}

std::string DescribePlacement(const PlacementResult& r, const std::vector<std::string>& nodes) {
  if (!r.quota.ok()) return "quota " + DescribeStatus(r.quota);
  std::vector<std::string> feasible;
  for (int n : r.feasible)
    feasible.push_back(nodes[static_cast<std::size_t>(n)]);
  return fmt::format("best {} of [{}], examined {}",
                     r.best < 0 ? "none" : nodes[static_cast<std::size_t>(r.best)],
                     fmt::join(feasible, ","), r.examined);
}

// PodFilter's screen against the unscreened checks it stands for.
void CompareScreen(PathContext& ctx) {
  const Status quota = CheckQuota(ctx.base, *ctx.pod);
  const PodFilter filter(ctx.base, *ctx.pod);
  for (const std::string& name : ctx.state_nodes) {
    const Status full =
        quota.ok() ? CheckNodeFit(ctx.base, *ctx.pod, *ctx.base.FindNode(name)) : quota;
    const Status& v = ctx.verdict[name];
    const bool passes = filter.Passes(*ctx.base.FindNodeRecord(name));
    if (DescribeStatus(full) != DescribeStatus(v) || passes != v.ok()) {
      ctx.Disagree("filter screen",
                   fmt::format("node {}: PodFilter [{}] (Passes {}), CheckQuota + "
                               "CheckNodeFit [{}]",
                               name, DescribeStatus(v), passes, DescribeStatus(full)));
    }
  }
  std::vector<std::string> expected;
  for (const std::string& name : ctx.state_nodes) {
    if (ctx.verdict[name].ok()) expected.push_back(name);
  }
  const Feasibility f = FindFeasibleNodes(ctx.base, *ctx.pod);
  if (f.feasible != expected) {
    ctx.Disagree("feasible nodes",
                 fmt::format("FindFeasibleNodes [{}], /filter passes [{}]",
                             fmt::join(f.feasible, ","), fmt::join(expected, ",")));
  }
}

// PlanReclaim: kFitsNow iff /filter passes some node of the cluster; kEvict as FindPreemption
// over every node.
void CompareReclaim(PathContext& ctx, const PreemptionPlan& all) {
  ReclaimOptions options;
  options.include_pods_without_quota = ctx.Draw(11) % 2 == 0;
  const ReclaimPlanForPod plan = PlanReclaim(ctx.base, *ctx.pod, *ctx.victim_order, options);
  ctx.Count(std::string("reclaim: ") + ReclaimDecisionName(plan.decision));
  const bool fits_some = std::any_of(ctx.state_nodes.begin(), ctx.state_nodes.end(),
                                     [&](const std::string& n) { return ctx.verdict[n].ok(); });
  ReclaimDecision expected;
  std::string expected_evict;
  if (ctx.base.FindOurNomination(ctx.pod->store_key()) != nullptr) {
    expected = ReclaimDecision::kInFlight;
  } else if (!options.include_pods_without_quota && ctx.base.QuotaFor(ctx.pod->ns) == nullptr) {
    expected = ReclaimDecision::kNotEligible;
  } else if (fits_some) {
    expected = ReclaimDecision::kFitsNow;
  } else if (CheckQuota(ctx.base, *ctx.pod).IsUnresolvable()) {
    expected = ReclaimDecision::kNoCandidate;  // nothing evicted can help
  } else if (all.outcome == PreemptionPlan::Outcome::kNotEligible) {
    expected = ReclaimDecision::kNotEligible;
  } else if (all.found()) {
    expected = ReclaimDecision::kEvict;
    expected_evict = DescribeVictims(all.chosen);
  } else {
    expected = ReclaimDecision::kNoCandidate;
  }
  std::string got_evict;
  if (plan.decision == ReclaimDecision::kEvict) {
    NodeVictims chosen;
    chosen.node = plan.node;
    chosen.victims = plan.victims;
    chosen.pdb_violations = plan.pdb_violations;
    got_evict = DescribeVictims(chosen);
  }
  if (plan.decision != expected || got_evict != expected_evict) {
    ctx.Disagree("reclaim", fmt::format("PlanReclaim {} {}; expected {} {} (fits some node: {}, "
                                        "FindPreemption: {})",
                                        ReclaimDecisionName(plan.decision), got_evict,
                                        ReclaimDecisionName(expected), expected_evict, fits_some,
                                        DescribePlan(all)));
  }
}

// SearchCandidates over the mirror (pruned, then exhaustive) against FindPreemption.
void CompareCandidateSearch(PathContext& ctx, const ClusterState& dense, DensePlacement& placement,
                            const PreemptionPlan& all) {
  for (const bool exhaustive : {false, true}) {
    CandidateSearchOptions options;
    options.start = static_cast<int>(ctx.Draw(20 + exhaustive) %
                                     std::max<std::size_t>(1, ctx.state_nodes.size()));
    options.exhaustive = exhaustive;
    const CandidateSearchResult r =
        SearchCandidates(dense, placement, *ctx.pod, *ctx.victim_order, options);
    const std::string path = exhaustive ? "candidate search (exhaustive)" : "candidate search";
    if (DescribePlan(r.plan) != DescribePlan(all)) {
      ctx.Disagree(path, fmt::format("start {}: SearchCandidates {}, FindPreemption {}",
                                     options.start, DescribePlan(r.plan), DescribePlan(all)));
    }
    if (exhaustive &&
        DescribeCandidateList(r.plan.candidates) != DescribeCandidateList(all.candidates)) {
      ctx.Disagree(path, fmt::format("candidates {} vs FindPreemption's {}",
                                     DescribeCandidateList(r.plan.candidates),
                                     DescribeCandidateList(all.candidates)));
    }
    if (!exhaustive && r.examined < r.pool) ctx.Count("candidate search: stopped early");
  }
}

// The simulator's placement (DensePlacement) against FindPlacement, and, over every node,
// against /filter + /prioritize.
void ComparePlacement(PathContext& ctx, const ClusterState& dense, DensePlacement& placement) {
  const std::size_t total = std::max<std::size_t>(1, ctx.state_nodes.size());
  PlacementQuery every;
  every.start = static_cast<int>(ctx.Draw(30) % total);
  every.scoring = ctx.scoring;
  PlacementQuery sampled = every;
  sampled.start = static_cast<int>(ctx.Draw(31) % total);
  sampled.limit = 1 + ctx.Draw(32) % total;
  for (const PlacementQuery& q : {every, sampled}) {
    const std::string path = fmt::format("placement (start {}, limit {})", q.start,
                                         q.limit == every.limit ? "all" : std::to_string(q.limit));
    const std::string plain =
        DescribePlacement(FindPlacement(ctx.base, *ctx.pod, q), ctx.state_nodes);
    const std::string copy = DescribePlacement(FindPlacement(dense, *ctx.pod, q), ctx.state_nodes);
    const PlacementResult found = placement.Find(*ctx.pod, q);
    const std::string dense_found = DescribePlacement(found, ctx.state_nodes);
    if (plain != copy || plain != dense_found) {
      ctx.Disagree(
          path, fmt::format("FindPlacement [{}], on a copy [{}], DensePlacement::Find [{}]", plain,
                            copy, dense_found));
    }
    if (found.quota.ok()) {
      const std::string scanned = DescribePlacement(
          placement.ScanNodes(*ctx.pod, placement.ProfileOf(*ctx.pod, q.scoring), q),
          ctx.state_nodes);
      if (scanned != plain) {
        ctx.Disagree(path, fmt::format("ScanNodes [{}], FindPlacement [{}]", scanned, plain));
      }
      if (q.limit < every.limit && found.examined < static_cast<int>(ctx.state_nodes.size()))
        ctx.Count("placement: a limited scan stopped early");
    }
  }
  // filter + prioritize: a node /filter passes with the best /prioritize score, first by name.
  std::string expected = "none";
  int best_score = -1;
  for (const std::string& name : ctx.state_nodes) {
    if (!ctx.verdict[name].ok()) continue;
    if (ctx.scores[name] > best_score) {
      best_score = ctx.scores[name];
      expected = name;
    }
  }
  const PlacementResult r = FindPlacement(ctx.base, *ctx.pod, every);
  const std::string got = r.best < 0 ? "none" : ctx.state_nodes[static_cast<std::size_t>(r.best)];
  if (got != expected) {
    ctx.Disagree("placement vs filter + prioritize",
                 fmt::format("FindPlacement chooses {}, /filter + /prioritize {} ({})", got,
                             expected, DescribePlacement(r, ctx.state_nodes)));
  }
}

}  // namespace

void CompareCorePaths(PathContext& ctx) {
  CompareScreen(ctx);
  const PreemptionPlan all = FindPreemption(ctx.base, *ctx.pod, *ctx.victim_order);
  ctx.Count(std::string("preemption: ") + (all.found() ? "found"
                                           : all.outcome == PreemptionPlan::Outcome::kNotEligible
                                               ? "not eligible"
                                               : "no candidate"));
  CompareReclaim(ctx, all);
  CompareTreeRules(ctx, all);

  ClusterState dense(ctx.base);
  std::vector<ResourceName> dims;
  if (ctx.Draw(40) % 4 != 0) dims.push_back(ResourceName::Of("nvidia.com/gpu"));
  if (ctx.Draw(41) % 2 != 0) dims.push_back(kEphemeralStorageName);
  dense.EnableDenseNodes(dims);
  DensePlacement placement(dense);
  CompareCandidateSearch(ctx, dense, placement, all);
  ComparePlacement(ctx, dense, placement);
}

}  // namespace capext::testing
