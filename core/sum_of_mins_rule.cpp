// SumOfMinsRule, a built-in admission rule (core/admission_rule.h): the cluster-wide rule
// (docs/capacity-semantics.md#32-the-sum-of-mins-check): Σused + all against Σmin, both over the
// root quotas, where `all` is r at the pod's quota plus the requests of nominated pods of
// namespaces outside its subtree whose own quota is not borrowing. Declares the used, spec and
// nominations of every quota namespace (the sums, and which quotas borrow).
#include "core/admission_rule.h"
#include "core/quota_admission.h"
#include "core/reasons.h"

namespace capext {
namespace {

class SumOfMins final : public AdmissionRule {
 public:
  std::string_view name() const override { return "sum-of-mins"; }
  DeclaredChanges Declared() const override { return kChangesInAnyQuota; }

  Status Check(QuotaSemantics semantics, const AdmissionPath& path, const AdmissionUsage& usage,
               const Demand& demand) const override {
    auto over = path.own_hold.empty()
                    ? ExceedsAggregateMin(semantics, *path.root, usage.Totals(), path.sums.all)
                    : ExceedsAggregateMin(semantics, *path.root,
                                          TotalsWithoutOwnHold(semantics, path, usage.Totals()),
                                          path.sums.all);
    if (over.empty()) return {};
    const std::string details = DescribeExcesses(over, demand.request, "min");
    const std::string subject = GroupSubject(demand, over);
    return Status::Unschedulable(subject.empty()
                                     ? reasons::AggregateMinExceeded(demand.pod_key, details)
                                     : subject + reasons::AggregateMinRule(details));
  }
};

}  // namespace

const AdmissionRule& SumOfMinsRule() {
  static const SumOfMins rule;
  return rule;
}

}  // namespace capext
