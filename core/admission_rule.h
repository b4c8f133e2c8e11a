// AdmissionRule: the admission extension point (docs/architecture.md#extension-points): may this
// demand's quota take it? A demand is one pod, or several pods of one namespace taken together (a
// group's need, docs/workloads.md): their summed quota request, their count, and the pod that
// stands for them (its namespace, priority, own hold and the nominations counted with it, all in
// the AdmissionPath).
// Every profile runs the built-in rules first, in this order (their reasons keep the words of
// docs/capacity-semantics.md#10-reasons):
//   QuotaMaxRule   the max of the pod's quota and of every ancestor
//                  (docs/capacity-semantics.md#31-the-max-check; a request alone above a max is
//                  Unresolvable);
//   SumOfMinsRule  the sum of mins over the roots
//   (docs/capacity-semantics.md#32-the-sum-of-mins-check);
// then the profile's extra rules (QuotaSemantics::extra_rules), registered by name in policies/.
// The first rule that does not pass decides. A namespace without a quota is never asked.
// Contract for every rule: pure, deterministic, stateless (one instance serves every thread).
// Check returns OK, Unschedulable (a change the rule declares may help) or Unresolvable (only a
// change of a quota's spec can); Declared() covers every input of its verdict besides the demand
// itself (docs/architecture.md#declared-changes-and-wake-rules): a test changes what a rule does
// not declare and fails when its verdict moves.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "core/admission_path.h"
#include "core/declared_changes.h"
#include "core/quota_semantics.h"
#include "core/status.h"

namespace capext {

// The demand admission decides about.
struct Demand {
  const ResourceList& request;  // the quota request of the pod, or the group's summed one
  int pods = 1;                 // how many pods it stands for
  std::string_view pod_key;     // the pod reasons name (a group's: the one admitted in its place)
  std::string_view group;       // the group's Display(); empty for one pod
};

// The usage a rule reads: the state's, or a what-if's (victim selection, the plan search).
class AdmissionUsage {
 public:
  // Used (bound + reserved) of a quota node of the tree, the own hold included (rules take it
  // out with AdmissionPath::UsedWithoutOwnHold).
  virtual const ResourceList& UsedOf(int node) const = 0;
  // The cluster-wide sums over the roots.
  virtual const AggregateTotals& Totals() const = 0;

 protected:
  ~AdmissionUsage() = default;
};

class AdmissionRule {
 public:
  virtual ~AdmissionRule() = default;
  // The rule's name in the registry (policies/) and in logs.
  virtual std::string_view name() const = 0;
  // The changes that can alter its verdict (core/declared_changes.h).
  virtual DeclaredChanges Declared() const = 0;
  // REQUIRES: path.quota != nullptr.
  virtual Status Check(QuotaSemantics semantics, const AdmissionPath& path,
                       const AdmissionUsage& usage, const Demand& demand) const = 0;
};

// The built-in rules (quota_max_rule.cpp, sum_of_mins_rule.cpp).
const AdmissionRule& QuotaMaxRule();
const AdmissionRule& SumOfMinsRule();

// The union of the declarations of every rule `semantics` runs (built-in and extra).
DeclaredChanges AdmissionChanges(QuotaSemantics semantics);

// --- for the rules' reasons --------------------------------------------------------------------
// "ElasticQuota team-a/team-a (parent of a2/a2)": the quota of `level` and its relation to the
// pod's quota.
std::string BlockingQuota(const AdmissionPath& path, std::size_t level);
// "gang eq1/a: 4 pods need cpu 16: " for the resources of `excesses` (a group's subject), or ""
// for a pod.
std::string GroupSubject(const Demand& demand, const std::vector<Excess>& excesses);

}  // namespace capext
