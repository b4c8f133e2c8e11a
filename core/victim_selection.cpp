#include "core/victim_selection.h"

#include <algorithm>

#include "core/node_fit.h"
#include "core/reasons.h"

namespace capext {
namespace {

// A private copy of what removing or restoring pods changes: the node's requested resources and
// pod count, the usage of every quota touched, and the cluster-wide totals.
class WhatIf {
 public:
  WhatIf(const ClusterState& state, const PreemptorContext& preemptor, const NodeInfo& node)
      : state_(state), totals_(state.quotas().totals()) {
    requested_ = node.usage->requested;
    pod_count_ = node.usage->pod_count;
    AddNominationsAgainst(state, *preemptor.pod, node.node.name, &requested_, &pod_count_);
  }

  void Remove(const Pod& pod) { Change(pod, -1); }
  void Restore(const Pod& pod) { Change(pod, +1); }

  // The usage of `ns`'s quota with every change applied.
  ResourceList UsedOf(const std::string& ns) const {
    for (const auto& [name, used] : used_) {
      if (name == ns) return used;
    }
    return state_.quotas().Used(ns);
  }
  const AggregateTotals& totals() const { return totals_; }
  const ResourceList& requested() const { return requested_; }
  int32_t pod_count() const { return pod_count_; }

 private:
  void Change(const Pod& pod, int sign) {
    ResourceList node_delta;
    if (sign > 0) {
      node_delta = pod.requests;
    } else {
      node_delta.Subtract(pod.requests);
    }
    requested_.Add(node_delta);
    pod_count_ += sign;
    const ElasticQuota* quota = state_.quotas().QuotaFor(pod.ns);
    if (quota == nullptr) return;
    ResourceList delta;
    if (sign > 0) {
      delta = state_.QuotaRequest(pod);
    } else {
      delta.Subtract(state_.QuotaRequest(pod));
    }
    ResourceList* used = nullptr;
    for (auto& [name, u] : used_) {
      if (name == pod.ns) used = &u;
    }
    if (used == nullptr) {
      used_.emplace_back(pod.ns, state_.quotas().Used(pod.ns));
      used = &used_.back().second;
    }
    used->Add(delta);
    ApplyUsageDelta(state_.semantics(), *quota, delta, &totals_);
  }

  const ClusterState& state_;
  ResourceList requested_;
  int32_t pod_count_ = 0;
  std::vector<std::pair<std::string, ResourceList>> used_;  // few quotas per node
  AggregateTotals totals_;
};

bool QuotaFails(const ClusterState& state, const PreemptorContext& p, const WhatIf& what_if,
                const ResourceList& in_eq, const ResourceList& all) {
  if (p.quota == nullptr) return false;
  return !CheckQuotaWith(state.semantics(), *p.pod, *p.quota, what_if.UsedOf(p.pod->ns),
                         what_if.totals(), in_eq, all, p.quota_request)
              .ok();
}

}  // namespace

PreemptorContext MakePreemptorContext(const ClusterState& state, const Pod& preemptor) {
  PreemptorContext ctx;
  ctx.pod = &preemptor;
  ctx.quota = state.quotas().QuotaFor(preemptor.ns);
  ctx.quota_request = state.QuotaRequest(preemptor);
  ctx.sums = ComputeNominatedSums(state, preemptor);
  if (ctx.quota != nullptr) {
    ctx.more_than_min = !ExceedsMin(state.semantics(), *ctx.quota,
                                    state.quotas().Used(preemptor.ns), ctx.sums.in_eq)
                             .empty();
  }
  return ctx;
}

void SplitByPdbViolation(const std::vector<PodDisruptionBudget>& pdbs,
                         const std::vector<const Pod*>& pods, std::vector<const Pod*>* violating,
                         std::vector<const Pod*>* non_violating) {
  std::vector<int32_t> allowed;
  allowed.reserve(pdbs.size());
  for (const auto& pdb : pdbs)
    allowed.push_back(pdb.disruptions_allowed);
  for (const Pod* pod : pods) {
    bool violated = false;
    if (!pod->labels.empty()) {
      for (std::size_t i = 0; i < pdbs.size(); ++i) {
        const auto& pdb = pdbs[i];
        if (!pdb.Selects(*pod)) continue;
        if (std::find(pdb.disrupted_pods.begin(), pdb.disrupted_pods.end(), pod->name) !=
            pdb.disrupted_pods.end()) {
          continue;
        }
        if (--allowed[i] < 0) violated = true;
      }
    }
    (violated ? violating : non_violating)->push_back(pod);
  }
}

NodeVictims SelectVictimsOnNode(const ClusterState& state, const PreemptorContext& p,
                                const NodeInfo& node, const MoreImportantFn& more_important) {
  NodeVictims result;
  result.node = node.node.name;
  const Pod& preemptor = *p.pod;
  const QuotaBook& book = state.quotas();

  NodeFitResult fixed = CheckNodeStatic(preemptor, node.node);
  if (!fixed.ok()) {
    result.reason = fixed.Reason();
    return result;
  }

  std::vector<const Pod*> pods = state.PodsOnNode(node.node.name);
  // Least important first.
  std::stable_sort(pods.begin(), pods.end(),
                   [&](const Pod* a, const Pod* b) { return more_important(*b, *a); });

  WhatIf what_if(state, p, node);
  std::vector<const Pod*> potential;
  for (const Pod* x : pods) {
    const ElasticQuota* xq = book.QuotaFor(x->ns);
    bool take = false;
    if (p.quota != nullptr) {
      if (xq == nullptr) continue;  // pods of namespaces without a quota are never victims
      if (p.more_than_min) {
        take = x->ns == preemptor.ns && x->priority < preemptor.priority;
      } else {
        // Re-evaluated after each removal: a quota stops giving victims once back within min.
        take = x->ns != preemptor.ns && IsBorrowing(state.semantics(), *xq, what_if.UsedOf(x->ns));
      }
    } else {
      take = xq == nullptr && x->priority < preemptor.priority;
    }
    if (take) {
      potential.push_back(x);
      what_if.Remove(*x);
    }
  }
  if (potential.empty()) {
    result.reason = std::string(reasons::kNoVictimsOnNode);
    return result;
  }

  auto fits = [&] {
    return CheckNodeResources(preemptor, node.node, what_if.requested(), what_if.pod_count()).ok();
  };
  if (!fits()) {
    result.reason = std::string(reasons::kDoesNotFitAfterVictims);
    return result;
  }
  if (QuotaFails(state, p, what_if, p.quota_request, p.quota_request)) {
    result.reason = std::string(reasons::kQuotaFailsAfterVictims);
    return result;
  }

  // Reprieve: most important first, PDB-protected pods first; put each back unless the
  // preemptor then no longer fits the node or its quota (with the nominated sums).
  std::vector<const Pod*> ordered = potential;
  std::stable_sort(ordered.begin(), ordered.end(),
                   [&](const Pod* a, const Pod* b) { return more_important(*a, *b); });
  std::vector<const Pod*> violating, non_violating;
  SplitByPdbViolation(state.pdbs(), ordered, &violating, &non_violating);

  auto reprieve = [&](const Pod* x) {
    what_if.Restore(*x);
    if (!fits() || QuotaFails(state, p, what_if, p.sums.in_eq, p.sums.all)) {
      what_if.Remove(*x);
      result.victims.push_back(x);
      return false;
    }
    return true;
  };
  for (const Pod* x : violating) {
    if (!reprieve(x)) ++result.pdb_violations;
  }
  for (const Pod* x : non_violating)
    reprieve(x);

  std::stable_sort(result.victims.begin(), result.victims.end(),
                   [&](const Pod* a, const Pod* b) { return more_important(*a, *b); });
  result.candidate = !result.victims.empty();
  if (!result.candidate) result.reason = std::string(reasons::kNoVictimsOnNode);
  return result;
}

}  // namespace capext
