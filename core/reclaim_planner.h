// The decision part of the reclaim controller (docs/capacity-semantics.md#8-the-reclaim-controller,
// steps 1-3) for one pending pod: nothing to do (it fits, it may not preempt, a reclaim is already
// in flight), or which node to claim and which victims to evict there. Executing the plan
// (evictions, the nomination, the requeue nudge, rate limits) is the caller's: the extender does it
// through the API server, the simulator on its own state.
// Thread-safety: pure; the caller keeps `state` still for the duration of a call.
#pragma once

#include <string>
#include <vector>

#include "core/preemption.h"

namespace capext {

enum class ReclaimDecision {
  kFitsNow,      // node fit and quota pass somewhere: kube-scheduler will place it
  kNotEligible,  // preemptionPolicy Never, or a terminating victim on its nominated node
  kInFlight,     // our nomination for it is still in force
  kNoCandidate,  // no node has victims whose removal lets it fit
  kEvict,        // evict `victims` on `node`, then nominate the pod there
};

struct ReclaimPlanForPod {
  ReclaimDecision decision = ReclaimDecision::kNoCandidate;
  std::string node;
  std::vector<const NormalizedPod*> victims;  // most important first
  int32_t pdb_violations = 0;
  // Why the pod does not fit now (kNoCandidate, kEvict: the quota's or the nodes' reason, with
  // its code), or why nothing is done (kNotEligible, kInFlight). Ok for kFitsNow.
  Status why;
  std::string explanation;     // kEvict: the victims chosen and why, for logs
  std::size_t candidates = 0;  // kEvict: how many candidate nodes were found
  // kEvict: where the victims meet the pod in the quota tree (victim_rule.h): the farthest
  // victim's distance, and that level described ("ElasticQuota team-a/team-a").
  int32_t distance = 0;
  std::string level;
};

struct ReclaimOptions {
  // kube-scheduler already preempts for pods of namespaces without a quota (lower-priority
  // victims only, which its own dry run finds); the simulator, which plays kube-scheduler too,
  // sets this.
  bool include_pods_without_quota = false;
  // Nodes to leave out of the search (e.g. a node whose eviction the API server just refused).
  std::vector<std::string> excluded_nodes;
  // Plan again for a pod that holds our nomination (a reclaim cut short after some evictions,
  // docs/capacity-semantics.md#8-the-reclaim-controller): its nomination is not "in flight", and
  // the room it holds counts as its own (node fit and quota never count a pod's own nomination).
  bool replan_own_nomination = false;
};

ReclaimPlanForPod PlanReclaim(const ClusterState& state, const NormalizedPod& pod,
                              const VictimOrder& victim_order, const ReclaimOptions& options);

const char* ReclaimDecisionName(ReclaimDecision decision);

}  // namespace capext
