// The discrete-event simulation behind `capacity-sim run`, `compare` and `scenario` (the one
// simulator driver: one scheduling cycle and one reclaim step, sim_engine.h): a workload's pods
// arrive, wait in kube-scheduler's queue, are filtered (the admission check,
// docs/capacity-semantics.md#3-admission-may-this-pod-run-in-its-quota, and node fit), scored and
// bound; they complete after their duration; pods that fit nowhere get the reclaim controller's
// plan (victim selection on the candidate nodes, the candidate order to choose), whose victims are
// evicted at once and whose node is nominated for the preemptor. Every decision is made by the
// production core (core/) on a ClusterState; the engine only decides when to ask.
//
// Event order at one instant: completions, then nomination expiries, then arrivals (in name
// order), then a reclaim-controller pass if one is due, then scheduling until the queue is
// quiet (pending pods in priority, creation-time, name order; see pending_queue.h for which
// pods are retried when). A script (scenario files) adds steps: each step due at the instant is
// applied after the arrivals, the cluster settles as above, then `after_step` sees the result;
// the next step follows.
//
// Evictions: an evicted pod counts as evicted (TenantCounters::evictions_suffered, and in `run`
// since it started) and is NOT resubmitted, as a bare pod would not be; with
// `resubmit_evicted` it goes back to the queue at once as if its controller re-created it
// (creation time = eviction time, full duration again).
//
// Node sampling (`NodeSampling::kKubeScheduler`, the default) is kube-scheduler's: nodes are
// examined from a rotating start index (name order) until numFeasibleNodesToFind feasible nodes
// are found (percentageOfNodesToScore; 0 = adaptive 50 - nodes/125, at least 5%, at least 100
// nodes), the best score wins, ties to the first name; reclaim examines at most
// max(100, 10% of nodes) candidate nodes from a rotating offset, like DefaultPreemption.
// `kAll` examines every node for both (the reclaim controller's "every node, not a sample",
// docs/capacity-semantics.md#8-the-reclaim-controller).
//
// The reclaim controller runs for a pod when its scheduling attempt fails, and every
// `reclaim_interval_ms` for the pods still parked. A failed reclaim for a group of identical
// pods is not retried before one interval has passed (the controller's period; kube-scheduler
// likewise backs failed pods off for 1-10 s) nor before the cluster has changed. A pod with a
// reclaim in flight (a nomination) is not served twice.
// Deterministic: no clocks or unseeded randomness in decisions; wall time is only measured.
// Thread-safety: RunSimulation is reentrant (each call owns its state).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "bench/sim/group_metrics.h"
#include "bench/sim/quota_plan.h"
#include "bench/sim/sim_metrics.h"
#include "bench/sim/workload.h"
#include "config/snapshot.h"
#include "core/cluster_state.h"
#include "core/pod_group.h"
#include "policies/node_scorers.h"
#include "policies/policies.h"
#include "policies/victim_orders.h"

namespace capext {

enum class NodeSampling { kKubeScheduler, kAll };

// One step of a script (capacity-sim scenario): at `t_ms`, pods created and pods deleted, applied
// together. A created pod that is pending (no node, not finished) is queued like an arrival and
// stays in the cluster state while it waits (as the API server keeps it), with its own spec:
// priority class, constraints, tolerations, labels. One bound or finished joins the cluster as it
// is. A deleted pod ("namespace/name") stops if it runs, leaves the queue if it waits (releasing
// its nomination), and is removed from the cluster. A script pod runs until deleted or evicted.
struct ScriptStep {
  int64_t t_ms = 0;
  std::vector<Pod> create;
  std::vector<std::string> remove;
  std::vector<PodGroupSpec> pod_groups;  // PodGroup objects created (or changed), applied first
};

// How pods of groups are admitted (docs/workloads.md): kPod, one pod at a time through /filter
// (the product before pod groups: a group's pods are single pods); kGang, gate mode for groups
// (sim_admission.cpp: the admission queue admits a starting group's minMember together).
enum class SimAdmission { kPod, kGang };

struct SimulationInput {
  std::vector<Node> nodes;
  // From --cluster: bound pods (running throughout, may be evicted), priority classes, PDBs.
  // Its pending pods are ignored (the workload supplies pending pods).
  Snapshot background;
  QuotaPlan plan;
  Workload workload;
  // Steps in time order (a step may share its time with the next); empty for run and compare.
  // Every pod a script creates has a unique store key (uid, or namespace/name without one).
  std::vector<ScriptStep> script;
};

struct SimulationOptions {
  std::string policy{SimProfilePolicies().default_entry().name};    // a SimProfilePolicies() name
  std::string scoring{NodeScoringPolicies().default_entry().name};  // a NodeScoringPolicies() name
  // The victim order of the reclaim controller and of kube-scheduler's preemption, by name.
  std::string victim_order{VictimOrderPolicies().default_entry().name};
  NodeSampling sampling = NodeSampling::kKubeScheduler;
  int percentage_of_nodes_to_score = 0;  // 0 = kube-scheduler's adaptive default
  bool resubmit_evicted = false;
  SimAdmission admission = SimAdmission::kPod;
  // Controllers re-create evicted script pods that have one (a scenario's recreateEvicted).
  bool recreate_evicted = false;
  int64_t group_timeout_ms = 120'000;  // gangScheduleTimeout
  int64_t nomination_ttl_ms = 120'000;
  int64_t reclaim_interval_ms = 10'000;
  // fairShareMinRunTime of reclaim between borrowers (policies fair and fair-filter).
  int64_t fair_share_min_run_time_ms = 300'000;
  std::optional<int64_t> until_ms;  // stop at this time (default: when no event is left)
  int samples = 400;                // timeline points across the expected span
  std::optional<int64_t> sample_interval_ms;
  // Run victim selection on every node of the reclaim pool instead of stopping once no remaining
  // node can beat the best candidate (candidate_order.h). Same decisions, slower; for tests.
  bool exhaustive_reclaim = false;
  // Where the quotas come from: unset, the quota plan as `policy` shapes it (run, compare); set,
  // the background snapshot's own ElasticQuotas under these semantics (scenario files; `policy`
  // is then only the report's label).
  std::optional<QuotaSemantics> cluster_quotas;
  // Extended resources that count DRA devices (docs/devices.md; scenario files'
  // deviceClassMappings).
  std::vector<DeviceClassMapping> device_class_mappings;
  // The reclaim controller reacts within the instant: whenever a pass could do anything, it runs
  // at once rather than one interval later (scenario files, whose expectations are checked after
  // each step, as a controller that is never behind would leave the cluster).
  bool reclaim_at_once = false;
  // Called after each script step settled, with the step's index and the cluster as it is.
  std::function<void(std::size_t step, const ClusterState& state)> after_step;
  // Called now and then with (arrivals processed, arrivals in the workload).
  std::function<void(int64_t, int64_t)> progress;
  // Called for every decision that changes something, for tests and debugging:
  // ("bind", pod, node, t_ms), ("evict", victim, node, t_ms), ("reject", pod, "", t_ms),
  // ("complete", pod, node, t_ms), ("delete", pod, node, t_ms) for a script's delete of a bound
  // pod. `pod` is the workload pod's name, or the store key (uid) of any other pod.
  std::function<void(const char*, const std::string&, const std::string&, int64_t)> observer;
};

struct TenantPlanView {
  std::string name;
  bool in_plan = false;                  // the quota plan names it
  bool enforced = false;                 // this policy created an ElasticQuota for it
  std::optional<ResourceList> min, max;  // as enforced (static: max = min); else as planned
  std::optional<int32_t> priority;
  std::string parent;  // the plan's parent tenant, "" for a root or a tenant outside the plan
  int64_t weight_milli = 1000;  // the plan's fair-share weight (docs/fair-sharing.md#1-weights)
};

struct SimulationResult {
  std::string policy;             // the policy's name, "+gang" under gang admission
  std::string admission;          // "pod" or "gang"
  int64_t admission_rounds = 0;   // gang: admission queue rounds
  int64_t admitted_by_queue = 0;  // gang: pods whose gate the queue lifted
  // gang: admitted members whose admission was revoked (their gang lost its core)
  int64_t admissions_revoked = 0;
  std::string scoring;
  std::string sampling;
  std::vector<TenantPlanView> tenants;
  std::vector<std::string> dims;  // resource dimensions of SimMetrics vectors
  std::string gpu_resource;       // the dimension reported as "gpu" ("" when none)
  int64_t gpu_scale = 1;          // gpu units per GPU (1000 for alibaba.com/gpu-milli)
  int nodes = 0;
  int64_t allocatable_cpu = 0, allocatable_memory = 0, allocatable_gpu = 0;
  int64_t end_ms = 0;
  int64_t decisions = 0;  // scheduling attempts: bind or fail
  int64_t binds = 0;
  int64_t failed_attempts = 0;
  int64_t reclaims = 0;  // reclaim plans executed
  int64_t evictions = 0;
  int64_t fair_evictions = 0;  // of those, by reclaim between borrowers (fair policies)
  // Gang admission: plans across nodes for gated gangs (sim_gate_reclaim.cpp), their victims,
  // and the victims of those whose hold ended with no member admitted (wasted evictions).
  int64_t gang_plans = 0;
  int64_t gang_plan_victims = 0;
  int64_t wasted_evictions = 0;
  int64_t reclaim_attempts = 0;
  int64_t reclaim_nodes_examined = 0;  // nodes handed to SelectVictimsOnNode
  int64_t reclaim_candidates = 0;      // of those, nodes where it found victims
  // Per tenant, at the end: pods never started and still waiting; pods that ran, were evicted
  // and wait again (resubmit_evicted); pods running.
  std::vector<int64_t> pending_at_end, requeued_at_end, running_at_end;
  std::vector<std::string> notes;
  SimMetrics metrics{{}, 0, -1, -1, -1, 1};
  // Pod groups (group_metrics.h), per tenant; group_count = groups with minMember >= 2.
  std::vector<GroupCounters> groups;
  int64_t group_count = 0;
  double engine_seconds = 0;      // wall time of the event loop; never part of report.json's body
  double engine_cpu_seconds = 0;  // CPU time of the thread running it (what a busy machine leaves)
};

// Runs one policy on the input. Fails on an unknown scoring name.
Status RunSimulation(const SimulationInput& input, const SimulationOptions& options,
                     SimulationResult* out);

}  // namespace capext
