#include "core/fair_share.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include <fmt/format.h>

#include "core/quota_semantics.h"

namespace capext {
namespace {

int64_t MinOf(const ElasticQuota& quota, ResourceName r) {
  return quota.min ? quota.min->Get(r) : 0;
}

// The level a node is compared at: 0 for the roots, 1 + parent otherwise.
std::size_t LevelOf(const QuotaTree& tree, int node) {
  return static_cast<std::size_t>(tree.parent(node) + 1);
}

const std::vector<int>& ChildrenOfLevel(const QuotaTree& tree, int level) {
  return level == 0 ? tree.roots() : tree.children(level - 1);
}

}  // namespace

std::string NodeName(const QuotaTree& tree, int node) {
  const std::string key = tree.quota(node).Key();
  return tree.is_own(node) ? key + " (own namespace)" : key;
}

std::string ShareKey::ToString() const {
  return infinite ? std::string("inf") : fmt::format("{:.3f}", value);
}

FairShareModel::FairShareModel(const ClusterState& state)
    : tree_(&state.ledger().tree()), semantics_(state.semantics()) {
  const QuotaTree& tree = *tree_;
  const std::size_t n = static_cast<std::size_t>(tree.size());
  weights_.assign(n, kDefaultWeightMilli);
  for (int node = 0; node < tree.size(); ++node) {
    if (!tree.is_own(node))
      weights_[static_cast<std::size_t>(node)] = tree.quota(node).weight_milli;
  }
  pools_.assign(n + 1, ResourceList());
  auto sum_mins = [&](const std::vector<int>& children, ResourceList* pool) {
    for (int child : children) {
      const ElasticQuota& q = tree.quota(child);
      if (q.min) pool->Add(*q.min);
    }
  };
  sum_mins(tree.roots(), &pools_[0]);
  // Parents before children: a level's zero pools take the level above's
  // (docs/fair-sharing.md#3-share).
  for (int node : tree.order()) {
    if (tree.children(node).empty()) continue;
    ResourceList& pool = pools_[static_cast<std::size_t>(node + 1)];
    sum_mins(tree.children(node), &pool);
    for (const auto& [r, amount] : pools_[LevelOf(tree, node)].entries()) {
      if (pool.Get(r) <= 0 && amount > 0) pool.Set(r, amount);
    }
  }
}

const ResourceList& FairShareModel::pool(int node) const {
  return pools_[LevelOf(*tree_, node)];
}

ShareKey FairShareModel::ShareOf(int node, const ResourceList& used) const {
  const ElasticQuota& quota = tree_->quota(node);
  ResourceList borrowed;
  for (const auto& [r, pool_r] : pool(node).entries()) {
    if (pool_r <= 0 || !Governs(semantics_, quota, r)) continue;
    const int64_t b = SaturatingSub(used.Get(r), MinOf(quota, r));
    if (b > 0) borrowed.Set(r, b);
  }
  return ShareOfBorrowed(node, borrowed);
}

ShareKey FairShareModel::ShareOfBorrowed(int node, const ResourceList& borrowed) const {
  const ResourceList& level_pool = pool(node);
  double dominant = 0;
  for (const auto& [r, b] : borrowed.entries()) {
    const int64_t pool_r = level_pool.Get(r);
    if (pool_r <= 0 || b <= 0) continue;
    dominant = std::max(dominant, static_cast<double>(b) / static_cast<double>(pool_r));
  }
  const int64_t w = weight_milli(node);
  if (w == 0) return ShareKey{dominant > 0, dominant};
  return ShareKey{false, dominant * 1000.0 / static_cast<double>(w)};
}

ShareKey FairShareModel::ShareWith(const ClusterState& state, int node, const ResourceList& add,
                                   const ResourceList& remove) const {
  ResourceList used = state.ledger().NodeUsed(node);
  used.Add(add);
  used.Subtract(remove);
  return ShareOf(node, used);
}

std::string FairShareModel::DominantResource(int node, const ResourceList& used) const {
  const ElasticQuota& quota = tree_->quota(node);
  double best = 0;
  std::string name;
  for (const auto& [r, pool_r] : pool(node).entries()) {
    if (pool_r <= 0 || !Governs(semantics_, quota, r)) continue;
    const int64_t b = SaturatingSub(used.Get(r), MinOf(quota, r));
    const double d = static_cast<double>(b) / static_cast<double>(pool_r);
    if (b > 0 && d > best) {
      best = d;
      name = std::string(r.str());
    }
  }
  return name;
}

std::vector<double> WaterFill(double total, const std::vector<int64_t>& weights_milli,
                              const std::vector<double>& caps, double* lambda) {
  const std::size_t n = caps.size();
  std::vector<double> out(n, 0);
  *lambda = 0;
  if (total <= 0) return out;
  std::vector<std::size_t> positive, zero;
  for (std::size_t i = 0; i < n; ++i)
    (weights_milli[i] > 0 ? positive : zero).push_back(i);
  // Lowest cap per weight first: those are capped before the level reaches them.
  std::sort(positive.begin(), positive.end(), [&](std::size_t a, std::size_t b) {
    return caps[a] * static_cast<double>(weights_milli[b]) <
           caps[b] * static_cast<double>(weights_milli[a]);
  });
  double remaining = total;
  double weight_left = 0;
  for (std::size_t i : positive)
    weight_left += static_cast<double>(weights_milli[i]);
  std::size_t k = 0;
  for (; k < positive.size(); ++k) {
    const std::size_t i = positive[k];
    const double level = remaining / weight_left;  // per thousandth of weight
    if (caps[i] > level * static_cast<double>(weights_milli[i])) break;
    out[i] = caps[i];
    remaining -= caps[i];
    weight_left -= static_cast<double>(weights_milli[i]);
  }
  if (k < positive.size()) {
    const double level = remaining / weight_left;
    *lambda = level * 1000.0;
    for (; k < positive.size(); ++k)
      out[positive[k]] = level * static_cast<double>(weights_milli[positive[k]]);
    return out;
  }
  if (!positive.empty()) *lambda = std::numeric_limits<double>::infinity();
  // Every positive weight has its demand: weight 0 shares the rest equally.
  if (remaining > 0 && !zero.empty()) {
    std::vector<int64_t> equal(zero.size(), 1000);
    std::vector<double> zero_caps;
    for (std::size_t i : zero)
      zero_caps.push_back(caps[i]);
    double unused = 0;
    const std::vector<double> rest = WaterFill(remaining, equal, zero_caps, &unused);
    for (std::size_t j = 0; j < zero.size(); ++j)
      out[zero[j]] = rest[j];
  }
  return out;
}

std::vector<NodeFairness> ComputeFairness(const ClusterState& state, const FairShareModel& model) {
  const QuotaTree& tree = state.ledger().tree();
  const QuotaSemantics semantics = state.semantics();
  const std::size_t n = static_cast<std::size_t>(tree.size());
  // What waits in each subtree: pods neither on a node, reserved, held nor terminal.
  std::vector<ResourceList> waiting(n);
  for (const auto& [key, pod] : state.pods()) {
    if (pod.IsBound() || pod.IsTerminal()) continue;
    if (state.FindHold(key) != nullptr || state.FindReservation(key) != nullptr) continue;
    for (int node = tree.LeafOf(pod.ns); node >= 0; node = tree.parent(node))
      waiting[static_cast<std::size_t>(node)].Add(pod.quota_request());
  }
  std::vector<NodeFairness> out(n);
  for (int node = 0; node < tree.size(); ++node) {
    NodeFairness& f = out[static_cast<std::size_t>(node)];
    const ElasticQuota& quota = tree.quota(node);
    const ResourceList& used = state.ledger().NodeUsed(node);
    f.node = node;
    f.weight_milli = model.weight_milli(node);
    f.pool = model.pool(node);
    f.share = model.ShareOf(node, used);
    f.dominant = model.DominantResource(node, used);
    for (const auto& [r, pool_r] : f.pool.entries()) {
      if (pool_r <= 0 || !Governs(semantics, quota, r)) continue;
      const int64_t min_r = MinOf(quota, r);
      const int64_t borrowed = std::max<int64_t>(0, SaturatingSub(used.Get(r), min_r));
      int64_t wanted = SaturatingAdd(used.Get(r), waiting[static_cast<std::size_t>(node)].Get(r));
      if (quota.max) {
        if (auto cap = quota.max->Find(r)) wanted = std::min(wanted, *cap);
      }
      const int64_t demand = std::max(borrowed, SaturatingSub(wanted, min_r));
      if (borrowed > 0) f.borrowed.Set(r, borrowed);
      if (demand > 0) f.demand.Set(r, demand);
    }
  }
  // Water-fill each level, per resource of its pool.
  for (int level = 0; level <= tree.size(); ++level) {
    if (level > 0 && tree.children(level - 1).empty()) continue;
    const std::vector<int>& children = ChildrenOfLevel(tree, level);
    if (children.empty()) continue;
    const ResourceList& pool = out[static_cast<std::size_t>(children.front())].pool;
    std::vector<ResourceList> fair(children.size());
    std::vector<double> best_lambda(children.size(), 0);
    std::vector<ShareKey> fair_value(children.size());
    for (const auto& [r, pool_r] : pool.entries()) {
      if (pool_r <= 0) continue;
      double total = 0;
      std::vector<int64_t> weights;
      std::vector<double> caps;
      for (int c : children) {
        const NodeFairness& f = out[static_cast<std::size_t>(c)];
        total += static_cast<double>(f.borrowed.Get(r));
        weights.push_back(f.weight_milli);
        caps.push_back(static_cast<double>(f.demand.Get(r)));
      }
      double lambda = 0;
      const std::vector<double> amounts = WaterFill(total, weights, caps, &lambda);
      for (std::size_t i = 0; i < children.size(); ++i) {
        if (amounts[i] <= 0) continue;
        fair[i].Set(r, static_cast<int64_t>(std::llround(amounts[i])));
        const int c = children[i];
        const double d = amounts[i] / static_cast<double>(pool_r);
        const int64_t w = out[static_cast<std::size_t>(c)].weight_milli;
        const ShareKey v =
            w == 0 ? ShareKey{true, d} : ShareKey{false, d * 1000.0 / static_cast<double>(w)};
        if (fair_value[i] < v) {
          fair_value[i] = v;
          best_lambda[i] = lambda;
        }
      }
    }
    for (std::size_t i = 0; i < children.size(); ++i) {
      NodeFairness& f = out[static_cast<std::size_t>(children[i])];
      f.fair_share = std::move(fair[i]);
      f.fair_value = fair_value[i];
      f.lambda = best_lambda[i];
    }
  }
  return out;
}

FairReclaimVerdict FairReclaimAllowed(const ClusterState& state, const FairShareModel& model,
                                      const NodeFairness& taker_fairness,
                                      const FairReclaimCase& c) {
  const QuotaTree& tree = state.ledger().tree();
  const QuotaSemantics semantics = state.semantics();
  FairReclaimVerdict v;
  const ResourceList& taker_used = state.ledger().NodeUsed(c.taker);
  const ResourceList& giver_used = state.ledger().NodeUsed(c.giver);
  v.taker_before = model.ShareOf(c.taker, taker_used);
  v.taker_after = model.ShareWith(state, c.taker, c.taker_add);
  v.taker_fair = taker_fairness.fair_value;
  v.giver_before = model.ShareOf(c.giver, giver_used);
  v.giver_after = model.ShareWith(state, c.giver, {}, c.giver_removed);
  const std::string taker = NodeName(tree, c.taker);
  const std::string giver = NodeName(tree, c.giver);
  if (ExceedsMin(semantics, tree.quota(c.taker), taker_used, c.taker_add).empty()) {
    v.why = fmt::format("{} stays within its min: the guarantee's reclaim applies, not fairness",
                        taker);
    return v;
  }
  if (!(v.taker_before < v.taker_fair)) {
    v.why = fmt::format("{}'s share {} is not below its fair share {}", taker,
                        v.taker_before.ToString(), v.taker_fair.ToString());
    return v;
  }
  if (!IsBorrowing(semantics, tree.quota(c.giver), giver_used)) {
    v.why = fmt::format("{} is not borrowing", giver);
    return v;
  }
  if (!(v.giver_after < v.giver_before)) {
    v.why = fmt::format("the victims leave {}'s share at {}", giver, v.giver_before.ToString());
    return v;
  }
  if (!(v.taker_after <= v.giver_after)) {
    v.why = fmt::format("{}'s share after {} > {}'s share after {}", taker,
                        v.taker_after.ToString(), giver, v.giver_after.ToString());
    return v;
  }
  const int64_t ran = c.now_ms - c.victim_started_ms;
  if (ran < c.min_run_time_ms) {
    v.why = fmt::format("the victim has run {}s, under the minimum run time of {}s", ran / 1000,
                        c.min_run_time_ms / 1000);
    return v;
  }
  v.allowed = true;
  v.move = fmt::format(
      "{}'s share after {} <= {}'s share after {} ({}'s share {} below its fair "
      "share {})",
      taker, v.taker_after.ToString(), giver, v.giver_after.ToString(), taker,
      v.taker_before.ToString(), v.taker_fair.ToString());
  return v;
}

}  // namespace capext
