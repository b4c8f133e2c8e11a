// The capacity-extender quota arithmetic (the default plugin of the quota-arithmetic extension
// point, core/quota_arithmetic.h; registered as "capacity-extender" in policies/): a quota governs
// exactly the resources named in its min or max
// (docs/capacity-semantics.md#2-which-resources-a-quota-governs-two-semantics). Missing from max =
// unbounded, missing from min = 0; `pods` counts pods, and a pod carrying an accelerator model is
// also counted under "<name>.<model>" for every extended resource it requests
// (docs/capacity-semantics.md#9-gpu-model-quotas-and-object-counts); the device demand of its
// ResourceClaims is charged too (docs/devices.md). The sum-of-mins check covers only resources that
// some root quota names in min, for a pod whose quota governs them
// (docs/capacity-semantics.md#32-the-sum-of-mins-check).
#include <algorithm>

#include <fmt/format.h>

#include "core/quota_semantics.h"

namespace capext {
namespace {

class NamedResourcesArithmetic final : public QuotaArithmetic {
 public:
  constexpr NamedResourcesArithmetic() = default;

  ResourceList QuotaRequestOf(const Pod& pod) const override {
    ResourceList out = pod.requests;
    out.Set(kPodsName, 1);
    if (pod.accelerator_model.empty()) return out;
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
    return out;
  }

  bool ChargesDeviceClaims() const override { return true; }

  bool Governs(const ElasticQuota& quota, ResourceName resource) const override {
    return (quota.min && quota.min->Has(resource)) || (quota.max && quota.max->Has(resource));
  }

  bool CountsInTotals(const ElasticQuota& quota, ResourceName resource) const override {
    return Governs(quota, resource);
  }

  std::vector<Excess> ExceedsMax(const ElasticQuota& quota, const ResourceList& used,
                                 const ResourceList& add) const override {
    std::vector<Excess> out;
    if (!quota.max) return out;
    for (const auto& [name, limit] : quota.max->entries()) {
      AppendIfExceeds(name, used.Get(name), add.Get(name), limit, &out);
    }
    return out;
  }

  std::vector<Excess> ExceedsMin(const ElasticQuota& quota, const ResourceList& used,
                                 const ResourceList& add) const override {
    std::vector<Excess> out;
    AnyMinLimit(quota, [&](ResourceName name, int64_t limit) {
      AppendIfExceeds(name, used.Get(name), add.Get(name), limit, &out);
      return false;
    });
    std::sort(out.begin(), out.end(),
              [](const Excess& a, const Excess& b) { return a.resource < b.resource; });
    return out;
  }

  // ExceedsMin(quota, used, {}) non-empty, stopping at the first resource over its min: the
  // victim rule asks it for every namespace, per tree level, on every reclaim attempt.
  bool IsBorrowing(const ElasticQuota& quota, const ResourceList& used) const override {
    return AnyMinLimit(
        quota, [&](ResourceName name, int64_t limit) { return Exceeds(used.Get(name), 0, limit); });
  }

  void AddToTotals(const ElasticQuota& quota, const ResourceList& used,
                   AggregateTotals* totals) const override {
    if (quota.min) {
      for (const auto& [name, amount] : quota.min->entries()) {
        totals->min.AddTo(name, amount);
        if (std::find(totals->checked.begin(), totals->checked.end(), name) ==
            totals->checked.end()) {
          totals->checked.push_back(name);
        }
      }
    }
    for (const auto& [name, amount] : used.entries()) {
      if (Governs(quota, name)) totals->used.AddTo(name, amount);
    }
  }

  std::vector<Excess> ExceedsAggregateMin(const ElasticQuota& quota, const AggregateTotals& totals,
                                          const ResourceList& add) const override {
    std::vector<Excess> out;
    for (const auto& name : totals.checked) {
      if (!Governs(quota, name)) continue;
      AppendIfExceeds(name, totals.used.Get(name), add.Get(name), totals.min.Get(name), &out);
    }
    return out;
  }

  std::vector<ResourceName> AlwaysCompared() const override { return {}; }

 private:
  // Calls visit(resource, its min) for every resource the quota governs: those in min, then
  // those only in max (min 0), until visit returns true; returns whether it did.
  template <typename Visit>
  static bool AnyMinLimit(const ElasticQuota& quota, Visit&& visit) {
    if (quota.min) {
      for (const auto& entry : quota.min->entries()) {
        if (visit(entry.first, quota.min->Get(entry.first))) return true;
      }
    }
    if (quota.max) {
      for (const auto& entry : quota.max->entries()) {
        if ((!quota.min || !quota.min->Has(entry.first)) && visit(entry.first, int64_t{0}))
          return true;
      }
    }
    return false;
  }
};

const NamedResourcesArithmetic kNamedResourcesArithmetic;

}  // namespace

const QuotaSemantics QuotaSemantics::kCapacityExtender{&kNamedResourcesArithmetic};

}  // namespace capext
