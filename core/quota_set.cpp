#include "core/quota_set.h"

#include <algorithm>

namespace capext {

bool QuotaSet::Upsert(const ElasticQuota& quota) {
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
  return true;
}

bool QuotaSet::Delete(std::string_view ns, std::string_view name) {
  duplicates_.erase(
      std::remove_if(duplicates_.begin(), duplicates_.end(),
                     [&](const ElasticQuota& d) { return d.ns == ns && d.name == name; }),
      duplicates_.end());
  auto it = quotas_.find(ns);
  if (it == quotas_.end() || it->second.name != name) return false;
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
  return true;
}

}  // namespace capext
