#include "core/quota_semantics.h"

#include <algorithm>
#include <array>
#include <limits>

#include <fmt/format.h>

namespace capext {
namespace {

constexpr int64_t kUnbounded = std::numeric_limits<int64_t>::max();
constexpr std::array<ResourceName, 3> kReferenceNatives = {kCpuName, kMemoryName,
                                                           kEphemeralStorageName};

bool IsReferenceNative(ResourceName name) {
  return name == kCpuName || name == kMemoryName || name == kEphemeralStorageName;
}

void AppendIfExceeds(ResourceName resource, int64_t used, int64_t add, int64_t limit,
                     std::vector<Excess>* out) {
  if (limit == kUnbounded) return;
  if (SaturatingAdd(used, add) > limit) out->push_back({resource, used, add, limit});
}

// The reference's exceeds(x1, x2, limit, bound): natives always; scalars named in x1 only,
// `bound` when the limit does not name them. `limit` nullopt never happens here (callers handle
// the nil lists).
std::vector<Excess> ReferenceExceeds(const ResourceList& x1, const ResourceList& x2,
                                     const ResourceList& limit, int64_t bound,
                                     std::string_view x1_is) {
  std::vector<Excess> out;
  for (auto native : kReferenceNatives) {
    const int64_t a = x1_is == "add" ? x2.Get(native) : x1.Get(native);
    const int64_t b = x1_is == "add" ? x1.Get(native) : x2.Get(native);
    AppendIfExceeds(native, a, b, limit.Get(native), &out);
  }
  for (const auto& [name, amount] : x1.entries()) {
    if (!IsScalarResourceName(name)) continue;
    const int64_t lim = limit.Find(name).value_or(bound);
    const int64_t other = x2.Get(name);
    if (x1_is == "add") {
      AppendIfExceeds(name, other, amount, lim, &out);
    } else {
      AppendIfExceeds(name, amount, other, lim, &out);
    }
  }
  return out;
}

}  // namespace

std::string DescribeExcesses(const std::vector<Excess>& excesses, const ResourceList& request,
                             std::string_view limit_word) {
  std::string out;
  for (const auto& e : excesses) {
    if (!out.empty()) out += "; ";
    const int64_t own = request.Get(e.resource);
    const int64_t nominated = SaturatingSub(e.add, own);
    out += e.resource.str();
    out += " used ";
    out += FormatAmount(e.resource, e.used);
    if (nominated != 0) {
      out += " + nominated ";
      out += FormatAmount(e.resource, nominated);
    }
    out += " + request ";
    out += FormatAmount(e.resource, own);
    out += " > ";
    out += limit_word;
    out += ' ';
    out += FormatAmount(e.resource, e.limit);
  }
  return out;
}

std::string DescribeRequestExcesses(const std::vector<Excess>& excesses,
                                    std::string_view limit_word) {
  std::string out;
  for (const auto& e : excesses) {
    if (!out.empty()) out += "; ";
    out += fmt::format("{} request {} > {} {}", e.resource, FormatAmount(e.resource, e.add),
                       limit_word, FormatAmount(e.resource, e.limit));
  }
  return out;
}

bool IsScalarResourceName(std::string_view name) {
  if (name.starts_with("hugepages-") || name.starts_with("attachable-volumes-")) return true;
  if (name.find("kubernetes.io/") != std::string_view::npos) return true;
  // Extended resources: domain-prefixed names outside the kubernetes.io namespace.
  return name.find('/') != std::string_view::npos;
}

ResourceList QuotaRequestOf(QuotaSemantics semantics, const Pod& pod) {
  ResourceList out;
  if (semantics == QuotaSemantics::kSchedulerPlugins) {
    for (const auto& [name, amount] : pod.requests.entries()) {
      if (IsReferenceNative(name) || IsScalarResourceName(name)) out.Set(name, amount);
    }
    return out;
  }
  out = pod.requests;
  out.Set(kPodsName, 1);
  if (!pod.accelerator_model.empty()) {
    for (const auto& [name, amount] : pod.requests.entries()) {
      const std::string_view text = name.str();
      if (text.find('/') == std::string_view::npos ||
          text.find("kubernetes.io/") != std::string_view::npos) {
        continue;
      }
      // The model name comes from a pod annotation: a full name table skips the mapping (the
      // pod is then counted under the plain resource only) rather than abort.
      ResourceName per_model;
      if (ResourceName::TryIntern(fmt::format("{}.{}", text, pod.accelerator_model), &per_model))
        out.Set(per_model, amount);
    }
  }
  return out;
}

bool Governs(QuotaSemantics semantics, const ElasticQuota& quota, ResourceName resource) {
  if (semantics == QuotaSemantics::kSchedulerPlugins) {
    return IsReferenceNative(resource) || IsScalarResourceName(resource);
  }
  return (quota.min && quota.min->Has(resource)) || (quota.max && quota.max->Has(resource));
}

std::vector<Excess> ExceedsMax(QuotaSemantics semantics, const ElasticQuota& quota,
                               const ResourceList& used, const ResourceList& add) {
  if (semantics == QuotaSemantics::kSchedulerPlugins) {
    if (!quota.max) return {};  // an absent max never rejects
    return ReferenceExceeds(add, used, *quota.max, kUnbounded, "add");
  }
  std::vector<Excess> out;
  if (!quota.max) return out;
  for (const auto& [name, limit] : quota.max->entries()) {
    AppendIfExceeds(name, used.Get(name), add.Get(name), limit, &out);
  }
  return out;
}

std::vector<Excess> ExceedsMin(QuotaSemantics semantics, const ElasticQuota& quota,
                               const ResourceList& used, const ResourceList& add) {
  if (semantics == QuotaSemantics::kSchedulerPlugins) {
    // A wholly absent min is 0
    // (docs/capacity-semantics.md#2-which-resources-a-quota-governs-two-semantics): the reference's
    // constructor fills it with zeros, so its "Min nil => over min" check never fires.
    // usedOverMinWith(add): scalars named in `add` only, even when `add` is empty.
    return ReferenceExceeds(add, used, quota.min.value_or(ResourceList{}), 0, "add");
  }
  std::vector<Excess> out;
  auto check = [&](ResourceName name) {
    const int64_t limit = quota.min ? quota.min->Get(name) : 0;
    AppendIfExceeds(name, used.Get(name), add.Get(name), limit, &out);
  };
  if (quota.min) {
    for (const auto& entry : quota.min->entries())
      check(entry.first);
  }
  if (quota.max) {
    for (const auto& entry : quota.max->entries()) {
      if (!quota.min || !quota.min->Has(entry.first)) check(entry.first);
    }
  }
  std::sort(out.begin(), out.end(),
            [](const Excess& a, const Excess& b) { return a.resource < b.resource; });
  return out;
}

bool IsBorrowing(QuotaSemantics semantics, const ElasticQuota& quota, const ResourceList& used) {
  if (semantics == QuotaSemantics::kSchedulerPlugins) {
    // usedOverMin(): scalars named in `used`.
    return !ReferenceExceeds(used, ResourceList{}, quota.min.value_or(ResourceList{}), 0, "used")
                .empty();
  }
  return !ExceedsMin(semantics, quota, used, ResourceList{}).empty();
}

void AggregateBuilder::AddQuota(const ElasticQuota& quota, const ResourceList& used) {
  if (semantics_ == QuotaSemantics::kSchedulerPlugins) {
    totals_.used.Add(used);
    if (quota.min) totals_.min.Add(*quota.min);
    return;
  }
  if (quota.min) {
    for (const auto& [name, amount] : quota.min->entries()) {
      totals_.min.AddTo(name, amount);
      if (std::find(totals_.checked.begin(), totals_.checked.end(), name) ==
          totals_.checked.end()) {
        totals_.checked.push_back(name);
      }
    }
  }
  for (const auto& [name, amount] : used.entries()) {
    if (Governs(semantics_, quota, name)) totals_.used.AddTo(name, amount);
  }
}

AggregateTotals AggregateBuilder::Build() && {
  std::sort(totals_.checked.begin(), totals_.checked.end());  // by name
  return std::move(totals_);
}

void ApplyUsageDelta(QuotaSemantics semantics, const ElasticQuota& quota, const ResourceList& delta,
                     AggregateTotals* totals) {
  for (const auto& [name, amount] : delta.entries()) {
    if (semantics == QuotaSemantics::kSchedulerPlugins || Governs(semantics, quota, name)) {
      totals->used.AddTo(name, amount);
    }
  }
}

std::vector<Excess> ExceedsAggregateMin(QuotaSemantics semantics, const ElasticQuota& quota,
                                        const AggregateTotals& totals, const ResourceList& add) {
  std::vector<Excess> out;
  if (semantics == QuotaSemantics::kSchedulerPlugins) {
    // exceeds(Σused + add, Σmin, 0): natives always, scalars named in Σused + add.
    for (auto native : kReferenceNatives) {
      AppendIfExceeds(native, totals.used.Get(native), add.Get(native), totals.min.Get(native),
                      &out);
    }
    ResourceList names = totals.used + add;
    for (const auto& entry : names.entries()) {
      if (!IsScalarResourceName(entry.first)) continue;
      AppendIfExceeds(entry.first, totals.used.Get(entry.first), add.Get(entry.first),
                      totals.min.Get(entry.first), &out);
    }
    return out;
  }
  for (const auto& name : totals.checked) {
    if (!Governs(semantics, quota, name)) continue;
    AppendIfExceeds(name, totals.used.Get(name), add.Get(name), totals.min.Get(name), &out);
  }
  return out;
}

}  // namespace capext
