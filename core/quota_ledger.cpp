#include "core/quota_ledger.h"

#include <algorithm>

namespace capext {
namespace {
const ResourceList kEmpty;
}  // namespace

void QuotaLedger::ChangeUsage(const QuotaSet& quotas, std::string_view ns,
                              const ResourceList& quota_request, Part which, int sign) {
  auto it = usage_.find(ns);
  if (it == usage_.end()) it = usage_.emplace(std::string(ns), Usage{}).first;
  Usage& u = it->second;
  ResourceList& part = which == Part::kReserved ? u.reserved
                       : which == Part::kHeld   ? u.held
                                                : u.bound;
  (void)quotas;
  const int leaf = tree_.LeafOf(ns);
  const ElasticQuota* root = leaf < 0 ? nullptr : &tree_.quota(tree_.RootOf(leaf));
  // The same saturating arithmetic as adding the list, or subtracting it.
  for (const auto& [name, amount] : quota_request.entries()) {
    const int64_t delta = sign > 0 ? amount : SaturatingSub(0, amount);
    part.AddTo(name, delta);
    u.used.AddTo(name, delta);
    for (int node = leaf; node >= 0; node = tree_.parent(node))
      node_used_[node].AddTo(name, delta);
    if (root != nullptr && CountsInTotals(semantics_, *root, name)) totals_.used.AddTo(name, delta);
  }
  if (quota_request.empty()) return;
  for (int node = leaf; node >= 0; node = tree_.parent(node))
    RefreshBorrowing(node);
}

void QuotaLedger::RefreshBorrowing(int node) {
  node_borrowing_[static_cast<std::size_t>(node)] =
      IsBorrowing(semantics_, tree_.quota(node), node_used_[node]) ? 1 : 0;
}

const ResourceList& QuotaLedger::Used(std::string_view ns) const {
  auto it = usage_.find(ns);
  return it == usage_.end() ? kEmpty : it->second.used;
}

const ResourceList& QuotaLedger::Bound(std::string_view ns) const {
  auto it = usage_.find(ns);
  return it == usage_.end() ? kEmpty : it->second.bound;
}

const ResourceList& QuotaLedger::Reserved(std::string_view ns) const {
  auto it = usage_.find(ns);
  return it == usage_.end() ? kEmpty : it->second.reserved;
}

const ResourceList& QuotaLedger::Held(std::string_view ns) const {
  auto it = usage_.find(ns);
  return it == usage_.end() ? kEmpty : it->second.held;
}

void QuotaLedger::RebuildQuotas(const QuotaSet& quotas) {
  tree_.Rebuild(quotas);
  node_used_.assign(static_cast<std::size_t>(tree_.size()), ResourceList{});
  for (const auto& [ns, usage] : usage_) {
    for (int node = tree_.LeafOf(ns); node >= 0; node = tree_.parent(node))
      node_used_[node].Add(usage.used);
  }
  node_borrowing_.assign(static_cast<std::size_t>(tree_.size()), 0);
  for (int node = 0; node < tree_.size(); ++node)
    RefreshBorrowing(node);
  AggregateBuilder builder(semantics_);
  for (int root : tree_.roots())
    builder.AddQuota(tree_.quota(root), node_used_[root]);
  totals_ = std::move(builder).Build();
}

const Reservation* QuotaLedger::FindReservation(std::string_view uid) const {
  auto it = reservations_.find(uid);
  return it == reservations_.end() ? nullptr : &it->second;
}

void QuotaLedger::AddReservation(const QuotaSet& quotas, Reservation r) {
  ChangeUsage(quotas, r.ns, r.quota_request, /*reserved=*/true, +1);
  std::string uid = r.uid;
  reservations_.emplace(std::move(uid), std::move(r));
}

bool QuotaLedger::RemoveReservation(const QuotaSet& quotas, std::string_view uid,
                                    Reservation* removed) {
  auto it = reservations_.find(uid);
  if (it == reservations_.end()) return false;
  ChangeUsage(quotas, it->second.ns, it->second.quota_request, /*reserved=*/true, -1);
  *removed = std::move(it->second);
  reservations_.erase(it);
  return true;
}

void QuotaLedger::RenewReservation(std::string_view uid, int64_t expires_ms) {
  auto it = reservations_.find(uid);
  if (it != reservations_.end()) it->second.expires_ms = expires_ms;
}

const QuotaHold* QuotaLedger::FindHold(std::string_view uid) const {
  auto it = holds_.find(uid);
  return it == holds_.end() ? nullptr : &it->second;
}

void QuotaLedger::PutHold(const QuotaSet& quotas, QuotaHold h) {
  QuotaHold old;
  RemoveHold(quotas, h.uid, &old);
  ChangeUsage(quotas, h.ns, h.quota_request, Part::kHeld, +1);
  std::string uid = h.uid;
  holds_.emplace(std::move(uid), std::move(h));
}

bool QuotaLedger::RemoveHold(const QuotaSet& quotas, std::string_view uid, QuotaHold* removed) {
  auto it = holds_.find(uid);
  if (it == holds_.end()) return false;
  ChangeUsage(quotas, it->second.ns, it->second.quota_request, Part::kHeld, -1);
  *removed = std::move(it->second);
  holds_.erase(it);
  return true;
}

const Nomination* QuotaLedger::FindOurNomination(std::string_view uid) const {
  auto it = ours_.find(uid);
  return it == ours_.end() ? nullptr : &it->second;
}

std::vector<std::string> QuotaLedger::Expired(int64_t now_ms) const {
  std::vector<std::string> expired;
  for (const auto& [uid, r] : reservations_) {
    if (r.expires_ms <= now_ms) expired.push_back(uid);
  }
  for (const auto& [uid, n] : ours_) {
    if (n.expires_ms <= now_ms) expired.push_back(uid);
  }
  for (const auto& [uid, h] : holds_) {
    if (!h.derived && h.expires_ms <= now_ms) expired.push_back(uid);
  }
  std::sort(expired.begin(), expired.end());
  expired.erase(std::unique(expired.begin(), expired.end()), expired.end());
  return expired;
}

}  // namespace capext
