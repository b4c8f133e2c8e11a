#include "core/victim_selection.h"

#include <algorithm>
#include <deque>
#include <optional>
#include <string_view>

#include "core/name_index.h"
#include "core/node_fit.h"
#include "core/reasons.h"

namespace capext {

// Per preemptor: each namespace met resolved once (its quota, tree leaf, victim scope and the
// resources its root counts in the cluster-wide sums), and the buffers of the what-if reused from
// node to node (their capacity stays: no allocation per node once warm).
struct VictimSelectionScratch {
  struct Namespace {
    const ElasticQuota* quota = nullptr;
    int leaf = -1;                       // its leaf in the quota tree
    const ElasticQuota* root = nullptr;  // the root quota over it
    VictimRule::Scope scope;             // for the current preemptor
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
  std::vector<std::pair<int, ResourceList>> used;  // tree nodes changed so far, their usage
  std::size_t used_count = 0;
  std::vector<const NormalizedPod*> potential, ordered, violating, non_violating;
  struct Entry {
    const NormalizedPod* pod;
    const Namespace* ns;
  };
  std::vector<Entry> entries;

  // Forgets what was learnt from another state or an earlier version of it.
  void Bind(const ClusterState& s) {
    if (state == &s && version == s.version()) return;
    namespace_index = NameIndex();
    namespaces.clear();
    totals_ready = false;
    state = &s;
    version = s.version();
  }

  const Namespace& NamespaceOf(const ClusterState& s, const VictimRule& rule,
                               const std::string& ns) {
    const int64_t id = namespace_index.Find(ns);
    if (id >= 0) return namespaces[static_cast<std::size_t>(id)];
    Namespace& info = namespaces.emplace_back();
    info.quota = s.QuotaFor(ns);
    if (info.quota != nullptr) {
      const QuotaTree& tree = s.ledger().tree();
      info.leaf = tree.LeafOf(ns);
      info.root = &tree.quota(tree.RootOf(info.leaf));
    }
    info.scope = rule.ScopeOf(ns);
    namespace_index.Insert(ns, static_cast<uint32_t>(namespaces.size() - 1));
    return info;
  }
};

namespace {

// A private copy of what removing or restoring pods changes: the node's requested resources and
// pod count, the usage of every quota tree node touched, and the cluster-wide totals. Lives in
// the scratch buffers; nothing is allocated per change once warm.
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

  // The usage of a quota tree node with every change applied.
  const ResourceList& UsedOf(int node) const {
    for (std::size_t i = 0; i < s_.used_count; ++i) {
      if (s_.used[i].first == node) return s_.used[i].second;
    }
    return state_.ledger().NodeUsed(node);
  }
  const AggregateTotals& totals() const { return s_.totals; }

 private:
  ResourceList* MutableUsed(int node) {
    for (std::size_t i = 0; i < s_.used_count; ++i) {
      if (s_.used[i].first == node) return &s_.used[i].second;
    }
    if (s_.used_count == s_.used.size()) s_.used.emplace_back();
    s_.used[s_.used_count].first = node;
    s_.used[s_.used_count].second = state_.ledger().NodeUsed(node);
    return &s_.used[s_.used_count++].second;
  }

  // The same arithmetic as adding a delta list built from ±request (saturating, per name).
  void Change(const NormalizedPod& pod, const VictimSelectionScratch::Namespace& ns, int sign) {
    for (auto& t : s_.tracked) {
      const int64_t amount = pod.requests.Get(t.name);
      t.requested = SaturatingAdd(t.requested, sign > 0 ? amount : SaturatingSub(0, amount));
    }
    pod_count_ += sign;
    if (ns.quota == nullptr) return;
    const QuotaTree& tree = state_.ledger().tree();
    const QuotaSemantics semantics = state_.semantics();
    // docs/devices.md#5-a-shared-claim-is-charged-once, "Victims": the devices of a claim another
    // holder keeps are not freed.
    const DeviceDemand* devices = pod.device_demand();
    const bool kept = devices != nullptr && !devices->kept.empty();
    ResourceList freed;
    if (kept) {
      freed = pod.quota_request();
      freed.Subtract(devices->kept);
    }
    const ResourceList& change = kept ? freed : pod.quota_request();
    for (int node = ns.leaf; node >= 0; node = tree.parent(node)) {
      ResourceList* used = MutableUsed(node);
      for (const auto& [name, amount] : change.entries())
        used->AddTo(name, sign > 0 ? amount : SaturatingSub(0, amount));
    }
    for (const auto& [name, amount] : change.entries()) {
      if (CountsInTotals(semantics, *ns.root, name))
        s_.totals.used.AddTo(name, sign > 0 ? amount : SaturatingSub(0, amount));
    }
  }

  const ClusterState& state_;
  const NormalizedPod& preemptor_;
  const Node& node_;
  VictimSelectionScratch& s_;
  int32_t pod_count_ = 0;
  std::optional<int64_t> max_pods_;
};

bool QuotaFails(const ClusterState& state, const AdmissionPath& path, const WhatIf& what_if) {
  return !QuotaPasses(
      state.semantics(), path,
      [&](int node) -> const ResourceList& { return what_if.UsedOf(node); }, what_if.totals());
}

// The same path with the request alone in place of every nominated sum.
AdmissionPath WithRequestAlone(AdmissionPath path, const ResourceList& request) {
  path.sums.in_eq = request;
  path.sums.all = request;
  for (auto& r : path.extra_in_eq)
    r = request;
  return path;
}

}  // namespace

PreemptorContext MakePreemptorContext(const ClusterState& state, const NormalizedPod& preemptor) {
  PreemptorContext ctx;
  ctx.pod = &preemptor;
  ctx.quota = state.QuotaFor(preemptor.ns);
  ctx.path = MakeAdmissionPath(state, preemptor);
  ctx.alone = WithRequestAlone(ctx.path, preemptor.quota_request());
  ctx.rule = std::make_shared<VictimRule>(state, preemptor, ctx.path);
  ctx.more_than_min = ctx.rule->more_than_min();
  ctx.scratch = std::make_shared<VictimSelectionScratch>();
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

  const VictimRule& rule = *p.rule;
  auto scope_of = [&](const NormalizedPod* x) -> const VictimSelectionScratch::Namespace& {
    return s.NamespaceOf(state, rule, x->ns);
  };
  // The node's pods with their namespace (resolved once), nearest in the quota tree first, then
  // least important first.
  auto& entries = s.entries;
  entries.clear();
  for (const NormalizedPod* x : node.usage->pods)
    entries.push_back({x, &scope_of(x)});
  std::stable_sort(entries.begin(), entries.end(), [&](const auto& a, const auto& b) {
    const int da = a.ns->scope.distance, db = b.ns->scope.distance;
    if (da != db) return da < db;
    return more_important(*b.pod, *a.pod);
  });

  WhatIf what_if(state, p, node, s);
  auto used_of = [&](int tree_node) -> const ResourceList& { return what_if.UsedOf(tree_node); };
  std::vector<const NormalizedPod*>& potential = s.potential;
  potential.clear();
  for (const auto& [x, xns_ptr] : entries) {
    const VictimSelectionScratch::Namespace& xns = *xns_ptr;
    const VictimRule::Scope& scope = xns.scope;
    if (!scope.any || (scope.lower_priority_only && x->priority >= preemptor.priority)) continue;
    // Re-evaluated after each removal: a side stops giving victims once any level of it is back
    // within its min.
    if (scope.recheck && !rule.SideBorrowing(scope, used_of)) continue;
    potential.push_back(x);
    result.distance = std::max(result.distance, scope.distance);
    what_if.Remove(*x, xns);
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
  if (QuotaFails(state, p.alone, what_if)) {
    result.why_not = Status::Unresolvable(std::string(reasons::kQuotaFailsAfterVictims));
    return result;
  }

  // Reprieve: PDB-protected pods first, and within each group the farthest in the tree first,
  // then the most important; put each back unless the preemptor then no longer fits the node or
  // its quotas (with the nominated sums).
  std::vector<const NormalizedPod*>& ordered = s.ordered;
  ordered.assign(potential.begin(), potential.end());
  std::stable_sort(ordered.begin(), ordered.end(),
                   [&](const NormalizedPod* a, const NormalizedPod* b) {
                     const int da = scope_of(a).scope.distance, db = scope_of(b).scope.distance;
                     if (da != db) return da > db;
                     return more_important(*a, *b);
                   });
  s.violating.clear();
  s.non_violating.clear();
  SplitByPdbViolation(state.pdbs(), ordered, &s.violating, &s.non_violating);

  result.victims.reserve(potential.size());
  auto reprieve = [&](const NormalizedPod* x) {
    const VictimSelectionScratch::Namespace& xns = scope_of(x);
    what_if.Restore(*x, xns);
    if (!fits() || QuotaFails(state, p.path, what_if)) {
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
  result.distance = 0;
  for (const NormalizedPod* v : result.victims)
    result.distance = std::max(result.distance, scope_of(v).scope.distance);
  if (!result.candidate)
    result.why_not = Status::Unresolvable(std::string(reasons::kNoVictimsOnNode));
  return result;
}

}  // namespace capext
