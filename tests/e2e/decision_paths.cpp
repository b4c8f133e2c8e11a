#include "tests/e2e/decision_paths.h"

#include <rapidjson/document.h>

#include <algorithm>
#include <array>

#include "core/placement.h"
#include "policies/policies.h"
#include "policies/victim_orders.h"
#include "tests/e2e/path_context.h"

namespace capext::testing {

std::string DescribeStatus(const Status& s) {
  if (s.ok()) return "ok";
  return std::string(StatusCodeName(s.code())) + ": " + s.message();
}

namespace {

void CountQuestion(PathContext& ctx, const Status& quota) {
  for (const auto& [ns, q] : ctx.base.quota_set().quotas()) {
    if (IsBorrowing(ctx.base.semantics(), q, ctx.base.Used(ns))) {
      ctx.Count("cluster: some quota borrows (used above min)");
      break;
    }
  }
  if (ctx.base.QuotaFor(ctx.pod->ns) == nullptr) {
    ctx.Count("quota: namespace without a quota");
  } else if (quota.ok()) {
    ctx.Count("quota: passes");
  } else if (quota.IsUnresolvable()) {
    ctx.Count("quota: request alone above max (unresolvable)");
  } else if (quota.message().find("would exceed max") != std::string::npos) {
    ctx.Count("quota: over max");
  } else {
    ctx.Count("quota: over the sum of mins");
  }
  if (!quota.ok()) return;
  int passed = 0, unresolvable = 0, unschedulable = 0;
  for (const std::string& name : ctx.state_nodes) {
    const Status& v = ctx.verdict[name];
    passed += v.ok() ? 1 : 0;
    unresolvable += v.IsUnresolvable() ? 1 : 0;
    unschedulable += v.code() == StatusCode::kUnschedulable ? 1 : 0;
  }
  ctx.Count(passed > 0 ? "nodes: some node fits" : "nodes: no node fits (quota passes)");
  if (unresolvable > 0) ctx.Count("nodes: some node unresolvable (static checks, allocatable)");
  if (unschedulable > 0) ctx.Count("nodes: some node short of room (resolvable)");
}

}  // namespace

void RunPaths(PathContext& ctx) {
  ctx.question_json = ctx.question.ToJson();
  rapidjson::Document doc;
  doc.Parse(ctx.question_json.c_str());
  if (Status s = DecodePod(doc, ctx.c.decode_options(), &ctx.raw); !s.ok()) {
    ctx.Disagree("decode", s.message());
    return;
  }
  // The question as core sees it: the wire pod normalised by the cluster (for a pod the cluster
  // holds, the verbs use the stored copy instead; both must decide alike).
  ctx.pod.emplace(ctx.base.Normalize(ctx.raw));

  for (const auto& [name, node] : ctx.base.nodes())
    ctx.state_nodes.push_back(name);
  ctx.names = ctx.state_nodes;
  ctx.names.push_back(kGhostNode);
  // A request lists nodes in kube-scheduler's order, not ours.
  for (std::size_t i = ctx.names.size(); i > 1; --i)
    std::swap(ctx.names[i - 1], ctx.names[ctx.Draw(100 + i) % i]);
  ctx.scoring = std::array{NodeScoring::kLeastAllocated, NodeScoring::kMostAllocated,
                           NodeScoring::kNone}[ctx.Draw(1) % 3];
  const auto& orders = VictimOrderPolicies();
  ctx.victim_order =
      (ctx.Draw(2) % 2 == 0 ? orders.default_entry() : *orders.Find("priority-then-largest-first"))
          .make();

  const PodFilter filter(ctx.base, *ctx.pod);
  for (const std::string& name : ctx.names)
    ctx.verdict[name] = filter.CheckNode(name);
  ctx.quota = filter.quota();
  CountQuestion(ctx, ctx.quota);

  CompareVerbPaths(ctx);
  CompareCorePaths(ctx);
}

std::vector<Disagreement> CompareDecisionPaths(const ClusterCase& c, const JsonTree& question,
                                               uint64_t seed, PathTally* tally) {
  PathContext ctx(c, question, seed, tally);
  if (Status s = BuildState(c, &ctx.base); !s.ok()) {
    ctx.Disagree("build", s.message());
    return ctx.out;
  }
  RunPaths(ctx);
  CompareReservedAsBound(ctx);
  // Every other question: once more on the state a real /bind of it leaves.
  if (ctx.out.empty() && ctx.Draw(50) % 2 == 0) CompareAfterBind(ctx);
  return ctx.out;
}

}  // namespace capext::testing
