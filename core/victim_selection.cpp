#include "core/victim_selection.h"

#include <algorithm>
#include <deque>
#include <optional>
#include <string_view>

#include "core/group_quota.h"
#include "core/name_index.h"
#include "core/node_fit.h"
#include "core/reasons.h"
#include "core/victim_unit.h"

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
  std::vector<Entry> potential_entries;  // `potential` with their namespaces

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
    const QuotaTree& tree = s.ledger().tree();  // its leaf: one name lookup, not three
    info.leaf = tree.LeafOf(ns);
    if (info.leaf >= 0) {
      info.quota = &tree.quota(tree.is_own(info.leaf) ? tree.parent(info.leaf) : info.leaf);
      info.root = &tree.quota(tree.RootOf(info.leaf));
    }
    info.scope = rule.ScopeOfLeaf(info.leaf);
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

  // `on_node`: the pod is on this node (a group core's members may be on others: then only its
  // quota usage changes).
  void Remove(const NormalizedPod& pod, const VictimSelectionScratch::Namespace& ns,
              bool on_node = true) {
    Change(pod, ns, -1, on_node);
  }
  void Restore(const NormalizedPod& pod, const VictimSelectionScratch::Namespace& ns,
               bool on_node = true) {
    Change(pod, ns, +1, on_node);
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
  void Change(const NormalizedPod& pod, const VictimSelectionScratch::Namespace& ns, int sign,
              bool on_node) {
    if (on_node) {
      for (auto& t : s_.tracked) {
        const int64_t amount = pod.requests.Get(t.name);
        t.requested = SaturatingAdd(t.requested, sign > 0 ? amount : SaturatingSub(0, amount));
      }
      pod_count_ += sign;
    }
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

// Whether `pod` (bound or reserved) is on `node`.
bool IsOnNode(const ClusterState& state, const NormalizedPod& pod, const std::string& node) {
  if (pod.IsBound()) return pod.node_name == node;
  const Reservation* r = state.FindReservation(pod.store_key());
  return r != nullptr && r->node == node;
}

// SelectVictimsOnNode's steps 2-4 taking units (victim_unit.h) instead of pods: a unit is taken
// whole, each of its pods passing the victim rule (and the side's re-check) in turn, or not at
// all; the reprieve puts units back whole, most important first.
NodeVictims SelectVictimUnits(const ClusterState& state, const PreemptorContext& p,
                              const NodeInfo& node, const VictimOrder& victim_order,
                              VictimSelectionScratch& s, WhatIf& what_if) {
  NodeVictims result;
  result.node = node.node.name;
  const NormalizedPod& preemptor = *p.pod;
  const VictimRule& rule = *p.rule;
  auto scope_of = [&](const NormalizedPod* x) -> const VictimSelectionScratch::Namespace& {
    return s.NamespaceOf(state, rule, x->ns);
  };
  auto used_of = [&](int tree_node) -> const ResourceList& { return what_if.UsedOf(tree_node); };
  struct Ranked {
    int distance;
    VictimUnit unit;
  };
  std::vector<Ranked> units;
  std::vector<GroupKey> cores;
  for (const NormalizedPod* x : node.usage->pods) {
    VictimUnit unit = VictimUnitOf(state, *x);
    if (unit.kind == VictimUnitKind::kCore) {
      if (std::find(cores.begin(), cores.end(), unit.group) != cores.end()) continue;
      cores.push_back(unit.group);
    }
    units.push_back({scope_of(x).scope.distance, std::move(unit)});
  }
  std::stable_sort(units.begin(), units.end(), [&](const Ranked& a, const Ranked& b) {
    if (a.distance != b.distance) return a.distance < b.distance;
    return VictimUnitBefore(a.unit, b.unit, victim_order);
  });
  const std::string& here = node.node.name;
  std::vector<const NormalizedPod*> removed;  // every pod taken so far
  std::vector<std::vector<const NormalizedPod*>> taken_units;
  std::vector<GroupKey> taken_groups;  // per taken unit: its gang (empty for a single pod)
  for (const Ranked& ranked : units) {
    std::vector<const NormalizedPod*> taken;
    bool whole = true;
    for (const NormalizedPod* y : ranked.unit.pods) {
      if (std::find(removed.begin(), removed.end(), y) != removed.end()) continue;
      if (y == &preemptor || y->store_key() == preemptor.store_key()) continue;  // own hold
      const auto& yns = scope_of(y);
      const VictimRule::Scope& scope = yns.scope;
      if (!scope.any || (scope.lower_priority_only && y->priority >= preemptor.priority) ||
          (scope.recheck && !rule.SideBorrowing(scope, used_of))) {
        whole = false;
        break;
      }
      what_if.Remove(*y, yns, IsOnNode(state, *y, here));
      taken.push_back(y);
    }
    if (!whole) {
      for (auto it = taken.rbegin(); it != taken.rend(); ++it)
        what_if.Restore(**it, scope_of(*it), IsOnNode(state, **it, here));
      continue;
    }
    if (taken.empty()) continue;
    removed.insert(removed.end(), taken.begin(), taken.end());
    if (ranked.unit.kind == VictimUnitKind::kCore) {
      // The core is the group whole: its surplus members taken before it join it, so the
      // reprieve never puts one back alone (a group running below its minMember).
      for (std::size_t j = taken_units.size(); j-- > 0;) {
        if (taken_groups[j] != ranked.unit.group) continue;
        taken.insert(taken.begin(), taken_units[j].begin(), taken_units[j].end());
        taken_units.erase(taken_units.begin() + static_cast<std::ptrdiff_t>(j));
        taken_groups.erase(taken_groups.begin() + static_cast<std::ptrdiff_t>(j));
      }
    }
    taken_units.push_back(std::move(taken));
    taken_groups.push_back(ranked.unit.group);
  }
  if (removed.empty()) {
    result.why_not = Status::Unresolvable(std::string(reasons::kNoVictimsOnNode));
    return result;
  }
  if (!what_if.Fits()) {
    result.why_not = Status::Unresolvable(std::string(reasons::kDoesNotFitAfterVictims));
    return result;
  }
  if (QuotaFails(state, p.alone, what_if)) {
    result.why_not = Status::Unresolvable(std::string(reasons::kQuotaFailsAfterVictims));
    return result;
  }
  // Reprieve: the units most important first (the reverse of the removal order), those with a
  // PDB-violating pod before the others.
  std::reverse(taken_units.begin(), taken_units.end());
  std::vector<const NormalizedPod*> flat, violating, non_violating;
  for (const auto& unit : taken_units) {
    for (const NormalizedPod* y : unit) {
      if (!HeldWithoutNode(state, *y)) flat.push_back(y);
    }
  }
  SplitByPdbViolation(state.pdbs(), flat, &violating, &non_violating);
  auto violations_in = [&](const std::vector<const NormalizedPod*>& unit) {
    int32_t n = 0;
    for (const NormalizedPod* y : unit)
      n += std::find(violating.begin(), violating.end(), y) != violating.end() ? 1 : 0;
    return n;
  };
  std::vector<bool> kept(taken_units.size(), false);
  auto reprieve = [&](std::size_t i) {
    const std::vector<const NormalizedPod*>& unit = taken_units[i];
    for (const NormalizedPod* y : unit)
      what_if.Restore(*y, scope_of(y), IsOnNode(state, *y, here));
    if (what_if.Fits() && !QuotaFails(state, p.path, what_if)) return;
    for (const NormalizedPod* y : unit)
      what_if.Remove(*y, scope_of(y), IsOnNode(state, *y, here));
    kept[i] = true;
    result.pdb_violations += violations_in(unit);
  };
  for (std::size_t i = 0; i < taken_units.size(); ++i) {
    if (violations_in(taken_units[i]) > 0) reprieve(i);
  }
  for (std::size_t i = 0; i < taken_units.size(); ++i) {
    if (violations_in(taken_units[i]) == 0) reprieve(i);
  }
  // Unit by unit, the most important unit first, its pods most important first: the reclaim
  // evicts in reverse, so the cheapest unit goes first and a core's pods go one after another
  // (docs/workloads.md#5-victim-units-and-their-order).
  for (std::size_t i = 0; i < taken_units.size(); ++i) {
    if (!kept[i]) continue;
    const std::size_t first = result.victims.size();
    for (const NormalizedPod* y : taken_units[i]) {
      if (!HeldWithoutNode(state, *y)) {
        result.victims.push_back(y);
      } else if (const QuotaHold* hold = state.FindHold(y->store_key())) {
        result.released.push_back({y, hold->held_ms});
      }
    }
    std::stable_sort(result.victims.begin() + static_cast<std::ptrdiff_t>(first),
                     result.victims.end(), [&](const NormalizedPod* a, const NormalizedPod* b) {
                       return victim_order.KeptOver(*a, *b);
                     });
  }
  result.candidate = !result.victims.empty();
  for (const NormalizedPod* v : result.victims)
    result.distance = std::max(result.distance, scope_of(v).scope.distance);
  if (!result.candidate)
    result.why_not = Status::Unresolvable(std::string(reasons::kNoVictimsOnNode));
  return result;
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
  // A pending member of a starting group is within its min only if the group's need is
  // (docs/workloads.md#5-victim-units-and-their-order): its path carries the need's summed request.
  int32_t need = 0;
  const std::vector<const NormalizedPod*> unit = preemptor.group.empty()
                                                     ? std::vector<const NormalizedPod*>{}
                                                     : GroupNeedMembers(state, preemptor, &need);
  if (unit.size() > 1) {
    const ResourceList request = GroupRequestOf(state, unit);
    ctx.path = MakeAdmissionPath(state, preemptor, &request);
  } else {
    ctx.path = MakeAdmissionPath(state, preemptor);
  }
  ctx.alone = WithRequestAlone(ctx.path, preemptor.quota_request());
  ctx.rule = std::make_shared<VictimRule>(state, ctx.path);
  ctx.more_than_min = ctx.rule->more_than_min();
  ctx.scratch = std::make_shared<VictimSelectionScratch>();
  return ctx;
}

NodeVictims SelectVictimsOnNode(const ClusterState& state, const PreemptorContext& p,
                                const NodeInfo& node, const VictimOrder& victim_order) {
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
    return victim_order.KeptOver(*b.pod, *a.pod);
  });

  WhatIf what_if(state, p, node, s);
  auto used_of = [&](int tree_node) -> const ResourceList& { return what_if.UsedOf(tree_node); };
  std::vector<const NormalizedPod*>& potential = s.potential;
  potential.clear();
  s.potential_entries.clear();
  // With pod groups, victims are units (docs/workloads.md#5-victim-units-and-their-order).
  if (state.HasGroups()) return SelectVictimUnits(state, p, node, victim_order, s, what_if);
  for (const auto& [x, xns_ptr] : entries) {
    const VictimSelectionScratch::Namespace& xns = *xns_ptr;
    const VictimRule::Scope& scope = xns.scope;
    if (!scope.any || (scope.lower_priority_only && x->priority >= preemptor.priority)) continue;
    // Re-evaluated after each removal: a side stops giving victims once any level of it is back
    // within its min.
    if (scope.recheck && !rule.SideBorrowing(scope, used_of)) continue;
    potential.push_back(x);
    s.potential_entries.push_back({x, xns_ptr});
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
  // The entries carry their namespace: the comparator reads its distance without a name lookup.
  auto& by_reprieve = s.potential_entries;
  std::stable_sort(by_reprieve.begin(), by_reprieve.end(), [&](const auto& a, const auto& b) {
    const int da = a.ns->scope.distance, db = b.ns->scope.distance;
    if (da != db) return da > db;
    return victim_order.KeptOver(*a.pod, *b.pod);
  });
  s.ordered.clear();
  for (const auto& e : by_reprieve)
    s.ordered.push_back(e.pod);
  s.violating.clear();
  s.non_violating.clear();
  SplitByPdbViolation(state.pdbs(), s.ordered, &s.violating, &s.non_violating);

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

  std::stable_sort(result.victims.begin(), result.victims.end(),
                   [&](const NormalizedPod* a, const NormalizedPod* b) {
                     return victim_order.KeptOver(*a, *b);
                   });
  result.candidate = !result.victims.empty();
  result.distance = 0;
  for (const NormalizedPod* v : result.victims)
    result.distance = std::max(result.distance, scope_of(v).scope.distance);
  if (!result.candidate)
    result.why_not = Status::Unresolvable(std::string(reasons::kNoVictimsOnNode));
  return result;
}

}  // namespace capext
