#include "extender/explain.h"

#include <fmt/format.h>
#include <rapidjson/prettywriter.h>
#include <rapidjson/stringbuffer.h>
#include <optional>

#include "core/fair_share.h"
#include "core/fair_share_weight.h"
#include "core/placement.h"
#include "core/quota_admission.h"
#include "core/reclaim_plan.h"
#include "core/reclaim_planner.h"
#include "core/victim_unit.h"

namespace capext {
namespace {

struct Explanation {
  const ElasticQuota* quota = nullptr;
  ResourceList used, reserved, request;
  AdmissionPath path;  // the levels from the pod's quota up to its root, with their r
  NominatedSums sums;
  Feasibility feasibility;
  ReclaimPlanForPod reclaim;
  // The plan for its placement across nodes (docs/reclaim-plan.md), when it does not fit now.
  std::optional<ReclaimPlan> plan;
  std::vector<std::pair<std::string, std::string>> in_flight;  // pod -> node (our nominations)
  // Fair sharing's arithmetic (docs/fair-sharing.md#3-share), from the pod's leaf up to its root.
  struct FairLevel {
    std::string quota;
    NodeFairness fairness;
    ShareKey share_after;  // with the pod's request added
  };
  std::vector<FairLevel> fair;
  bool fair_sharing = false;  // the plan may take victims by reclaim between borrowers
};

Explanation Explain(const ClusterState& state, const NormalizedPod& pod, const VictimOrder& order,
                    const FairReclaimOptions& fair) {
  Explanation e;
  e.quota = state.QuotaFor(pod.ns);
  e.used = state.Used(pod.ns);
  e.reserved = state.ledger().Reserved(pod.ns);
  e.request = pod.quota_request();
  e.path = MakeAdmissionPath(state, pod);
  e.sums = e.path.sums;
  e.feasibility = FindFeasibleNodes(state, pod);
  ReclaimOptions options;
  options.include_pods_without_quota = true;
  e.reclaim = PlanReclaim(state, pod, order, options);
  // The reclaim controller's search, with its fairness options (extender/serve_options.h).
  e.fair_sharing = fair.enabled;
  if (e.feasibility.feasible.empty()) e.plan = SearchReclaimPlan(state, pod, order, {}, fair);
  state.ForEachNomination([&](const Nomination& n) {
    if (n.ours) e.in_flight.emplace_back(n.uid, n.node);
  });
  const QuotaTree& tree = state.ledger().tree();
  if (const int leaf = tree.LeafOf(pod.ns); leaf >= 0) {
    const FairShareModel model(state);
    const std::vector<NodeFairness> all = ComputeFairness(state, model);
    for (int node = leaf; node >= 0; node = tree.parent(node)) {
      std::string name = tree.quota(node).Key();
      if (tree.is_own(node)) name += " (own namespace)";
      e.fair.push_back({std::move(name), all[static_cast<std::size_t>(node)],
                        model.ShareWith(state, node, pod.quota_request())});
    }
  }
  return e;
}

// What a reader wants to know about the reclaim plan: the victims and why, or why nothing.
std::string ReclaimReason(const ReclaimPlanForPod& plan) {
  return plan.decision == ReclaimDecision::kEvict ? plan.explanation : plan.why.message();
}

// "w-0 -> n1, w-1 -> n2; victims: single team-b/b4, core gang team-b/job (team-b/j1, team-b/j0)"
std::string DescribePlan(const ReclaimPlan& plan) {
  if (!plan.found()) return plan.why.message();
  std::vector<std::string> placed, units;
  for (std::size_t i = 0; i < plan.members.size() && i < plan.nodes.size(); ++i)
    placed.push_back(fmt::format("{} -> {}", plan.members[i]->Key(), plan.nodes[i]));
  for (const PlannedUnit& u : plan.units) {
    std::vector<std::string> pods;
    for (const NormalizedPod* v : u.victims)
      pods.push_back(v->Key());
    units.push_back(u.group.empty() ? fmt::format("{} {}", VictimUnitKindName(u.kind), pods.front())
                                    : fmt::format("{} {} ({})", VictimUnitKindName(u.kind),
                                                  u.group.Display(), fmt::join(pods, ", ")));
  }
  return fmt::format(
      "{}; victims: {}", fmt::join(placed, ", "),
      units.empty() ? std::string("none") : fmt::format("{}", fmt::join(units, ", ")));
}

template <typename W>
void WriteResources(W& w, const char* key, const ResourceList& list) {
  w.Key(key);
  w.StartObject();
  for (const auto& [name, amount] : list.entries()) {
    w.Key(name.str().data(), static_cast<rapidjson::SizeType>(name.str().size()));
    w.String(FormatAmount(name, amount).c_str());
  }
  w.EndObject();
}

}  // namespace

std::string ExplainPodJson(const ClusterState& state, const NormalizedPod& pod,
                           const VictimOrder& order, const FairReclaimOptions& fair) {
  Explanation e = Explain(state, pod, order, fair);
  rapidjson::StringBuffer buffer;
  rapidjson::PrettyWriter<rapidjson::StringBuffer> w(buffer);
  w.StartObject();
  w.Key("pod");
  w.String(pod.Key().c_str());
  w.Key("priority");
  w.Int(pod.priority);
  WriteResources(w, "request", e.request);
  w.Key("quota");
  if (e.quota == nullptr) {
    w.Null();
  } else {
    w.StartObject();
    w.Key("name");
    w.String(e.quota->Key().c_str());
    WriteResources(w, "min", e.quota->min.value_or(ResourceList{}));
    WriteResources(w, "max", e.quota->max.value_or(ResourceList{}));
    WriteResources(w, "used", e.used);
    WriteResources(w, "reserved", e.reserved);
    WriteResources(w, "requestWithNominatedInNamespace", e.sums.in_eq);
    WriteResources(w, "requestWithAllNominated", e.sums.all);
    WriteResources(w, "clusterUsed", state.totals().used);
    WriteResources(w, "clusterMin", state.totals().min);
    w.Key("parent");
    if (e.quota->parent.empty()) {
      w.Null();
    } else {
      w.String(e.quota->parent.c_str());
    }
    // The arithmetic at every level: the quota, then each ancestor (used = the subtree's).
    w.Key("levels");
    w.StartArray();
    for (std::size_t i = 0; i < e.path.levels.size(); ++i) {
      const auto& level = e.path.levels[i];
      w.StartObject();
      w.Key("quota");
      w.String(level.quota->Key().c_str());
      w.Key("relation");
      w.String(i == 0 ? "self" : i == 1 ? "parent" : "ancestor");
      WriteResources(w, "min", level.quota->min.value_or(ResourceList{}));
      WriteResources(w, "max", level.quota->max.value_or(ResourceList{}));
      WriteResources(w, "used", state.ledger().NodeUsed(level.node));
      WriteResources(w, "requestWithNominatedInSubtree", e.path.InEq(level));
      w.EndObject();
    }
    w.EndArray();
    // Fair sharing at every level (docs/fair-sharing.md): the share and its fair value.
    w.Key("fairShare");
    w.StartArray();
    for (const auto& level : e.fair) {
      const NodeFairness& f = level.fairness;
      w.StartObject();
      w.Key("quota");
      w.String(level.quota.c_str());
      w.Key("weight");
      w.String(FormatWeight(f.weight_milli).c_str());
      WriteResources(w, "borrowed", f.borrowed);
      WriteResources(w, "pool", f.pool);
      w.Key("dominant");
      w.String(f.dominant.c_str());
      w.Key("share");
      w.String(f.share.ToString().c_str());
      w.Key("shareAfterThisPod");
      w.String(level.share_after.ToString().c_str());
      WriteResources(w, "demand", f.demand);
      WriteResources(w, "fairShare", f.fair_share);
      w.Key("fairValue");
      w.String(f.fair_value.ToString().c_str());
      w.EndObject();
    }
    w.EndArray();
    w.EndObject();
  }
  w.Key("admission");
  w.StartObject();
  w.Key("pass");
  w.Bool(e.feasibility.quota.ok());
  w.Key("reason");
  w.String(e.feasibility.quota.message().c_str());
  w.EndObject();
  w.Key("nodes");
  w.StartArray();
  for (const auto& name : e.feasibility.feasible) {
    w.StartObject();
    w.Key("name");
    w.String(name.c_str());
    w.Key("fits");
    w.Bool(true);
    w.EndObject();
  }
  for (const auto& [name, fit] : e.feasibility.failed) {
    w.StartObject();
    w.Key("name");
    w.String(name.c_str());
    w.Key("fits");
    w.Bool(false);
    w.Key("reason");
    w.String(fit.message().c_str());
    w.EndObject();
  }
  w.EndArray();
  w.Key("summary");
  w.String(e.feasibility.feasible.empty() ? SummarizeUnschedulable(e.feasibility).c_str() : "fits");
  w.Key("reclaim");
  w.StartObject();
  w.Key("decision");
  w.String(ReclaimDecisionName(e.reclaim.decision));
  w.Key("node");
  w.String(e.reclaim.node.c_str());
  w.Key("victims");
  w.StartArray();
  for (const NormalizedPod* v : e.reclaim.victims)
    w.String(v->Key().c_str());
  w.EndArray();
  w.Key("reason");
  w.String(ReclaimReason(e.reclaim).c_str());
  if (e.reclaim.decision == ReclaimDecision::kEvict) {
    w.Key("victimsFoundAt");
    w.String(e.reclaim.level.c_str());
  }
  w.EndObject();
  if (e.plan) {
    // docs/reclaim-plan.md#5-where-a-user-sees-it
    w.Key("plan");
    w.StartObject();
    w.Key("fairSharing");
    w.Bool(e.fair_sharing);
    w.Key("outcome");
    w.String(ReclaimPlanOutcomeName(e.plan->outcome));
    w.Key("approximate");
    w.Bool(e.plan->approximate());
    w.Key("steps");
    w.Int64(e.plan->steps);
    w.Key("reason");
    w.String(DescribePlan(*e.plan).c_str());
    w.Key("members");
    w.StartArray();
    for (std::size_t i = 0; i < e.plan->members.size(); ++i) {
      w.StartObject();
      w.Key("pod");
      w.String(e.plan->members[i]->Key().c_str());
      w.Key("node");
      w.String(i < e.plan->nodes.size() ? e.plan->nodes[i].c_str() : "");
      w.EndObject();
    }
    w.EndArray();
    w.Key("units");
    w.StartArray();
    for (const PlannedUnit& u : e.plan->units) {
      w.StartObject();
      w.Key("kind");
      w.String(VictimUnitKindName(u.kind));
      w.Key("gang");
      w.String(u.group.empty() ? "" : u.group.Display().c_str());
      w.Key("victims");
      w.StartArray();
      for (const NormalizedPod* v : u.victims)
        w.String(v->Key().c_str());
      w.EndArray();
      w.EndObject();
    }
    w.EndArray();
    w.EndObject();
  }
  w.Key("reclaimsInFlight");
  w.StartArray();
  for (const auto& [uid, node] : e.in_flight) {
    w.StartObject();
    w.Key("pod");
    const NormalizedPod* p = state.FindPod(uid);
    w.String(p ? p->Key().c_str() : uid.c_str());
    w.Key("node");
    w.String(node.c_str());
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  return std::string(buffer.GetString(), buffer.GetSize()) + "\n";
}

std::string ExplainPodText(const ClusterState& state, const NormalizedPod& pod,
                           const VictimOrder& order, const FairReclaimOptions& fair) {
  Explanation e = Explain(state, pod, order, fair);
  std::string out = fmt::format("pod {} (priority {}) requests {}\n", pod.Key(), pod.priority,
                                e.request.ToString());
  if (e.quota == nullptr) {
    out += fmt::format("quota: namespace {} has no ElasticQuota: no quota checks\n", pod.ns);
  } else {
    out += fmt::format("quota {}: min {{{}}} max {{{}}}\n", e.quota->Key(),
                       e.quota->min.value_or(ResourceList{}).ToString(),
                       e.quota->max.value_or(ResourceList{}).ToString());
    out += fmt::format("  used {{{}}} (of which reserved {{{}}})\n", e.used.ToString(),
                       e.reserved.ToString());
    out += fmt::format("  request + nominated in namespace {{{}}}; + other nominated {{{}}}\n",
                       e.sums.in_eq.ToString(), e.sums.all.ToString());
    out += fmt::format("  cluster: used {{{}}} min {{{}}}\n", state.totals().used.ToString(),
                       state.totals().min.ToString());
    for (const auto& level : e.fair) {
      const NodeFairness& f = level.fairness;
      out += fmt::format(
          "  fair share of {}: borrowed {{{}}} over pool {{{}}}{} / weight {} = share {}; after "
          "this pod {}; fairShare {{{}}} of demand {{{}}} = fair value {}\n",
          level.quota, f.borrowed.ToString(), f.pool.ToString(),
          f.dominant.empty() ? "" : fmt::format(" (dominant {})", f.dominant),
          FormatWeight(f.weight_milli), f.share.ToString(), level.share_after.ToString(),
          f.fair_share.ToString(), f.demand.ToString(), f.fair_value.ToString());
    }
  }
  out += fmt::format("admission: {}\n",
                     e.feasibility.quota.ok() ? "pass" : e.feasibility.quota.message());
  for (const auto& name : e.feasibility.feasible)
    out += fmt::format("  node {}: fits\n", name);
  for (const auto& [name, fit] : e.feasibility.failed) {
    out += fmt::format("  node {}: {}\n", name, fit.message());
  }
  out += fmt::format("reclaim: {}", ReclaimDecisionName(e.reclaim.decision));
  if (const std::string reason = ReclaimReason(e.reclaim); !reason.empty()) out += ": " + reason;
  out += "\n";
  if (e.reclaim.decision == ReclaimDecision::kEvict)
    out += fmt::format("  victims found at: {}\n", e.reclaim.level);
  if (e.plan) {
    out +=
        fmt::format("plan across nodes{}: {} ({} steps): {}\n",
                    e.fair_sharing ? " (fair sharing: reclaim between borrowers)" : "",
                    ReclaimPlanOutcomeName(e.plan->outcome), e.plan->steps, DescribePlan(*e.plan));
  }
  return out;
}

}  // namespace capext
