// Explanations for one pod (`capacity-extender explain`, POST /explain): the quota arithmetic of
// the admission check (used, reserved, request, nominated sums, min, max, cluster-wide totals;
// docs/capacity-semantics.md#3-admission-may-this-pod-run-in-its-quota), per-node fit reasons, and
// what reclaim would evict (docs/capacity-semantics.md#8-the-reclaim-controller), in JSON or human
// text. Fair sharing's arithmetic is shown at every level always; with `fair.enabled` (config
// fairSharing, built by FairReclaimOptionsFrom as for the reclaim controller) the plan across nodes
// also takes victims by reclaim between borrowers
// (docs/fair-sharing.md#6-reclaim-between-borrowers), decided at `fair.now_ms`. Thread-safety:
// pure; the caller keeps `state` still.
#pragma once

#include <string>

#include "core/cluster_state.h"
#include "core/fair_victim_eligibility.h"
#include "core/victim_selection.h"

namespace capext {

std::string ExplainPodJson(const ClusterState& state, const NormalizedPod& pod,
                           const VictimOrder& victim_order, const FairReclaimOptions& fair = {});
std::string ExplainPodText(const ClusterState& state, const NormalizedPod& pod,
                           const VictimOrder& victim_order, const FairReclaimOptions& fair = {});

}  // namespace capext
