// QuotaMaxRule, a built-in admission rule (core/admission_rule.h): the max of the pod's quota and
// of every ancestor (docs/capacity-semantics.md#31-the-max-check,
// docs/quota-hierarchy.md#admission-filter-and-the-bind-check). First a request above the max of
// any level alone (UnschedulableAndUnresolvable: no change of usage can help; the nearest such
// quota), then used(x) + r_x against max(x) from the pod's quota up to the root, naming the first
// quota that blocks. Declares the used, spec and nominations of its tree: r_x holds the
// nominations in each level's subtree.
#include "core/admission_rule.h"
#include "core/reasons.h"

namespace capext {
namespace {

class QuotaMax final : public AdmissionRule {
 public:
  std::string_view name() const override { return "quota-max"; }
  DeclaredChanges Declared() const override { return kChangesInTree; }

  Status Check(QuotaSemantics semantics, const AdmissionPath& path, const AdmissionUsage& usage,
               const Demand& demand) const override {
    for (std::size_t i = 0; i < path.levels.size(); ++i) {
      auto alone = ExceedsMax(semantics, *path.levels[i].quota, ResourceList{}, demand.request);
      if (alone.empty()) continue;
      const std::string details = DescribeRequestExcesses(alone, "max");
      const std::string subject = GroupSubject(demand, alone);
      return Status::Unresolvable(
          subject.empty()
              ? reasons::QuotaRequestAboveMax(demand.pod_key, BlockingQuota(path, i), details)
              : subject + reasons::QuotaRequestAboveMaxRule(BlockingQuota(path, i), details));
    }
    for (std::size_t i = 0; i < path.levels.size(); ++i) {
      const auto& level = path.levels[i];
      const ResourceList& node_used = usage.UsedOf(level.node);
      auto over = path.own_hold.empty()
                      ? ExceedsMax(semantics, *level.quota, node_used, path.InEq(level))
                      : ExceedsMax(semantics, *level.quota, path.UsedWithoutOwnHold(node_used),
                                   path.InEq(level));
      if (over.empty()) continue;
      const std::string details = DescribeExcesses(over, demand.request, "max");
      const std::string subject = GroupSubject(demand, over);
      return Status::Unschedulable(
          subject.empty()
              ? reasons::QuotaMaxExceeded(demand.pod_key, BlockingQuota(path, i), details)
              : subject + reasons::QuotaMaxRule(BlockingQuota(path, i), details));
    }
    return {};
  }
};

}  // namespace

const AdmissionRule& QuotaMaxRule() {
  static const QuotaMax rule;
  return rule;
}

}  // namespace capext
