// SimEngine: the machinery behind RunSimulation (simulation.h), the simulator's one driver: it
// serves `capacity-sim run` and `compare` (workloads) and `scenario` (scripts) alike, with one
// scheduling cycle (TryFirst: the core's quota check and placement search, then bind) and one
// reclaim step (TryReclaim: the core's candidate search, then evictions and the nomination).
// Internal to bench/: the contracts are simulation.h's; this header exists so the engine's parts
// (setup and event loop in sim_engine.cpp, scheduling in sim_scheduling.cpp, reclaim in
// sim_reclaim.cpp, script steps in sim_script.cpp) stay small.
// Pods: ids [0, workload size) are the workload's pods (by arrival, then name), the ids after
// them the pending pods a script creates (by store key), so that the queue's order among equals
// (pod id) is name order for both.
// Thread-safety: none; one engine per simulation.
#pragma once

#include <algorithm>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "bench/sim/group_metrics.h"
#include "bench/sim/pending_queue.h"
#include "bench/sim/sim_metrics.h"
#include "bench/sim/simulation.h"
#include "core/admission_queue.h"
#include "core/candidate_search.h"
#include "core/cluster_state.h"
#include "core/fairness_snapshot.h"
#include "core/placement_search.h"
#include "core/status.h"
#include "policies/policies.h"

namespace capext {

class SimEngine {
 public:
  SimEngine(const SimulationInput& input, const SimulationOptions& options, SimulationResult* out);
  Status Setup();
  void Run();
  void Collect();

 private:
  enum class Phase : uint8_t { kFuture, kPending, kRunning, kDone };
  struct SimPod {
    int bucket = -1;
    int node = -1;
    int64_t queued_ms = 0;    // creation time of the current submission
    int64_t start_ms = 0;     // EffectiveStartMs while running
    uint32_t generation = 0;  // invalidates a completion when the pod stops early
    Phase phase = Phase::kFuture;
    bool started = false;
    bool evicted = false;
    bool gated = false;  // gang admission: waiting in the admission queue (sim_admission.cpp)
    bool group_member = false;  // gang admission: the state holds it as its group's member
  };
  // A pending pod a script creates (the workload's pods are input_.workload.pods).
  struct ScriptPod {
    Pod pod;
    std::string key;      // its store key: the uid, or namespace/name without one
    int64_t step_ms = 0;  // when the script creates it (its arrival)
  };
  // What the engine knows about a bucket beyond the queue's view.
  struct BucketInfo {
    // Namespace, priority, requests, affinity, normalised: every pod of the bucket alike.
    std::optional<NormalizedPod> prototype;
    DensePlacement::Profile profile;  // the core's placement profile of the prototype
    int tenant = 0;
    bool never_fits_quota = false;  // request alone exceeds the quota's max
    bool never_fits_nodes = false;  // no node could hold it even empty
    const DenseRequest& request() const { return profile.request; }
  };
  struct Completion {
    int64_t t;
    uint32_t pod;
    uint32_t generation;
    bool operator<(const Completion& o) const { return t != o.t ? t < o.t : pod < o.pod; }
  };
  // The completions due, earliest (then lowest pod id) first: a 4-ary min-heap. It holds a
  // completion per running pod (tens of thousands), and a binary heap's pop was a cache miss per
  // level, 4% of a decision; four children of 16 bytes share a cache line. Equal completions
  // (one pod, one time, two generations) may come out in either order: at most one is current.
  class CompletionQueue {
   public:
    bool empty() const { return heap_.empty(); }
    const Completion& top() const { return heap_.front(); }
    void push(const Completion& c) {
      std::size_t i = heap_.size();
      heap_.push_back(c);
      while (i > 0) {
        const std::size_t parent = (i - 1) / kArity;
        if (!(c < heap_[parent])) break;
        heap_[i] = heap_[parent];
        i = parent;
      }
      heap_[i] = c;
    }
    void pop() {
      const Completion last = heap_.back();
      heap_.pop_back();
      const std::size_t size = heap_.size();
      if (size == 0) return;
      std::size_t i = 0;
      while (true) {
        const std::size_t first = i * kArity + 1;
        if (first >= size) break;
        const std::size_t end = std::min(first + kArity, size);
        std::size_t least = first;
        for (std::size_t k = first + 1; k < end; ++k) {
          if (heap_[k] < heap_[least]) least = k;
        }
        if (!(heap_[least] < last)) break;
        heap_[i] = heap_[least];
        i = least;
      }
      heap_[i] = last;
    }

   private:
    static constexpr std::size_t kArity = 4;
    std::vector<Completion> heap_;
  };
  struct TenantState {
    std::string name;
    const ElasticQuota* quota = nullptr;  // enforced quota, owned by the state
  };
  struct OurNomination {
    int node;
    int64_t expires_ms;
  };

  // sim_engine.cpp
  int TenantIndex(const std::string& name) const;
  int BucketFor(const WorkloadPod& pod, int tenant);
  // A bucket of its own for a script's pod, its normalised spec as the prototype.
  int BucketForScriptPod(const Pod& pod, int tenant);
  int AddBucket(BucketInfo info, int32_t priority);
  void Submit(uint32_t id, bool resubmission);
  void ProcessExpiries();
  // Reclaim pass if due, scheduling until quiet, and (reclaim_at_once) passes until none could
  // do anything.
  void Settle();
  void AdmitAndSchedule();  // admission passes (gang admission) and scheduling until quiet
  // Whether a reclaim pass could do anything: some parked bucket has not tried reclaim since the
  // cluster last changed.
  bool ReclaimPassUseful() const;

  // sim_scheduling.cpp
  void Schedule();
  void TryFirst(int b);
  void FillScratch(int b, uint32_t id);
  // Reclaim between borrowers for the pod in scratch_ (fair policies); true when it evicted.
  bool TryFairReclaim(int b);
  int FindNode(int b);
  bool FitsNow(int b, int n);
  // Node n passes bucket b's static checks and has room for its request, nominations aside:
  // the test of the bucket's wake list (pending_queue.h).
  bool FitsAsideNominations(int b, int n) const;
  std::vector<int> WakeListOf(int b, const std::vector<int>& candidates) const;
  int BestOf(int b, const std::vector<int>& feasible);
  void Bind(int b, uint32_t id, int n);
  enum class Stop { kCompleted, kEvicted, kDeleted };
  void StopPod(uint32_t id, Stop why);
  void Evict(const std::string& uid, int preemptor_tenant);
  void NodeFreed(int n);
  void UsageDropped(int tenant);
  void NominationReleased(int n);
  void ParkForQuota(int b);
  // The group bookkeeping of a member starting or stopping (group_metrics.h).
  void GroupMemberChanged(uint32_t id, bool started, bool evicted);

  // sim_reclaim.cpp
  bool TryReclaim(int b, uint32_t id);
  void ReclaimPass();

  // sim_script.cpp
  Status SetupScript();  // ids, tenants and buckets of the script's pending pods
  void ApplyStep(const ScriptStep& step);
  void CreateScriptPod(const Pod& pod);
  void RemovePod(const std::string& key);

  // A pod's identity and times, whichever list it comes from.
  bool IsScriptPod(uint32_t id) const { return id >= input_.workload.pods.size(); }
  const ScriptPod& script_pod(uint32_t id) const {
    return script_pods_[id - input_.workload.pods.size()];
  }
  const std::string& UidOf(uint32_t id) const {
    return IsScriptPod(id) ? script_pod(id).key : input_.workload.pods[id].name;
  }
  const std::string& NameOf(uint32_t id) const {
    return IsScriptPod(id) ? script_pod(id).pod.name : input_.workload.pods[id].name;
  }
  int64_t ArrivalOf(uint32_t id) const {
    return IsScriptPod(id) ? script_pod(id).step_ms : input_.workload.pods[id].arrival_ms;
  }
  // INT64_MAX: runs until deleted or evicted.
  int64_t DurationOf(uint32_t id) const {
    return IsScriptPod(id) ? INT64_MAX : input_.workload.pods[id].duration_ms;
  }

  // sim_admission.cpp
  // Gang admission: gates an arriving group member (true) instead of queueing it.
  bool GateOnArrival(uint32_t id);
  // The pod of group member `id` as the state holds it: its group, gated or admitted.
  Pod GroupMemberPod(uint32_t id, bool gated, int64_t admitted_ms) const;
  // Runs the admission queue when some pod is gated and the cluster has changed (first the
  // controllers' replacements of evicted pods).
  void AdmissionPass();
  // Filter mode's group rule passed for pod `id`: holds the other members of the need.
  void HoldGroupNeed(uint32_t id, const std::vector<std::string>& members);
  // Some gang lost its core and still has admitted members to evict or revoke.
  bool HasLostCore() const;
  // Revokes an admitted member's admission for its gang `t` that lost its core.
  void RevokeAdmission(const std::string& key, const GroupTimeout& t);
  // Controllers re-create the script pods evicted since the last call.
  void RecreateEvicted();

  // sim_gate_reclaim.cpp: gate mode's reclaim for gated gangs, as serve's admission loop.
  void GateReclaimPass(const AdmissionRound& round);
  struct GangPlanInFlight {
    std::vector<std::string> members;  // store keys, nominated on their planned nodes
    int64_t victims = 0;
  };
  std::map<std::string, GangPlanInFlight> gang_plans_;  // by group Display(), or "pod ns/name"
  FairnessCache fairness_cache_;  // every quota's fairness per state version, for those plans
  // With gated fair sharing: an admission round is due then (a pod reaches the minimum run time
  // while a unit has no plan); INT64_MAX when none.
  int64_t fair_wake_ms_ = INT64_MAX;

  const SimulationInput& input_;
  SimulationOptions options_;
  SimulationResult* out_;
  SimProfile profile_;     // options_.policy's profile (the default's while profile_status_ fails)
  Status profile_status_;  // resolving options_.policy; Setup returns it when it failed
  ClusterState state_;
  bool reclaim_ = true;
  const DenseNodes* nodes_ = nullptr;          // the state's mirror
  std::unique_ptr<DensePlacement> placement_;  // the core's placement search over it
  PlacementResult scan_;  // FindNode's scan, reused: its feasible vector keeps its capacity
  std::unique_ptr<SimMetrics> metrics_;
  std::unique_ptr<GroupMetrics> group_metrics_;
  std::vector<int> group_of_;       // by pod id: its GroupMetrics group, -1 for a single pod
  std::vector<int32_t> group_min_;  // by group: its minMember
  int64_t gated_ = 0;               // gang admission: pods gated now
  bool admission_due_ = false;      // a pod was gated since the last admission pass
  uint64_t admission_epoch_ = 0;    // epoch_ after the last admission pass
  std::vector<uint32_t> recreate_;  // evicted pods whose controller re-creates them
  std::map<std::string, std::string> base_name_;  // replacement's uid -> the original's name
  std::map<std::string, int> replacements_;       // "ns/original name" -> replacements made
  int gpu_dim_ = -1;                              // the dimension reported as gpu
  const VictimOrder* victim_order_ = nullptr;
  NodeScoring scoring_ = NodeScoring::kLeastAllocated;
  std::size_t num_to_find_ = 0;
  std::size_t num_candidates_ = 0;
  int start_index_ = 0;
  int preempt_offset_ = 0;

  std::vector<TenantState> tenants_;
  std::vector<SimPod> pods_;
  std::unordered_map<std::string, uint32_t> pod_by_uid_;
  std::vector<BucketInfo> buckets_;
  std::unordered_map<std::string, int> bucket_by_key_;
  PendingQueue queue_;
  std::unordered_map<std::string, DenseRequest> background_request_of_;  // by store key
  std::map<std::string, OurNomination> nominations_;                     // by uid
  std::multiset<int64_t> expiries_;  // of the nominations in force
  CompletionQueue completions_;
  int64_t now_ = 0;
  int64_t next_reclaim_ms_ = INT64_MAX;
  uint64_t epoch_ = 0;  // bumps on every bind, stop, nomination and expiry

  std::optional<NormalizedPod> scratch_;  // the pod being decided: its bucket's prototype
  int scratch_bucket_ = -1;

  std::vector<ScriptPod> script_pods_;  // by id - workload size
  std::size_t next_step_ = 0;
};

}  // namespace capext
