// A test admission rule, "test-at-most-2-pods" (docs/architecture.md#adding-a-rule): a quota
// holds at most 2 pods. It shows that a rule is one file plus one registry line: the line at the
// end puts it in the registry (policies/admission_rules.h), and from there a profile picks it by
// name (the extender config's admissionRules, capacity-sim's --policy
// capacity+test-at-most-2-pods), /explain gives its reason, and the reclaim loop wakes the pods it
// refuses on what it declares. The rule: at the pod's own quota, pods used (bound + reserved, the
// pod's own hold left out) plus the pods of r there (the demand and the nominated pods counted with
// it) must not exceed 2. It reads the `pods` count the capacity-extender arithmetic keeps (every
// pod counts `pods: 1`, docs/capacity-semantics.md#9-gpu-model-quotas-and-object-counts); under
// scheduler-plugins, which never counts pods, it never refuses. Declares the used, spec and
// nominations of its tree.
#include <fmt/format.h>

#include "core/admission_rule.h"
#include "policies/admission_rules.h"

namespace capext {
namespace {

constexpr int64_t kMaxPods = 2;

class AtMostPodsPerQuota final : public AdmissionRule {
 public:
  std::string_view name() const override { return "test-at-most-2-pods"; }
  DeclaredChanges Declared() const override { return kChangesInTree; }

  Status Check(QuotaSemantics, const AdmissionPath& path, const AdmissionUsage& usage,
               const Demand& demand) const override {
    const AdmissionPath::Level& own = path.levels.front();
    const int64_t used = path.UsedWithoutOwnHold(usage.UsedOf(own.node)).Get(kPodsName);
    const int64_t add = path.InEq(own).Get(kPodsName);
    if (used + add <= kMaxPods) return {};
    return Status::Unschedulable(fmt::format(
        "pod {} exceeds ElasticQuota {}'s test limit of {} pods: pods used {} + request {} > {}",
        demand.pod_key, own.quota->Key(), kMaxPods, used, add, kMaxPods));
  }
};

const AtMostPodsPerQuota kRule;

}  // namespace

const AdmissionRuleRegistration kAtMostPodsRegistration("test-at-most-2-pods",
                                                        "test: a quota holds at most 2 pods",
                                                        []() -> const AdmissionRule* {
                                                          return &kRule;
                                                        });

}  // namespace capext
