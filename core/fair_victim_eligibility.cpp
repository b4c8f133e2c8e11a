#include "core/fair_victim_eligibility.h"

#include <algorithm>
#include <cstdint>

#include <fmt/format.h>

#include "core/pod.h"
#include "core/quota_semantics.h"

namespace capext {

bool WouldBorrow(const ClusterState& state, const NormalizedPod& pod) {
  if (state.QuotaFor(pod.ns) == nullptr) return false;
  const QuotaTree& tree = state.ledger().tree();
  for (int n = tree.LeafOf(pod.ns); n >= 0; n = tree.parent(n)) {
    if (!ExceedsMin(state.semantics(), tree.quota(n), state.ledger().NodeUsed(n),
                    pod.quota_request())
             .empty())
      return true;
  }
  return false;
}

int64_t NextMinRunTimeCrossing(const ClusterState& state, int64_t now_ms, int64_t min_run_time_ms) {
  int64_t next = INT64_MAX;
  for (const auto& [key, pod] : state.pods()) {
    if (!pod.IsBound() || pod.IsTerminal() || state.QuotaFor(pod.ns) == nullptr) continue;
    const int64_t at = EffectiveStartMs(pod) + min_run_time_ms;
    if (at > now_ms) next = std::min(next, at);
  }
  return next;
}

FairVictimEligibility::FairVictimEligibility(const ClusterState& state, const NormalizedPod& pod,
                                             const ResourceList& request,
                                             const FairReclaimOptions& options)
    : state_(state), pod_(pod), request_(request), options_(options) {
  if (!options_.enabled || state.QuotaFor(pod.ns) == nullptr) return;
  const QuotaTree& tree = state.ledger().tree();
  for (int n = tree.LeafOf(pod.ns); n >= 0; n = tree.parent(n))
    path_.push_back(n);
  eligible_taker_.assign(path_.size(), 0);
  // Condition 1 (Q' would borrow) per level; fairness is only computed when one does.
  borrows_.assign(path_.size(), 0);
  bool any = false;
  for (std::size_t i = 0; i < path_.size(); ++i) {
    const int n = path_[i];
    borrows_[i] =
        !ExceedsMin(state.semantics(), tree.quota(n), state.ledger().NodeUsed(n), request_).empty();
    any |= borrows_[i] != 0;
  }
  if (!any) return;
  fair_ = options_.cache != nullptr ? options_.cache->Get(state)
                                    : std::make_shared<const FairnessSnapshot>(state);
  for (std::size_t i = 0; i < path_.size(); ++i)  // condition 2
    eligible_taker_[i] =
        borrows_[i] && fair_->fairness[static_cast<std::size_t>(path_[i])].BelowFairShare();
}

std::string FairVictimEligibility::NotBelowFairShare() const {
  if (fair_ == nullptr) return {};
  for (std::size_t i = 0; i < path_.size(); ++i) {
    if (borrows_[i] == 0 || eligible_taker_[i] != 0) continue;
    const NodeFairness& f = fair_->fairness[static_cast<std::size_t>(path_[i])];
    return fmt::format("{}'s share {} is not below its fair share {}",
                       NodeName(state_.ledger().tree(), path_[i]), f.share.ToString(),
                       f.fair_value.ToString());
  }
  return {};
}

FairVictimEligibility::Scope FairVictimEligibility::ScopeOf(std::string_view ns) const {
  Scope scope;
  if (fair_ == nullptr || ns == pod_.ns || state_.QuotaFor(ns) == nullptr) return scope;
  const QuotaTree& tree = state_.ledger().tree();
  const int leaf = tree.LeafOf(ns);
  const int lca = tree.Lca(path_.front(), leaf);
  std::size_t j = path_.size();  // the virtual root above the preemptor's root
  for (std::size_t i = 0; i < path_.size(); ++i) {
    if (path_[i] == lca) j = i;
  }
  if (j == 0 || eligible_taker_[j - 1] == 0) return scope;
  int top = leaf;
  while (tree.parent(top) != lca)
    top = tree.parent(top);
  scope.any = true;
  scope.taker = path_[j - 1];
  scope.giver = top;
  scope.leaf = leaf;
  scope.distance = static_cast<int>(j);
  return scope;
}

bool FairVictimEligibility::MayTake(const Scope& scope, const NormalizedPod& victim,
                                    const ResourceList& giver_used) const {
  if (!scope.any) return false;
  if (options_.now_ms - EffectiveStartMs(victim) < options_.min_run_time_ms) return false;
  ResourceList after = giver_used;
  after.Subtract(victim.quota_request());
  const ShareKey giver_before = fair_->model.ShareOf(scope.giver, giver_used);
  const ShareKey giver_after = fair_->model.ShareOf(scope.giver, after);
  const ShareKey taker_after = fair_->model.ShareWith(state_, scope.taker, request_);
  return giver_after < giver_before && taker_after <= giver_after;
}

FairReclaimVerdict FairVictimEligibility::Check(
    const Scope& scope, const std::vector<const NormalizedPod*>& victims) const {
  FairReclaimCase c;
  c.taker = scope.taker;
  c.giver = scope.giver;
  c.taker_add = request_;
  c.now_ms = options_.now_ms;
  c.min_run_time_ms = options_.min_run_time_ms;
  for (const NormalizedPod* v : victims) {
    c.giver_removed.Add(v->quota_request());
    c.victim_started_ms = std::max(c.victim_started_ms, EffectiveStartMs(*v));
  }
  return FairReclaimAllowed(state_, fair_->model,
                            fair_->fairness[static_cast<std::size_t>(scope.taker)], c);
}

}  // namespace capext
