#include "core/quota_book.h"

#include <algorithm>

namespace capext {

bool QuotaBook::UpsertQuota(const ElasticQuota& quota) {
  auto it = quotas_.find(quota.ns);
  if (it != quotas_.end() && it->second.name != quota.name) {
    auto dup = std::find_if(duplicates_.begin(), duplicates_.end(), [&](const ElasticQuota& d) {
      return d.ns == quota.ns && d.name == quota.name;
    });
    if (dup != duplicates_.end()) {
      *dup = quota;
    } else {
      duplicates_.push_back(quota);
    }
    return false;
  }
  quotas_[quota.ns] = quota;
  RebuildTotals();
  return true;
}

void QuotaBook::DeleteQuota(std::string_view ns, std::string_view name) {
  duplicates_.erase(
      std::remove_if(duplicates_.begin(), duplicates_.end(),
                     [&](const ElasticQuota& d) { return d.ns == ns && d.name == name; }),
      duplicates_.end());
  auto it = quotas_.find(ns);
  if (it == quotas_.end() || it->second.name != name) return;
  quotas_.erase(it);
  // The oldest waiting duplicate (by creation time, then name) takes over the namespace.
  auto best = duplicates_.end();
  for (auto d = duplicates_.begin(); d != duplicates_.end(); ++d) {
    if (d->ns != ns) continue;
    if (best == duplicates_.end() || d->creation_ms < best->creation_ms ||
        (d->creation_ms == best->creation_ms && d->name < best->name)) {
      best = d;
    }
  }
  if (best != duplicates_.end()) {
    quotas_[best->ns] = *best;
    duplicates_.erase(best);
  }
  RebuildTotals();
}

const ElasticQuota* QuotaBook::QuotaFor(std::string_view ns) const {
  auto it = quotas_.find(ns);
  return it == quotas_.end() ? nullptr : &it->second;
}

void QuotaBook::ChangeUsage(std::string_view ns, const ResourceList& delta, bool reserved) {
  auto it = usage_.find(ns);
  if (it == usage_.end()) it = usage_.emplace(std::string(ns), Usage{}).first;
  (reserved ? it->second.reserved : it->second.bound).Add(delta);
  if (const ElasticQuota* quota = QuotaFor(ns))
    ApplyUsageDelta(semantics_, *quota, delta, &totals_);
}

void QuotaBook::AddBound(std::string_view ns, const ResourceList& r) {
  ChangeUsage(ns, r, false);
}
void QuotaBook::AddReserved(std::string_view ns, const ResourceList& r) {
  ChangeUsage(ns, r, true);
}

void QuotaBook::RemoveBound(std::string_view ns, const ResourceList& r) {
  ResourceList negative;
  negative.Subtract(r);
  ChangeUsage(ns, negative, false);
}

void QuotaBook::RemoveReserved(std::string_view ns, const ResourceList& r) {
  ResourceList negative;
  negative.Subtract(r);
  ChangeUsage(ns, negative, true);
}

ResourceList QuotaBook::Used(std::string_view ns) const {
  auto it = usage_.find(ns);
  if (it == usage_.end()) return {};
  return it->second.bound + it->second.reserved;
}

ResourceList QuotaBook::Bound(std::string_view ns) const {
  auto it = usage_.find(ns);
  return it == usage_.end() ? ResourceList{} : it->second.bound;
}

ResourceList QuotaBook::Reserved(std::string_view ns) const {
  auto it = usage_.find(ns);
  return it == usage_.end() ? ResourceList{} : it->second.reserved;
}

void QuotaBook::RebuildTotals() {
  AggregateBuilder builder(semantics_);
  for (const auto& [ns, quota] : quotas_)
    builder.AddQuota(quota, Used(ns));
  totals_ = std::move(builder).Build();
}

}  // namespace capext
