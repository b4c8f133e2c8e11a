// Victim selection on one node (capacity-semantics 1.2, the reference's SelectVictimsOnNode with
// its double-removal bug fixed): which pods must go so that `preemptor` fits `node` and its quota.
// Works on a private what-if copy of the node's usage and of the quotas' usage; the state is
// never modified.
// Thread-safety: pure; the caller keeps `state` still for the duration of the call.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/cluster_state.h"
#include "core/quota_admission.h"
#include "core/status.h"

namespace capext {

// Returns true when `a` is more important than `b` (kept over b). The default is
// MoreImportantPod (priority, then earlier start); policies/ may supply others.
using MoreImportantFn = std::function<bool(const Pod& a, const Pod& b)>;

struct NodeVictims {
  std::string node;
  bool candidate = false;
  std::vector<const NormalizedPod*> victims;  // most important first
  int32_t pdb_violations = 0;
  Status why_not;  // why the node is not a candidate (unresolvable: no victim can help)
};

// What SelectVictimsOnNode learns once and reuses across the nodes of one preemptor (the quota
// and usage of each namespace it meets, buffers). Defined in victim_selection.cpp.
struct VictimSelectionScratch;

// Everything about the preemptor that does not depend on the node; compute it once.
// Thread-safety: one thread at a time per context (and its copies: they share `scratch`).
struct PreemptorContext {
  const NormalizedPod* pod = nullptr;
  const ElasticQuota* quota = nullptr;  // the preemptor's namespace quota, or nullptr
  NominatedSums sums;                   // inEQ / all
  bool more_than_min = false;           // used(q) + inEQ exceeds min(q), before any removal
  // Set by MakePreemptorContext; valid while the state is not modified. Without it,
  // SelectVictimsOnNode builds its own per call (same results, slower).
  std::shared_ptr<VictimSelectionScratch> scratch;
};

// The context keeps a pointer to `preemptor`: it must outlive the context (a temporary cannot).
PreemptorContext MakePreemptorContext(const ClusterState& state, const NormalizedPod& preemptor);
PreemptorContext MakePreemptorContext(const ClusterState& state,
                                      NormalizedPod&& preemptor) = delete;

NodeVictims SelectVictimsOnNode(const ClusterState& state, const PreemptorContext& preemptor,
                                const NodeInfo& node, const MoreImportantFn& more_important);

// PDB split of kube-scheduler's filterPodsWithPDBViolation: `pods` (most important first) into
// violating and non-violating, order kept.
void SplitByPdbViolation(const std::vector<PodDisruptionBudget>& pdbs,
                         const std::vector<const NormalizedPod*>& pods,
                         std::vector<const NormalizedPod*>* violating,
                         std::vector<const NormalizedPod*>* non_violating);

}  // namespace capext
