#include "core/fair_admission_order.h"

#include <algorithm>
#include <functional>
#include <tuple>

namespace capext {

FairAdmissionOrder::FairAdmissionOrder(const QuotaTree& tree, const FairShareModel& model,
                                       std::vector<FairCandidate> candidates)
    : tree_(tree), model_(model), candidates_(std::move(candidates)) {
  queues_.resize(static_cast<std::size_t>(tree_.size()));
  counts_.assign(static_cast<std::size_t>(tree_.size()), 0);
  cache_.assign(static_cast<std::size_t>(tree_.size()), std::nullopt);
  for (std::size_t i = 0; i < candidates_.size(); ++i) {
    const int leaf = candidates_[i].leaf;
    queues_[static_cast<std::size_t>(leaf)].push_back(i);
    for (int node = leaf; node >= 0; node = tree_.parent(node))
      ++counts_[static_cast<std::size_t>(node)];
  }
}

bool FairAdmissionOrder::Before(const Best& a, const Best& b) const {
  if (a.share_after < b.share_after) return true;
  if (b.share_after < a.share_after) return false;
  const FairCandidate& x = candidates_[a.candidate];
  const FairCandidate& y = candidates_[b.candidate];
  return std::make_tuple(-static_cast<int64_t>(x.priority), x.creation_ms, std::cref(x.first_key)) <
         std::make_tuple(-static_cast<int64_t>(y.priority), y.creation_ms, std::cref(y.first_key));
}

std::optional<FairAdmissionOrder::Best> FairAdmissionOrder::BestAmong(
    const ClusterState& what_if, const std::vector<int>& nodes) {
  std::optional<Best> best;
  for (int node : nodes) {
    if (counts_[static_cast<std::size_t>(node)] == 0) continue;
    const Best& b = BestIn(what_if, node);
    if (!best || Before(b, *best)) best = b;
  }
  return best;
}

const FairAdmissionOrder::Best& FairAdmissionOrder::BestIn(const ClusterState& what_if, int node) {
  std::optional<Best>& cached = cache_[static_cast<std::size_t>(node)];
  if (cached) return *cached;
  std::size_t c = 0;
  if (tree_.children(node).empty()) {
    c = queues_[static_cast<std::size_t>(node)].front();
  } else {
    c = BestAmong(what_if, tree_.children(node))->candidate;
  }
  // The node's own share after admitting that unit: what its siblings are compared with.
  cached = Best{c, model_.ShareWith(what_if, node, candidates_[c].request)};
  return *cached;
}

std::optional<FairAdmissionOrder::Pick> FairAdmissionOrder::Next(const ClusterState& what_if) {
  const std::optional<Best> best = BestAmong(what_if, tree_.roots());
  if (!best) return std::nullopt;
  const int leaf = candidates_[best->candidate].leaf;
  queues_[static_cast<std::size_t>(leaf)].pop_front();
  for (int node = leaf; node >= 0; node = tree_.parent(node)) {
    --counts_[static_cast<std::size_t>(node)];
    cache_[static_cast<std::size_t>(node)].reset();
  }
  return Pick{best->candidate, best->share_after};
}

std::vector<std::size_t> FairAdmissionOrder::Drain() {
  std::vector<std::size_t> out;
  for (auto& queue : queues_) {
    out.insert(out.end(), queue.begin(), queue.end());
    queue.clear();
  }
  std::fill(counts_.begin(), counts_.end(), 0);
  for (auto& c : cache_)
    c.reset();
  return out;
}

int FairAdmissionOrder::SideAt(int a, int b) const {
  if (a == b) return a;
  const int lca = tree_.Lca(a, b);
  int side = a;
  while (tree_.parent(side) != lca)
    side = tree_.parent(side);
  return side;
}

}  // namespace capext
