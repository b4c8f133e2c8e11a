// The scheduler-plugins quota arithmetic (a plugin of the quota-arithmetic extension point,
// core/quota_arithmetic.h; registered as "scheduler-plugins" in policies/): the reference
// CapacityScheduling plugin's arithmetic bit for bit
// (docs/capacity-semantics.md#2-which-resources-a-quota-governs-two-semantics). cpu, memory and
// ephemeral-storage are always compared; absent lists are defaulted; scalars are compared only for
// names in the left operand; `pods` is never counted; unknown names are ignored; no ResourceClaim
// is charged (docs/devices.md).
#include <array>
#include <limits>
#include <string_view>

#include "core/quota_semantics.h"

namespace capext {
namespace {

constexpr int64_t kUnbounded = std::numeric_limits<int64_t>::max();
constexpr std::array<ResourceName, 3> kReferenceNatives = {kCpuName, kMemoryName,
                                                           kEphemeralStorageName};

bool IsReferenceNative(ResourceName name) {
  return name == kCpuName || name == kMemoryName || name == kEphemeralStorageName;
}

// Which operand the reference's exceeds() walks for scalar names.
enum class Left { kAdd, kUsed };

// The reference's exceeds(x1, x2, limit, bound): natives always; scalars named in x1 only,
// `bound` when the limit does not name them.
std::vector<Excess> ReferenceExceeds(const ResourceList& x1, const ResourceList& x2,
                                     const ResourceList& limit, int64_t bound, Left x1_is) {
  std::vector<Excess> out;
  for (auto native : kReferenceNatives) {
    const int64_t a = x1_is == Left::kAdd ? x2.Get(native) : x1.Get(native);
    const int64_t b = x1_is == Left::kAdd ? x1.Get(native) : x2.Get(native);
    AppendIfExceeds(native, a, b, limit.Get(native), &out);
  }
  for (const auto& [name, amount] : x1.entries()) {
    if (!IsScalarResourceName(name)) continue;
    const int64_t lim = limit.Find(name).value_or(bound);
    const int64_t other = x2.Get(name);
    if (x1_is == Left::kAdd) {
      AppendIfExceeds(name, other, amount, lim, &out);
    } else {
      AppendIfExceeds(name, amount, other, lim, &out);
    }
  }
  return out;
}

class ReferenceArithmetic final : public QuotaArithmetic {
 public:
  constexpr ReferenceArithmetic() = default;

  // The pod's request restricted to the names the reference counts, without pods.
  ResourceList QuotaRequestOf(const Pod& pod) const override {
    ResourceList out;
    for (const auto& [name, amount] : pod.requests.entries()) {
      if (IsReferenceNative(name) || IsScalarResourceName(name)) out.Set(name, amount);
    }
    return out;
  }

  bool ChargesDeviceClaims() const override { return false; }

  bool Governs(const ElasticQuota&, ResourceName resource) const override {
    return IsReferenceNative(resource) || IsScalarResourceName(resource);
  }

  // The reference sums every quota's usage.
  bool CountsInTotals(const ElasticQuota&, ResourceName) const override { return true; }

  std::vector<Excess> ExceedsMax(const ElasticQuota& quota, const ResourceList& used,
                                 const ResourceList& add) const override {
    if (!quota.max) return {};  // an absent max never rejects
    return ReferenceExceeds(add, used, *quota.max, kUnbounded, Left::kAdd);
  }

  // A wholly absent min is 0
  // (docs/capacity-semantics.md#2-which-resources-a-quota-governs-two-semantics): the reference's
  // constructor fills it with zeros, so its "Min nil => over min" check never fires.
  // usedOverMinWith(add): scalars named in `add` only, even when `add` is empty.
  std::vector<Excess> ExceedsMin(const ElasticQuota& quota, const ResourceList& used,
                                 const ResourceList& add) const override {
    return ReferenceExceeds(add, used, quota.min.value_or(ResourceList{}), 0, Left::kAdd);
  }

  // usedOverMin(): scalars named in `used`.
  bool IsBorrowing(const ElasticQuota& quota, const ResourceList& used) const override {
    return !ReferenceExceeds(used, ResourceList{}, quota.min.value_or(ResourceList{}), 0,
                             Left::kUsed)
                .empty();
  }

  void AddToTotals(const ElasticQuota& quota, const ResourceList& used,
                   AggregateTotals* totals) const override {
    totals->used.Add(used);
    if (quota.min) totals->min.Add(*quota.min);
  }

  // exceeds(Σused + add, Σmin, 0): natives always, scalars named in Σused + add.
  std::vector<Excess> ExceedsAggregateMin(const ElasticQuota&, const AggregateTotals& totals,
                                          const ResourceList& add) const override {
    std::vector<Excess> out;
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

  std::vector<ResourceName> AlwaysCompared() const override {
    return {kReferenceNatives.begin(), kReferenceNatives.end()};
  }
};

const ReferenceArithmetic kReferenceArithmetic;

}  // namespace

const QuotaSemantics QuotaSemantics::kSchedulerPlugins{&kReferenceArithmetic};

}  // namespace capext
