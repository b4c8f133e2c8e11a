// "reserved = bound" (docs/capacity-semantics.md#6-accounting-used-reservations-nominations, "A
// reserved pod is a bound pod"; issue 18): every decision about the question on the case's state,
// where /bind reservations hold pods on nodes, equals the decision on the same state with each
// reserved pod bound to its node instead, started at its reservation time. The twin case says
// exactly that with API objects: each reserved pod gets spec.nodeName and status.startTime and
// moves after every other object, in the order the reservations were made, so that it arrives on
// its node where its reservation put it (after the snapshot's pods; victim order breaks ties by
// arrival). Compared: the quota verdict and every node's /filter verdict, FindPreemption over every
// node (the choice and every candidate, with PDB violations and tree distance), PlanReclaim (both
// reclaim option sets), the candidate search over the dense mirror, and the placement.
#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "core/candidate_search.h"
#include "core/placement.h"
#include "core/placement_search.h"
#include "core/reclaim_planner.h"
#include "tests/e2e/path_context.h"
#include "tests/support/quantity_text.h"

namespace capext::testing {
namespace {

// The case with its reservations made real (see the file comment); `bound` gets the keys of the
// pods it binds.
ClusterCase BoundTwin(const ClusterCase& c, std::set<std::string>* bound) {
  ClusterCase twin = c;
  twin.objects.clear();
  twin.held.clear();
  std::vector<JsonTree> moved;
  for (const HeldRoom& h : c.held) {
    const JsonTree* pod = c.FindPod(h.pod_key);
    if (h.kind != HeldRoom::Kind::kReservation) {
      twin.held.push_back(h);
    } else if (pod != nullptr && bound->insert(h.pod_key).second) {
      JsonTree made = *pod;
      made["spec"]["nodeName"] = h.node;
      made["status"]["startTime"] = TimeText(h.reserved_ms);
      moved.push_back(std::move(made));
    }
  }
  for (const JsonTree& o : c.objects) {
    const JsonTree* kind = o.Find("kind");
    if (kind == nullptr || kind->str() != "Pod" || bound->count(PodKey(o)) == 0)
      twin.objects.push_back(o);
  }
  for (JsonTree& pod : moved)
    twin.objects.push_back(std::move(pod));
  return twin;
}

std::string Victims(const std::vector<const NormalizedPod*>& victims) {
  std::vector<std::string> keys;
  for (const NormalizedPod* v : victims)
    keys.push_back(v->store_key());
  return fmt::format("[{}]", fmt::join(keys, ","));
}

std::string Plan(const PreemptionPlan& plan) {
  std::string out =
      fmt::format("outcome {} ({})", static_cast<int>(plan.outcome), DescribeStatus(plan.why));
  if (plan.found()) out += " chosen " + plan.chosen.node + Victims(plan.chosen.victims);
  for (const NodeVictims& c : plan.candidates) {
    out += fmt::format("; {}{} pdb {} distance {}", c.node, Victims(c.victims), c.pdb_violations,
                       c.distance);
  }
  return out;
}

std::string Reclaim(const ReclaimPlanForPod& p) {
  // The explanation is left out: it marks reserved victims ("bind in flight").
  return fmt::format("{} {}{} pdb {} distance {} level '{}' candidates {} ({})",
                     ReclaimDecisionName(p.decision), p.node, Victims(p.victims), p.pdb_violations,
                     p.distance, p.level, p.candidates, DescribeStatus(p.why));
}

std::string Placement(const PlacementResult& r, const std::vector<std::string>& nodes) {
  std::vector<std::string> feasible;
  for (int n : r.feasible)
    feasible.push_back(nodes[static_cast<std::size_t>(n)]);
  return fmt::format("{} best {} of [{}]", DescribeStatus(r.quota),
                     r.best < 0 ? "none" : nodes[static_cast<std::size_t>(r.best)],
                     fmt::join(feasible, ","));
}

// Every decision of the list above for the question, on one state.
std::vector<std::pair<std::string, std::string>> Decisions(PathContext& ctx,
                                                           const ClusterState& state,
                                                           int* reserved_victims) {
  std::vector<std::pair<std::string, std::string>> out;
  const NormalizedPod pod = state.Normalize(ctx.raw);
  const PodFilter filter(state, pod);
  out.emplace_back("quota", DescribeStatus(filter.quota()));
  for (const std::string& name : ctx.names)
    out.emplace_back("filter " + name, DescribeStatus(filter.CheckNode(name)));
  const PreemptionPlan all = FindPreemption(state, pod, *ctx.victim_order);
  out.emplace_back("preemption", Plan(all));
  auto reserved = [&](const std::vector<const NormalizedPod*>& victims) {
    return std::any_of(victims.begin(), victims.end(), [&](const NormalizedPod* v) {
      return state.FindReservation(v->store_key()) != nullptr;
    });
  };
  for (const NodeVictims& c : all.candidates) {
    if (reserved(c.victims)) *reserved_victims |= 1;
  }
  for (const bool without_quota : {false, true}) {
    ReclaimOptions options;
    options.include_pods_without_quota = without_quota;
    const ReclaimPlanForPod plan = PlanReclaim(state, pod, *ctx.victim_order, options);
    out.emplace_back(fmt::format("reclaim (pods without a quota: {})", without_quota),
                     Reclaim(plan));
    if (reserved(plan.victims)) *reserved_victims |= 2;
  }
  ClusterState dense(state);
  dense.EnableDenseNodes({ResourceName::Of("nvidia.com/gpu"), kEphemeralStorageName});
  DensePlacement placement(dense);
  CandidateSearchOptions search;
  search.start = static_cast<int>(ctx.Draw(60) % std::max<std::size_t>(1, ctx.state_nodes.size()));
  out.emplace_back("candidate search",
                   Plan(SearchCandidates(dense, placement, pod, *ctx.victim_order, search).plan));
  PlacementQuery query;
  query.scoring = ctx.scoring;
  out.emplace_back("placement", Placement(FindPlacement(state, pod, query), ctx.state_nodes));
  return out;
}

}  // namespace

void CompareReservedAsBound(PathContext& ctx) {
  std::set<std::string> bound;
  const ClusterCase twin_case = BoundTwin(ctx.c, &bound);
  if (bound.empty()) return;
  ClusterState twin(twin_case.semantics);
  if (Status s = BuildState(twin_case, &twin); !s.ok()) {
    ctx.Disagree("reserved = bound: build", s.message());
    return;
  }
  ctx.Count("reserved = bound: a state with reservations");
  int reserved_victims = 0, unused = 0;
  const auto reserved = Decisions(ctx, ctx.base, &reserved_victims);
  const auto as_bound = Decisions(ctx, twin, &unused);
  if (reserved_victims & 1) ctx.Count("reserved = bound: a candidate node's victims include one");
  if (reserved_victims & 2) ctx.Count("reserved = bound: reclaim takes a reserved pod");
  for (std::size_t i = 0; i < reserved.size(); ++i) {
    if (reserved[i].second == as_bound[i].second) continue;
    ctx.Disagree("reserved = bound: " + reserved[i].first,
                 fmt::format("with {} reserved: {}; bound instead: {}", fmt::join(bound, ","),
                             reserved[i].second, as_bound[i].second));
  }
}

}  // namespace capext::testing
