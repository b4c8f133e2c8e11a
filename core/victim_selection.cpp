#include "core/victim_selection.h"

#include <algorithm>
#include <deque>
#include <optional>
#include <string_view>

#include "core/name_index.h"
#include "core/node_fit.h"
#include "core/reasons.h"

namespace capext {

// Per preemptor: each namespace met resolved once (its quota, usage and governed resources), and
// the buffers of the what-if reused from node to node (their capacity stays: no allocation per
// node once warm).
struct VictimSelectionScratch {
  struct Namespace {
    const ElasticQuota* quota = nullptr;
    ResourceList used;                   // QuotaBook::Used, before any change
    std::vector<ResourceName> governed;  // kCapacityExtender: the names in min or max
  };
  NameIndex namespace_index;
  std::deque<Namespace> namespaces;  // by namespace_index id (stable addresses)
  AggregateTotals totals;            // the state's totals; `used` is reset for every node
  bool totals_ready = false;
  // What the cached parts were learnt from: a change of the state forgets them.
  const ClusterState* state = nullptr;
  uint64_t version = 0;

  // The what-if of the current node.
  // The node's requested amount of each resource the preemptor asks for (the only ones node fit
  // reads), with its allocatable.
  struct Tracked {
    ResourceName name;
    int64_t need = 0;
    int64_t allocatable = 0;
    int64_t requested = 0;
  };
  std::vector<Tracked> tracked;
  std::vector<std::pair<const Namespace*, ResourceList>> used;  // namespaces changed so far
  std::size_t used_count = 0;
  std::vector<const NormalizedPod*> pods, potential, ordered, violating, non_violating;

  // Forgets what was learnt from another state or an earlier version of it.
  void Bind(const ClusterState& s) {
    if (state == &s && version == s.version()) return;
    namespace_index = NameIndex();
    namespaces.clear();
    totals_ready = false;
    state = &s;
    version = s.version();
  }

  const Namespace& NamespaceOf(const ClusterState& s, const std::string& ns) {
    const int64_t id = namespace_index.Find(ns);
    if (id >= 0) return namespaces[static_cast<std::size_t>(id)];
    Namespace& info = namespaces.emplace_back();
    info.quota = s.QuotaFor(ns);
    if (info.quota != nullptr) {
      info.used = s.Used(ns);
      for (const auto* list : {&info.quota->min, &info.quota->max}) {
        if (!list->has_value()) continue;
        for (const auto& [name, amount] : (*list)->entries()) {
          if (Governs(s.semantics(), *info.quota, name) &&
              std::find(info.governed.begin(), info.governed.end(), name) == info.governed.end()) {
            info.governed.push_back(name);
          }
        }
      }
    }
    namespace_index.Insert(ns, static_cast<uint32_t>(namespaces.size() - 1));
    return info;
  }
};

namespace {

bool Contains(const std::vector<ResourceName>& names, ResourceName name) {
  for (const ResourceName n : names) {
    if (n == name) return true;
  }
  return false;
}

// A private copy of what removing or restoring pods changes: the node's requested resources and
// pod count, the usage of every quota touched, and the cluster-wide totals. Lives in the scratch
// buffers; nothing is allocated per change.
class WhatIf {
 public:
  WhatIf(const ClusterState& state, const PreemptorContext& preemptor, const NodeInfo& node,
         VictimSelectionScratch& scratch)
      : state_(state), preemptor_(*preemptor.pod), node_(node.node), s_(scratch) {
    if (!s_.totals_ready) {
      s_.totals = state.totals();
      s_.totals_ready = true;
    } else {
      s_.totals.used = state.totals().used;
    }
    s_.used_count = 0;
    pod_count_ = node.usage->pod_count;
    const ResourceList* requested = &node.usage->requested;
    ResourceList with_nominations;
    if (state.HasNominations()) {
      with_nominations = *requested;
      AddNominationsAgainst(state, preemptor_, node.node.name, &with_nominations, &pod_count_);
      requested = &with_nominations;
    }
    s_.tracked.clear();
    for (const auto& [name, amount] : preemptor_.requests.entries()) {
      if (amount <= 0 || name == kPodsName) continue;
      s_.tracked.push_back({name, amount, node_.allocatable.Get(name), requested->Get(name)});
    }
    max_pods_ = node_.allocatable.Find(kPodsName);
  }

  // `ns` is the pod's namespace (NamespaceOf(pod.ns)).
  void Remove(const NormalizedPod& pod, const VictimSelectionScratch::Namespace& ns) {
    Change(pod, ns, -1);
  }
  void Restore(const NormalizedPod& pod, const VictimSelectionScratch::Namespace& ns) {
    Change(pod, ns, +1);
  }

  // CheckNodeResources(preemptor, node, requested with every change, pod count).ok(), on the
  // tracked resources only (the others are not requested, so they cannot fail).
  bool Fits() const {
    if (max_pods_ && pod_count_ + 1 > *max_pods_) return false;
    for (const auto& t : s_.tracked) {
      if (t.need > SaturatingSub(t.allocatable, t.requested)) return false;
    }
    return true;
  }

  // The usage of `ns`'s quota with every change applied.
  const ResourceList& UsedOf(const VictimSelectionScratch::Namespace& ns) const {
    for (std::size_t i = 0; i < s_.used_count; ++i) {
      if (s_.used[i].first == &ns) return s_.used[i].second;
    }
    return ns.used;
  }
  const AggregateTotals& totals() const { return s_.totals; }

 private:
  // The same arithmetic as adding a delta list built from ±request (saturating, per name).
  void Change(const NormalizedPod& pod, const VictimSelectionScratch::Namespace& ns, int sign) {
    for (auto& t : s_.tracked) {
      const int64_t amount = pod.requests.Get(t.name);
      t.requested = SaturatingAdd(t.requested, sign > 0 ? amount : SaturatingSub(0, amount));
    }
    pod_count_ += sign;
    if (ns.quota == nullptr) return;
    ResourceList* used = nullptr;
    for (std::size_t i = 0; i < s_.used_count; ++i) {
      if (s_.used[i].first == &ns) used = &s_.used[i].second;
    }
    if (used == nullptr) {
      if (s_.used_count == s_.used.size()) s_.used.emplace_back();
      s_.used[s_.used_count].first = &ns;
      s_.used[s_.used_count].second = ns.used;
      used = &s_.used[s_.used_count++].second;
    }
    const QuotaSemantics semantics = state_.semantics();
    for (const auto& [name, amount] : pod.quota_request().entries()) {
      const int64_t delta = sign > 0 ? amount : SaturatingSub(0, amount);
      used->AddTo(name, delta);
      if (semantics == QuotaSemantics::kSchedulerPlugins || Contains(ns.governed, name)) {
        s_.totals.used.AddTo(name, delta);
      }
    }
  }

  const ClusterState& state_;
  const NormalizedPod& preemptor_;
  const Node& node_;
  VictimSelectionScratch& s_;
  int32_t pod_count_ = 0;
  std::optional<int64_t> max_pods_;
};

bool QuotaFails(const ClusterState& state, const PreemptorContext& p, const WhatIf& what_if,
                const VictimSelectionScratch::Namespace& own, const ResourceList& in_eq,
                const ResourceList& all) {
  if (p.quota == nullptr) return false;
  return !QuotaCheckPasses(state.semantics(), *p.quota, what_if.UsedOf(own), what_if.totals(),
                           in_eq, all);
}

}  // namespace

PreemptorContext MakePreemptorContext(const ClusterState& state, const NormalizedPod& preemptor) {
  PreemptorContext ctx;
  ctx.pod = &preemptor;
  ctx.quota = state.QuotaFor(preemptor.ns);
  ctx.sums = ComputeNominatedSums(state, preemptor);
  ctx.scratch = std::make_shared<VictimSelectionScratch>();
  if (ctx.quota != nullptr) {
    ctx.more_than_min =
        !ExceedsMin(state.semantics(), *ctx.quota, state.Used(preemptor.ns), ctx.sums.in_eq)
             .empty();
  }
  return ctx;
}

void SplitByPdbViolation(const std::vector<PodDisruptionBudget>& pdbs,
                         const std::vector<const NormalizedPod*>& pods,
                         std::vector<const NormalizedPod*>* violating,
                         std::vector<const NormalizedPod*>* non_violating) {
  if (pdbs.empty()) {
    non_violating->insert(non_violating->end(), pods.begin(), pods.end());
    return;
  }
  std::vector<int32_t> allowed;
  allowed.reserve(pdbs.size());
  for (const auto& pdb : pdbs)
    allowed.push_back(pdb.disruptions_allowed);
  for (const NormalizedPod* pod : pods) {
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
  const NormalizedPod& preemptor = *p.pod;

  if (Status fixed = CheckNodeStatic(preemptor, node.node); !fixed.ok()) {
    result.why_not = std::move(fixed);
    return result;
  }

  std::shared_ptr<VictimSelectionScratch> own_scratch;
  if (p.scratch == nullptr) own_scratch = std::make_shared<VictimSelectionScratch>();
  VictimSelectionScratch& s = p.scratch != nullptr ? *p.scratch : *own_scratch;
  s.Bind(state);

  std::vector<const NormalizedPod*>& pods = s.pods;
  pods.assign(node.usage->pods.begin(), node.usage->pods.end());
  // Least important first.
  std::stable_sort(pods.begin(), pods.end(), [&](const NormalizedPod* a, const NormalizedPod* b) {
    return more_important(*b, *a);
  });

  const VictimSelectionScratch::Namespace& own = s.NamespaceOf(state, preemptor.ns);
  WhatIf what_if(state, p, node, s);
  std::vector<const NormalizedPod*>& potential = s.potential;
  potential.clear();
  for (const NormalizedPod* x : pods) {
    const VictimSelectionScratch::Namespace& xns = s.NamespaceOf(state, x->ns);
    const bool same_namespace = &xns == &own;  // one entry per namespace name
    bool take = false;
    if (p.quota != nullptr) {
      if (xns.quota == nullptr) continue;  // pods of namespaces without a quota are never victims
      if (p.more_than_min) {
        take = same_namespace && x->priority < preemptor.priority;
      } else {
        // Re-evaluated after each removal: a quota stops giving victims once back within min.
        take = !same_namespace && IsBorrowing(state.semantics(), *xns.quota, what_if.UsedOf(xns));
      }
    } else {
      take = xns.quota == nullptr && x->priority < preemptor.priority;
    }
    if (take) {
      potential.push_back(x);
      what_if.Remove(*x, xns);
    }
  }
  if (potential.empty()) {
    result.why_not = Status::Unresolvable(std::string(reasons::kNoVictimsOnNode));
    return result;
  }

  auto fits = [&] { return what_if.Fits(); };
  if (!fits()) {
    result.why_not = Status::Unresolvable(std::string(reasons::kDoesNotFitAfterVictims));
    return result;
  }
  const ResourceList& request = preemptor.quota_request();
  if (QuotaFails(state, p, what_if, own, request, request)) {
    result.why_not = Status::Unresolvable(std::string(reasons::kQuotaFailsAfterVictims));
    return result;
  }

  // Reprieve: most important first, PDB-protected pods first; put each back unless the
  // preemptor then no longer fits the node or its quota (with the nominated sums).
  std::vector<const NormalizedPod*>& ordered = s.ordered;
  ordered.assign(potential.begin(), potential.end());
  std::stable_sort(
      ordered.begin(), ordered.end(),
      [&](const NormalizedPod* a, const NormalizedPod* b) { return more_important(*a, *b); });
  s.violating.clear();
  s.non_violating.clear();
  SplitByPdbViolation(state.pdbs(), ordered, &s.violating, &s.non_violating);

  result.victims.reserve(potential.size());
  auto reprieve = [&](const NormalizedPod* x) {
    const VictimSelectionScratch::Namespace& xns = s.NamespaceOf(state, x->ns);
    what_if.Restore(*x, xns);
    if (!fits() || QuotaFails(state, p, what_if, own, p.sums.in_eq, p.sums.all)) {
      what_if.Remove(*x, xns);
      result.victims.push_back(x);
      return false;
    }
    return true;
  };
  for (const NormalizedPod* x : s.violating) {
    if (!reprieve(x)) ++result.pdb_violations;
  }
  for (const NormalizedPod* x : s.non_violating)
    reprieve(x);

  std::stable_sort(
      result.victims.begin(), result.victims.end(),
      [&](const NormalizedPod* a, const NormalizedPod* b) { return more_important(*a, *b); });
  result.candidate = !result.victims.empty();
  if (!result.candidate)
    result.why_not = Status::Unresolvable(std::string(reasons::kNoVictimsOnNode));
  return result;
}

}  // namespace capext
