// Victim selection on one node (docs/capacity-semantics.md#4-victims-on-one-node, the reference's
// SelectVictimsOnNode with its double-removal bug fixed, over the quota tree:
// docs/quota-hierarchy.md): which pods must go so that `preemptor` fits `node` and its quotas.
// Works on a private what-if copy of the node's usage, of the quota tree's usage and of the
// cluster-wide sums; the state is never modified. Who may be taken is VictimRule's (victim_rule.h);
// nearer victims in the tree are taken first and reprieved last.
// Thread-safety: pure; the caller keeps `state` still for the duration of the call.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/cluster_state.h"
#include "core/quota_admission.h"
#include "core/status.h"
#include "core/victim_order.h"
#include "core/victim_rule.h"

namespace capext {

struct NodeVictims {
  std::string node;
  bool candidate = false;
  std::vector<const NormalizedPod*> victims;  // most important first
  // The admitted members (held, no node) of the cores taken: not victims (their holds end with
  // the core), but the candidate order counts them as the victims they would be bound
  // (docs/capacity-semantics.md#5-choosing-among-candidate-nodes), started at their admission.
  struct Released {
    const NormalizedPod* pod = nullptr;
    int64_t start_ms = 0;  // the hold's admission time
  };
  std::vector<Released> released;
  int32_t pdb_violations = 0;
  int32_t distance = 0;  // the farthest victim's distance in the quota tree (victim_rule.h)
  Status why_not;        // why the node is not a candidate (unresolvable: no victim can help)
};

// What SelectVictimsOnNode learns once and reuses across the nodes of one preemptor (the scope
// and usage of each namespace it meets, buffers). Defined in victim_selection.cpp.
struct VictimSelectionScratch;

// Everything about the preemptor that does not depend on the node; compute it once.
// Thread-safety: one thread at a time per context (and its copies: they share `scratch`).
struct PreemptorContext {
  const NormalizedPod* pod = nullptr;
  const ElasticQuota* quota = nullptr;  // the preemptor's namespace quota, or nullptr
  AdmissionPath path;                   // admission with the nominated sums (inEQ / all)
  AdmissionPath alone;                  // admission with the request alone
  std::shared_ptr<VictimRule> rule;     // who may be a victim
  bool more_than_min = false;           // the pod takes its leaf above its min (rule's)
  // Set by MakePreemptorContext; valid while the state is not modified. Without it,
  // SelectVictimsOnNode builds its own per call (same results, slower).
  std::shared_ptr<VictimSelectionScratch> scratch;
  const NominatedSums& sums() const { return path.sums; }
};

// The context keeps pointers to `preemptor`: it must outlive the context (a temporary cannot).
PreemptorContext MakePreemptorContext(const ClusterState& state, const NormalizedPod& preemptor);
PreemptorContext MakePreemptorContext(const ClusterState& state,
                                      NormalizedPod&& preemptor) = delete;

NodeVictims SelectVictimsOnNode(const ClusterState& state, const PreemptorContext& preemptor,
                                const NodeInfo& node, const VictimOrder& victim_order);

// PDB split of kube-scheduler's filterPodsWithPDBViolation: `pods` (most important first) into
// violating and non-violating, order kept.
void SplitByPdbViolation(const std::vector<PodDisruptionBudget>& pdbs,
                         const std::vector<const NormalizedPod*>& pods,
                         std::vector<const NormalizedPod*>* violating,
                         std::vector<const NormalizedPod*>* non_violating);

}  // namespace capext
