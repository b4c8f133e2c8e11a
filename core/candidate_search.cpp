#include "core/candidate_search.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "core/reasons.h"

namespace capext {
namespace {

// Who may give victims, before any removal (a superset of what victim selection takes: it
// re-checks "borrowing" after each removal): per namespace id of the mirror.
struct VictimNamespaces {
  // A slice of the namespace is taken when it has pods and its priority is below this: the
  // namespace's scope in one comparison (INT64_MIN: it gives no victims; INT64_MAX: of any
  // priority; else the preemptor's priority).
  std::vector<int64_t> below;
  std::vector<int32_t> distance;  // where the namespace's victims meet the preemptor
  bool any = false;               // some namespace may give victims
  bool Takes(const SliceHead& s) const { return (s.pods > 0) & (s.priority < below[s.ns]); }
};

// The quota tree leaf of every namespace id of the mirror (QuotaTree::LeafOf; -1 without a
// quota). Resolved by name only when the tree or the mirror's namespaces changed since this thread
// last asked (their stamps), not at every reclaim attempt: the simulator asks hundreds of
// thousands of times with the same few hundred namespaces, and hashing each name each time was a
// seventh of its instructions.
const std::vector<int>& LeavesByNamespaceId(const ClusterState& state) {
  struct Leaves {
    uint64_t tree = 0, names = 0;  // 0: never a stamp
    std::vector<int> by_id;
  };
  thread_local Leaves leaves;
  const DenseNodes& dense = *state.dense_nodes();
  const QuotaTree& tree = state.ledger().tree();
  if (leaves.tree != tree.stamp() || leaves.names != dense.namespaces_stamp()) {
    leaves.by_id.clear();
    for (const std::string& ns : dense.namespaces())
      leaves.by_id.push_back(tree.LeafOf(ns));
    leaves.tree = tree.stamp();
    leaves.names = dense.namespaces_stamp();
  }
  return leaves.by_id;
}

VictimNamespaces FindVictimNamespaces(const ClusterState& state, const PreemptorContext& ctx) {
  const DenseNodes& dense = *state.dense_nodes();
  const std::vector<int>& leaf_of = LeavesByNamespaceId(state);
  thread_local std::vector<VictimRule::Scope> scope_of_leaf;
  ctx.rule->ScopesByTreeNode(&scope_of_leaf);
  const VictimRule::Scope without_quota = ctx.rule->ScopeOfLeaf(-1);
  const int32_t priority = ctx.pod->priority;
  VictimNamespaces v;
  v.below.resize(dense.namespaces().size());
  v.distance.resize(dense.namespaces().size());
  for (std::size_t id = 0; id < dense.namespaces().size(); ++id) {
    const int leaf = leaf_of[id];
    const VictimRule::Scope& scope =
        leaf < 0 ? without_quota : scope_of_leaf[static_cast<std::size_t>(leaf)];
    // A namespace without a pod that could be taken gives nothing anywhere.
    const bool allowed = ctx.rule->MayGiveVictims(scope) &&
                         dense.HasPods(static_cast<int>(id), scope.lower_priority_only, priority);
    v.below[id] = !allowed ? INT64_MIN : scope.lower_priority_only ? int64_t{priority} : INT64_MAX;
    v.distance[id] = scope.distance;
    v.any = v.any || allowed;
  }
  return v;
}

// What removing victims must free, beyond node fit, for the quota check victim selection runs after
// removing them (with the request alone): the amounts by which the request now exceeds the
// aggregated min or, for a preemptor above its min, its own max. False when no removal can ever
// help (the max is exceeded but victims come from other namespaces).
struct ReclaimNeed {
  std::vector<int64_t> quota;  // per dimension
  int64_t pods = 0;
  // A quota level's excess over its max is lowered only by victims inside that level's subtree,
  // i.e. at distance <= `max_distance` from the preemptor (victim_rule.h): a need of its own,
  // tighter than its share of `quota` (which any victim counts towards).
  struct Subtree {
    int32_t max_distance = 0;
    std::vector<int64_t> quota;  // per dimension
    int64_t pods = 0;
  };
  std::vector<Subtree> subtrees;  // only levels over their max
};

bool ComputeNeed(const ClusterState& state, const PreemptorContext& ctx, ReclaimNeed* need) {
  const DenseNodes& dense = *state.dense_nodes();
  need->quota.assign(dense.dims().size(), 0);
  need->pods = 0;
  need->subtrees.clear();
  if (ctx.quota == nullptr) return true;
  auto add_to = [&](const std::vector<Excess>& excesses, std::vector<int64_t>* quota,
                    int64_t* pods) {
    for (const Excess& e : excesses) {
      const int64_t amount = SaturatingSub(SaturatingAdd(e.used, e.add), e.limit);
      if (e.resource == kPodsName) {
        *pods = std::max(*pods, amount);
      } else if (const int d = dense.DimOf(e.resource); d >= 0) {
        (*quota)[d] = std::max((*quota)[d], amount);
      }
      // Other resources are not tracked per node: victim selection decides.
    }
  };
  auto add = [&](const std::vector<Excess>& excesses) {
    add_to(excesses, &need->quota, &need->pods);
  };
  // A level's excess over its max, also as a need of the victims inside its subtree.
  auto add_level = [&](const std::vector<Excess>& excesses, int32_t distance) {
    add(excesses);
    if (excesses.empty()) return;
    ReclaimNeed::Subtree subtree;
    subtree.max_distance = distance;
    subtree.quota.assign(dense.dims().size(), 0);
    add_to(excesses, &subtree.quota, &subtree.pods);
    need->subtrees.push_back(std::move(subtree));
  };
  const ResourceList& request = ctx.pod->quota_request();
  // The preemptor's own hold is not counted against it
  // (docs/workloads.md#2-holds-quota-without-a-node).
  const AdmissionPath& path = ctx.path;
  auto used = [&](const ResourceList& u) {
    return path.own_hold.empty() ? u : path.UsedWithoutOwnHold(u);
  };
  if (state.ledger().tree().flat()) {
    auto over_max =
        ExceedsMax(state.semantics(), *ctx.quota, used(state.Used(ctx.pod->ns)), request);
    if (!over_max.empty() && !ctx.more_than_min) return false;
    add_level(over_max, 0);  // only the own namespace's pods lower its usage
  } else {
    // Victims in another namespace of a level's subtree lower that level's usage too: every
    // level's excess is a need, and none is hopeless here (victim selection decides). A level's
    // distance is its position on the path from the leaf (victim_rule.h).
    const QuotaTree& tree = state.ledger().tree();
    int32_t distance = 0;
    int node = path.leaf;
    for (const auto& level : ctx.path.levels) {
      for (; node >= 0 && node != level.node; node = tree.parent(node))
        ++distance;
      add_level(ExceedsMax(state.semantics(), *level.quota,
                           used(state.ledger().NodeUsed(level.node)), request),
                distance);
    }
  }
  if (path.own_hold.empty()) {
    add(ExceedsAggregateMin(state.semantics(), *ctx.alone.root, state.totals(), request));
  } else {
    add(ExceedsAggregateMin(state.semantics(), *ctx.alone.root,
                            TotalsWithoutOwnHold(state.semantics(), path, state.totals()),
                            request));
  }
  return true;
}

// A bound on the candidate order's key for whatever victim selection finds on node n. The victims
// are among the pods it may take there and must free what node fit (nominations ignored: they only
// add) and the quota check need. Hence, with P the smallest priority such that those pods of
// priority <= P free enough: the most important victim has priority >= P. If it is exactly P, every
// victim has priority <= P, so there are at least as many victims as the largest such pods would
// need; a single victim must cover the whole need alone, so its start is at most the latest start
// of such pods of priority P (with no such pod, at least two victims); several victims of priority
// P have their earliest start at most the latest start among priority P. False when no P works:
// victim selection removes at most those pods, so the node has no candidate.
bool VictimBound(const DenseNodes& dense, int n, const DenseRequest& r, const ReclaimNeed& need,
                 const VictimNamespaces& victims, bool refine, CandidateKey* bound) {
  // The slices taken (indexes into the node's heads and slices), found without a branch per
  // slice (a few percent are, at random: a branch mispredicted on each was most of the reclaim
  // search's time), then read.
  thread_local std::vector<uint32_t> entries;
  thread_local std::vector<int64_t> freed, largest, needed;
  const std::size_t dims = dense.dims().size();
  needed.assign(need.quota.begin(), need.quota.end());
  for (const auto& [d, amount] : r.dims)
    needed[d] = std::max(needed[d], amount - dense.Free(n, d));
  const int64_t needed_pods = std::max<int64_t>(need.pods, 1 - dense.PodSlots(n));
  const std::vector<SliceHead>& heads = dense.SliceHeads(n);
  const std::vector<NamespaceSlice>& slices = dense.Slices(n);
  entries.resize(heads.size());
  std::size_t taken = 0;
  for (std::size_t k = 0; k < heads.size(); ++k) {
    entries[taken] = static_cast<uint32_t>(k);
    taken += victims.Takes(heads[k]) ? 1 : 0;
  }
  entries.resize(taken);
  freed.assign(dims, 0);
  int64_t pods = 0;
  int32_t min_distance = INT32_MAX;
  for (const uint32_t k : entries) {
    min_distance = std::min(min_distance, victims.distance[heads[k].ns]);
    pods += heads[k].pods;
    const int64_t* used = dense.SliceUsed(n, k);
    for (std::size_t d = 0; d < dims; ++d)
      freed[d] += used[d];
  }
  // Whether all the candidates together would do (most nodes fail here).
  if (entries.empty() || pods < needed_pods) return false;
  for (std::size_t d = 0; d < dims; ++d) {
    if (freed[d] < needed[d]) return false;
  }
  std::sort(entries.begin(), entries.end(),
            [&](uint32_t a, uint32_t b) { return heads[a].priority < heads[b].priority; });
  freed.assign(dims, 0);
  largest.assign(dims, 0);
  pods = 0;
  auto enough = [&] {
    if (pods < needed_pods) return false;
    for (std::size_t d = 0; d < dims; ++d) {
      if (freed[d] < needed[d]) return false;
    }
    return true;
  };
  auto covers = [&](const NormalizedPod& pod) {
    if (needed_pods > 1) return false;
    for (std::size_t d = 0; d < dims; ++d) {
      if (needed[d] > 0 && pod.requests.Get(dense.dims()[d]) < needed[d]) return false;
    }
    return true;
  };
  const int32_t lowest = heads[entries.front()].priority;
  std::size_t i = 0;
  while (i < entries.size()) {
    const int32_t priority = heads[entries[i]].priority;
    const std::size_t level_begin = i;
    for (; i < entries.size() && heads[entries[i]].priority == priority; ++i) {
      pods += heads[entries[i]].pods;
      const int64_t* used = dense.SliceUsed(n, entries[i]);
      for (std::size_t d = 0; d < dims; ++d)
        freed[d] += used[d];
      if (!refine) continue;
      const int64_t* most = slices[entries[i]].largest();
      for (std::size_t d = 0; d < dims; ++d)
        largest[d] = std::max(largest[d], most[d]);
    }
    if (!enough()) continue;
    if (!refine) {
      // The cheap bound: priority only (one victim, the best possible start).
      *bound = LowerBoundKey(dense.name(n), priority, INT64_MAX, 1, lowest, min_distance);
      return true;
    }
    int64_t count = std::max<int64_t>(1, needed_pods);
    for (std::size_t d = 0; d < dims; ++d) {
      if (needed[d] > 0 && largest[d] > 0)
        count = std::max(count, (needed[d] + largest[d] - 1) / largest[d]);
    }
    int64_t latest = INT64_MIN, latest_single = INT64_MIN;
    for (std::size_t k = level_begin; k < i; ++k) {
      for (const NormalizedPod* member : slices[entries[k]].members) {
        const int64_t start = EffectiveStartMs(*member);
        latest = std::max(latest, start);
        // covers reads the pod's requests: asked only when it could raise latest_single.
        if (count == 1 && start > latest_single && covers(*member)) latest_single = start;
      }
    }
    if (count == 1) {
      if (latest_single != INT64_MIN) {
        latest = latest_single;
      } else {
        count = 2;
      }
    }
    *bound = LowerBoundKey(dense.name(n), priority, latest, static_cast<std::size_t>(count), lowest,
                           min_distance);
    return true;
  }
  return false;
}

// Whether the pods victim selection may take on node n can lower every quota level over its max
// below it: each level's excess against what the node's pods inside that level's subtree free.
// A necessary condition for a candidate, tighter than VictimBound's (which counts every victim
// towards every level), but not used to fill the pool, so that the pool, and with it every
// decision, stays as it was: it only spares victim selection on pool nodes that cannot be
// candidates. Victim units of pod groups may free quota on other nodes too: REQUIRES no groups.
bool SubtreesCanFree(const DenseNodes& dense, int n, const ReclaimNeed& need,
                     const VictimNamespaces& victims) {
  const std::size_t dims = dense.dims().size();
  thread_local std::vector<int64_t> freed;  // per dimension, reused across calls
  for (const ReclaimNeed::Subtree& subtree : need.subtrees) {
    int64_t pods = 0;
    freed.assign(dims, 0);
    const std::vector<SliceHead>& heads = dense.SliceHeads(n);
    for (std::size_t k = 0; k < heads.size(); ++k) {
      if (!victims.Takes(heads[k]) || victims.distance[heads[k].ns] > subtree.max_distance)
        continue;
      pods += heads[k].pods;
      const int64_t* used = dense.SliceUsed(n, k);
      for (std::size_t d = 0; d < dims; ++d)
        freed[d] += used[d];
    }
    if (pods < subtree.pods) return false;
    for (std::size_t d = 0; d < dims; ++d) {
      if (freed[d] < subtree.quota[d]) return false;
    }
  }
  return true;
}

// Whether every quota level over its max has, inside its subtree, a namespace that may give
// victims somewhere. Without one, SubtreesCanFree fails on every node.
bool SubtreesReachable(const ReclaimNeed& need, const VictimNamespaces& victims) {
  for (const ReclaimNeed::Subtree& subtree : need.subtrees) {
    bool reachable = false;
    for (std::size_t id = 0; id < victims.below.size() && !reachable; ++id)
      reachable = victims.below[id] != INT64_MIN && victims.distance[id] <= subtree.max_distance;
    if (!reachable) return false;
  }
  return true;
}

}  // namespace

CandidateSearchResult SearchCandidates(const ClusterState& state, DensePlacement& placement,
                                       const NormalizedPod& preemptor,
                                       const VictimOrder& victim_order,
                                       const CandidateSearchOptions& options) {
  CandidateSearchResult out;
  PreemptionPlan& plan = out.plan;
  const DenseNodes& dense = *state.dense_nodes();
  const PreemptorContext ctx = MakePreemptorContext(state, preemptor);
  if (Status eligible = EligibleToPreempt(state, ctx); !eligible.ok()) {
    plan.outcome = PreemptionPlan::Outcome::kNotEligible;
    plan.why = std::move(eligible);
    return out;
  }
  plan.outcome = PreemptionPlan::Outcome::kNoCandidate;
  plan.why = Status::Unschedulable(std::string(reasons::kNoNodeHasVictims));
  const VictimNamespaces victims = FindVictimNamespaces(state, ctx);
  if (!victims.any) return out;  // no node can have a candidate
  ReclaimNeed need;
  const DensePlacement::Profile profile = placement.ProfileOf(preemptor, NodeScoring::kNone);
  if (!ComputeNeed(state, ctx, &need)) return out;

  // The pool: nodes where victim selection may find a candidate, from the rotating offset.
  struct PoolNode {
    CandidateKey bound;
    int node;
  };
  std::vector<PoolNode> pool;
  const int total = dense.size();
  out.processed = total;
  constexpr int kPoolPrefetchAhead = 8;  // nodes
  for (int i = 0; i < total; ++i) {
    int n = options.start + i;
    if (n >= total) n -= total;
    // VictimBound's reads of a node are two cache misses (its slice heads, then what they use),
    // most of the pool's time: fetched for a node some way ahead while this one is decided.
    if (i + kPoolPrefetchAhead < total) {
      int ahead = n + kPoolPrefetchAhead;
      if (ahead >= total) ahead -= total;
      __builtin_prefetch(dense.SliceHeads(ahead).data());
      __builtin_prefetch(dense.SliceUsed(ahead, 0));
    }
    if (!placement.StaticOk(profile, n) || !dense.FitsAllocatable(profile.request, n)) continue;
    CandidateKey bound;
    if (!VictimBound(dense, n, profile.request, need, victims, /*refine=*/false, &bound)) continue;
    pool.push_back({std::move(bound), n});
    if (pool.size() >= options.max_pool) {
      out.processed = i + 1;
      break;
    }
  }
  out.pool = pool.size();

  // Victim selection on the pool's nodes, most promising first, until no remaining node can beat
  // the best candidate (its bound is not before the best key). Nodes are grouped by the distance
  // and priority parts of their bound; a group's bounds are refined (victim count, start) only when
  // it is reached.
  std::sort(pool.begin(), pool.end(),
            [](const PoolNode& a, const PoolNode& b) { return Before(a.bound, b.bound); });
  std::size_t best = 0;
  CandidateKey best_key;
  auto beaten = [&](const CandidateKey& bound) {
    return !plan.candidates.empty() && !options.exhaustive && !Before(bound, best_key);
  };
  // Pool nodes where the victims cannot lower a level over its max are never examined: they are
  // left out before their bounds are refined (they could only end the group's loop, where a node
  // after them, whose bound is no better, ends it too). The pool and the rotation stay as they
  // were.
  const bool check_subtrees = !options.exhaustive && !need.subtrees.empty() && !state.HasGroups();
  if (check_subtrees && !SubtreesReachable(need, victims)) return out;
  for (std::size_t group = 0; group < pool.size();) {
    if (beaten(pool[group].bound)) break;
    std::size_t end = group;
    while (end < pool.size() && pool[end].bound.distance == pool[group].bound.distance &&
           pool[end].bound.highest_priority == pool[group].bound.highest_priority)
      ++end;
    std::size_t kept = group;
    for (std::size_t k = group; k < end; ++k) {
      if (check_subtrees && !SubtreesCanFree(dense, pool[k].node, need, victims)) continue;
      if (kept != k) pool[kept] = std::move(pool[k]);
      VictimBound(dense, pool[kept].node, profile.request, need, victims, /*refine=*/true,
                  &pool[kept].bound);
      ++kept;
    }
    std::sort(pool.begin() + static_cast<std::ptrdiff_t>(group),
              pool.begin() + static_cast<std::ptrdiff_t>(kept),
              [](const PoolNode& a, const PoolNode& b) { return Before(a.bound, b.bound); });
    for (std::size_t k = group; k < kept; ++k) {
      if (beaten(pool[k].bound)) break;
      ++out.examined;
      const auto info = state.FindNode(dense.name(pool[k].node));
      NodeVictims v = SelectVictimsOnNode(state, ctx, *info, victim_order);
      if (!v.candidate) continue;
      CandidateKey key = KeyOf(v);
      plan.candidates.push_back(std::move(v));
      if (plan.candidates.size() == 1 || Before(key, best_key)) {
        best = plan.candidates.size() - 1;
        best_key = std::move(key);
      }
    }
    group = end;
  }
  if (plan.candidates.empty()) return out;
  std::sort(plan.candidates.begin(), plan.candidates.end(),
            [](const NodeVictims& a, const NodeVictims& b) { return a.node < b.node; });
  best = ChooseCandidate(plan.candidates);
  plan.outcome = PreemptionPlan::Outcome::kFound;
  plan.why = Status();
  plan.chosen = plan.candidates[best];
  return out;
}

}  // namespace capext
