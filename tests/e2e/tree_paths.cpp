// The quota tree's side of the differential check (docs/quota-hierarchy.md): core's tree, subtree
// usage and cluster-wide sums against a naive recount over the quotas and pods
// (quota_tree_recount.h); core's admission verdict against the rules worked out on the recount
// (max at the pod's quota and every ancestor, naming the blocking quota and its relation; the
// cluster-wide rule over the roots); and every victim FindPreemption proposes against the LCA
// rule on the recount. Also counts what the trees produced (rejections at parents and ancestors,
// victims across levels), so the test can require that they keep occurring.
#include <fmt/format.h>

#include <algorithm>

#include "core/preemption.h"
#include "tests/e2e/path_context.h"
#include "tests/support/quota_tree_recount.h"

namespace capext::testing {
namespace {

std::string OptionalList(const std::optional<ResourceList>& list) {
  return list ? "{" + list->ToString() + "}" : "absent";
}

// Core's tree node for a node of the recount.
int CoreNodeOf(const QuotaTree& tree, const QuotaTreeRecount::TreeNode& n) {
  return n.own ? tree.LeafOf(n.quota.ns) : tree.QuotaNodeOf(n.quota.ns);
}

void CompareTreeAndUsage(PathContext& ctx, const QuotaTreeRecount& recount) {
  const QuotaTree& tree = ctx.base.ledger().tree();
  for (const QuotaTreeRecount::TreeNode& n : recount.nodes()) {
    const int core = CoreNodeOf(tree, n);
    const std::string want_parent = n.parent < 0 ? "" : recount.node(n.parent).key;
    std::string got_parent = "<missing>";
    if (core >= 0) {
      const int p = tree.parent(core);
      got_parent = p < 0 ? "" : tree.quota(p).Key();
    }
    const std::string got_min = core >= 0 ? OptionalList(tree.quota(core).min) : "<missing>";
    if (core < 0 || tree.is_own(core) != n.own || got_parent != want_parent ||
        got_min != OptionalList(n.quota.min)) {
      ctx.Disagree("tree: structure",
                   fmt::format("{}: core {} parent '{}' min {}; recount parent '{}' min {}", n.key,
                               core < 0            ? "has no node"
                               : tree.is_own(core) ? "own node"
                                                   : "node",
                               got_parent, got_min, want_parent, OptionalList(n.quota.min)));
      continue;
    }
    const ResourceList& used = ctx.base.ledger().NodeUsed(core);
    if (!SameAmounts(used, n.used)) {
      ctx.Disagree("tree: subtree usage", fmt::format("{}: ledger {{{}}}, recount over pods {{{}}}",
                                                      n.key, used.ToString(), n.used.ToString()));
    }
  }
  const AggregateTotals want = recount.RootTotals(ctx.base.semantics());
  const AggregateTotals& got = ctx.base.totals();
  if (!SameAmounts(got.used, want.used) || !SameAmounts(got.min, want.min) ||
      got.checked != want.checked) {
    ctx.Disagree("tree: sums over the roots",
                 fmt::format("ledger used {{{}}} min {{{}}}, recount used {{{}}} min {{{}}}",
                             got.used.ToString(), got.min.ToString(), want.used.ToString(),
                             want.min.ToString()));
  }
}

// Admission (docs/quota-hierarchy.md#admission-filter-and-the-bind-check) on the recount: the code,
// and the end of the reason: the blocking rule with its numbers ("" = admitted).
std::pair<StatusCode, std::string> RecountAdmission(const PathContext& ctx,
                                                    const QuotaTreeRecount& recount) {
  const NormalizedPod& pod = *ctx.pod;
  const QuotaSemantics semantics = ctx.base.semantics();
  const int q = recount.QuotaNodeOf(pod.ns);
  if (q < 0) return {StatusCode::kOk, ""};
  const std::vector<int> levels = recount.PathUp(q);
  auto blocking = [&](std::size_t i) {
    const std::string& key = recount.node(levels[i]).key;
    if (i == 0) return "ElasticQuota " + key;
    return fmt::format("ElasticQuota {} ({} of {})", key, i == 1 ? "parent" : "ancestor",
                       recount.node(q).key);
  };
  const ResourceList& request = pod.quota_request();
  for (std::size_t i = 0; i < levels.size(); ++i) {
    const auto alone = ExceedsMax(semantics, recount.node(levels[i]).quota, {}, request);
    if (!alone.empty()) {
      return {StatusCode::kUnschedulableAndUnresolvable,
              "the max of " + blocking(i) + ": " + DescribeRequestExcesses(alone, "max")};
    }
  }
  for (std::size_t i = 0; i < levels.size(); ++i) {
    const QuotaTreeRecount::TreeNode& x = recount.node(levels[i]);
    const auto over = ExceedsMax(semantics, x.quota, x.used, recount.RequestAt(pod, levels[i]));
    if (!over.empty()) {
      return {StatusCode::kUnschedulable,
              blocking(i) + " would exceed max: " + DescribeExcesses(over, request, "max")};
    }
  }
  const AggregateTotals totals = recount.RootTotals(semantics);
  ResourceList all = recount.RequestAt(pod, q);
  for (const QuotaTreeRecount::Nominated& n : recount.nominated()) {
    const int leaf = recount.LeafOf(n.ns);
    if (n.key == pod.store_key() || leaf < 0 || recount.Contains(q, leaf)) continue;
    const QuotaTreeRecount::TreeNode& l = recount.node(leaf);
    if (!IsBorrowing(semantics, l.quota, l.used)) all.Add(n.request);
  }
  const auto over_min =
      ExceedsAggregateMin(semantics, recount.node(levels.back()).quota, totals, all);
  if (!over_min.empty()) {
    return {StatusCode::kUnschedulable,
            "would exceed the sum of all mins: " + DescribeExcesses(over_min, request, "min")};
  }
  return {StatusCode::kOk, ""};
}

void CompareAdmission(PathContext& ctx, const QuotaTreeRecount& recount) {
  const auto [code, words] = RecountAdmission(ctx, recount);
  const Status& got = ctx.quota;
  if (got.code() != code || !got.message().ends_with(words)) {
    ctx.Disagree("tree: admission", fmt::format("core [{}]; the recount expects {} naming \"{}\"",
                                                DescribeStatus(got), StatusCodeName(code), words));
  }
}

// How far a victim of `ns` is from the preemptor in the tree (docs/quota-hierarchy.md#order):
// 0 in its own namespace, j when they meet j levels above the preemptor's leaf, one more than
// its root's level when they meet only at the virtual root.
int RecountDistance(const QuotaTreeRecount& recount, const NormalizedPod& pod,
                    const std::string& ns) {
  const int leaf_p = recount.LeafOf(pod.ns), leaf_v = recount.LeafOf(ns);
  if (leaf_p < 0 || leaf_v < 0 || ns == pod.ns) return 0;
  const std::vector<int> path = recount.PathUp(leaf_p);
  const int lca = recount.Lca(leaf_p, leaf_v);
  return static_cast<int>(std::find(path.begin(), path.end(), lca) - path.begin());
}

// Every candidate's distance is its farthest victim's, and the chosen node's is the nearest.
void CheckDistances(PathContext& ctx, const QuotaTreeRecount& recount, const PreemptionPlan& all) {
  int nearest = INT32_MAX;
  for (const NodeVictims& c : all.candidates) {
    int farthest = 0;
    for (const NormalizedPod* v : c.victims)
      farthest = std::max(farthest, RecountDistance(recount, *ctx.pod, v->ns));
    nearest = std::min(nearest, farthest);
    if (farthest != c.distance) {
      ctx.Disagree("tree: victim distance",
                   fmt::format("node {}: core says its farthest victim is at distance {}, the "
                               "recount {}",
                               c.node, c.distance, farthest));
    }
  }
  if (all.found() && all.chosen.distance != nearest) {
    ctx.Disagree("tree: nearest candidate first",
                 fmt::format("chosen node {} has victims at distance {}; another candidate's "
                             "farthest is {}",
                             all.chosen.node, all.chosen.distance, nearest));
  }
}

// The victims of one candidate node against the LCA rule
// (docs/quota-hierarchy.md#reclaim-and-preemption), on the state before any removal. Condition (2)
// is re-checked after each removal in an order this check does not know; but the last victim taken
// from a subtree y was taken while y was borrowing with every other victim of y already gone (and
// perhaps more, later put back), so some victim u of y must leave y borrowing at used(y) minus the
// other victims of y.
void CheckVictims(PathContext& ctx, const QuotaTreeRecount& recount, const NodeVictims& c) {
  const NormalizedPod& pod = *ctx.pod;
  const QuotaSemantics semantics = ctx.base.semantics();
  const int leaf_p = recount.LeafOf(pod.ns);
  const std::vector<int> path_p = leaf_p < 0 ? std::vector<int>{} : recount.PathUp(leaf_p);
  auto fail = [&](const NormalizedPod& v, const std::string& why) {
    ctx.Disagree("tree: victim rule",
                 fmt::format("node {}: victim {} (priority {}) of {} "
                             "(priority {}): {}",
                             c.node, v.Key(), v.priority, pod.Key(), pod.priority, why));
  };
  for (const NormalizedPod* v : c.victims) {
    const int leaf_v = recount.LeafOf(v->ns);
    if (leaf_p < 0) {
      if (leaf_v >= 0 || v->priority >= pod.priority)
        fail(*v, "a pod without a quota takes only lower-priority pods without a quota");
      continue;
    }
    if (leaf_v < 0) {
      fail(*v, "a namespace without a quota never gives victims to a quota pod");
      continue;
    }
    if (v->ns == pod.ns) {
      const QuotaTreeRecount::TreeNode& l = recount.node(leaf_p);
      if (v->priority >= pod.priority ||
          ExceedsMin(semantics, l.quota, l.used, recount.RequestAt(pod, leaf_p)).empty())
        fail(*v, "its own namespace gives lower-priority pods only, above the leaf's min");
      continue;
    }
    const int lca = recount.Lca(leaf_p, leaf_v);
    auto below = [&](int from) {  // the node of from's path just under the LCA
      int x = from;
      while (recount.node(x).parent != lca)
        x = recount.node(x).parent;
      return x;
    };
    const int q_side = below(leaf_p), w_side = below(leaf_v);
    const QuotaTreeRecount::TreeNode& qn = recount.node(q_side);
    if (!ExceedsMin(semantics, qn.quota, qn.used, recount.RequestAt(pod, q_side)).empty()) {
      fail(*v, fmt::format("(1) fails: {} would go above its min", qn.key));
      continue;
    }
    for (int y = leaf_v;; y = recount.node(y).parent) {
      std::vector<const NormalizedPod*> of_y;
      for (const NormalizedPod* u : c.victims) {
        const int leaf_u = recount.LeafOf(u->ns);
        if (leaf_u >= 0 && recount.Contains(y, leaf_u)) of_y.push_back(u);
      }
      const QuotaTreeRecount::TreeNode& yn = recount.node(y);
      const bool some_last = std::any_of(of_y.begin(), of_y.end(), [&](const NormalizedPod* u) {
        ResourceList used = yn.used;
        for (const NormalizedPod* w : of_y) {
          if (w != u) used.Subtract(w->quota_request());
        }
        return IsBorrowing(semantics, yn.quota, used);
      });
      if (!some_last) {
        fail(*v, fmt::format("(2) fails: {} (used {{{}}}, {} victims) is not borrowing when they "
                             "are taken",
                             yn.key, yn.used.ToString(), of_y.size()));
        break;
      }
      if (y == w_side) break;
    }
  }
}

// Whether a pod on the preemptor's nominated node that is already terminating would be one of
// its victims (docs/quota-hierarchy.md#reclaim-and-preemption, before any removal): then the
// preemptor waits for it instead of preempting more (the reference's PodEligibleToPreemptOthers;
// within the preemptor's own namespace, by priority alone, as the reference has it).
bool RecountWouldBeVictim(const PathContext& ctx, const QuotaTreeRecount& recount,
                          const NormalizedPod& x) {
  const NormalizedPod& pod = *ctx.pod;
  const QuotaSemantics semantics = ctx.base.semantics();
  const int leaf_p = recount.LeafOf(pod.ns), leaf_x = recount.LeafOf(x.ns);
  if (leaf_p < 0) return leaf_x < 0 && x.priority < pod.priority;
  if (leaf_x < 0) return false;
  if (x.ns == pod.ns) return x.priority < pod.priority;
  const int lca = recount.Lca(leaf_p, leaf_x);
  auto below = [&](int from) {
    int y = from;
    while (recount.node(y).parent != lca)
      y = recount.node(y).parent;
    return y;
  };
  const QuotaTreeRecount::TreeNode& qn = recount.node(below(leaf_p));
  if (!ExceedsMin(semantics, qn.quota, qn.used, recount.RequestAt(pod, below(leaf_p))).empty())
    return false;
  const int top = below(leaf_x);
  for (int y = leaf_x;; y = recount.node(y).parent) {
    if (!IsBorrowing(semantics, recount.node(y).quota, recount.node(y).used)) return false;
    if (y == top) return true;
  }
}

void CompareEligibility(PathContext& ctx, const QuotaTreeRecount& recount,
                        const PreemptionPlan& all) {
  const NormalizedPod& pod = *ctx.pod;
  std::string why;  // "" = eligible
  if (pod.preemption_policy == PreemptionPolicy::kNever) why = "preemptionPolicy Never";
  std::string nominated = pod.nominated_node_name;
  if (const Nomination* ours = ctx.base.FindOurNomination(pod.store_key())) nominated = ours->node;
  if (why.empty() && !nominated.empty() && ctx.base.FindNode(nominated)) {
    for (const auto& [key, x] : ctx.base.pods()) {
      // A pod reserved there is on that node as if bound
      // (docs/capacity-semantics.md#6-accounting-used-reservations-nominations).
      const Reservation* r = ctx.base.FindReservation(key);
      const std::string& on = x.IsBound() || r == nullptr ? x.node_name : r->node;
      if (on != nominated || !x.terminating || x.IsTerminal()) continue;
      if (RecountWouldBeVictim(ctx, recount, x)) {
        why = "terminating victim " + x.Key() + " on its nominated node " + nominated;
        break;
      }
    }
  }
  const bool eligible = all.outcome != PreemptionPlan::Outcome::kNotEligible;
  if (eligible != why.empty()) {
    ctx.Disagree("tree: eligibility",
                 fmt::format("FindPreemption: {}; the recount: {}",
                             eligible ? "eligible" : "not eligible (" + all.why.message() + ")",
                             why.empty() ? "eligible" : "not eligible: " + why));
  }
}

void CountTree(PathContext& ctx, const QuotaTreeRecount& recount, const PreemptionPlan& all) {
  if (recount.levels() > 1)
    ctx.Count(fmt::format("tree: a forest of {} quota levels", recount.levels()));
  if (!recount.invalid().empty()) ctx.Count("tree: an invalid parent (a root at runtime)");
  const std::string& m = ctx.quota.message();
  const bool above =
      m.find("(parent of") != std::string::npos || m.find("(ancestor of") != std::string::npos;
  if (ctx.quota.IsUnresolvable() && above)
    ctx.Count("tree: request alone above a parent's or ancestor's max");
  if (ctx.quota.code() == StatusCode::kUnschedulable) {
    if (m.find("(parent of") != std::string::npos) ctx.Count("tree: over the max of the parent");
    if (m.find("(ancestor of") != std::string::npos) ctx.Count("tree: over the max of an ancestor");
  }
  const int leaf_p = recount.LeafOf(ctx.pod->ns);
  if (!all.found() || leaf_p < 0) return;
  const std::vector<int> path = recount.PathUp(leaf_p);
  bool sibling = false, cousin = false, own = false, across = false;
  for (const NormalizedPod* v : all.chosen.victims) {
    const int leaf_v = recount.LeafOf(v->ns);
    if (leaf_v < 0 || leaf_v == leaf_p) continue;
    const int lca = recount.Lca(leaf_p, leaf_v);
    const auto j = std::find(path.begin(), path.end(), lca) - path.begin();
    sibling = sibling || (lca >= 0 && j == 1);
    cousin = cousin || (lca >= 0 && j >= 2);
    across = across || (lca < 0 && recount.levels() > 1);
    own = own || (lca >= 0 && (recount.node(leaf_p).own || recount.node(leaf_v).own));
  }
  if (sibling) ctx.Count("tree: victims meet the preemptor at its parent (siblings)");
  if (cousin) ctx.Count("tree: victims meet the preemptor above its parent (cousins)");
  if (own) ctx.Count("tree: victims across a parent's own namespace and its children");
  if (across) ctx.Count("tree: victims across the roots of a forest");
}

}  // namespace

void CompareTreeRules(PathContext& ctx, const PreemptionPlan& all) {
  const QuotaTreeRecount recount(ctx.base);
  CompareTreeAndUsage(ctx, recount);
  CompareAdmission(ctx, recount);
  CompareEligibility(ctx, recount, all);
  for (const NodeVictims& c : all.candidates)
    CheckVictims(ctx, recount, c);
  CheckDistances(ctx, recount, all);
  CountTree(ctx, recount, all);
}

}  // namespace capext::testing
