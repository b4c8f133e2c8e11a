// SimEngine: the machinery behind RunSimulation (simulation.h). Internal to bench/: the
// contracts are simulation.h's; this header exists so the engine's parts (setup and event loop
// in sim_engine.cpp, scheduling in sim_scheduling.cpp, reclaim in sim_reclaim.cpp) stay small.
// Thread-safety: none; one engine per simulation.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <queue>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "bench/sim/group_metrics.h"
#include "bench/sim/pending_queue.h"
#include "bench/sim/sim_metrics.h"
#include "bench/sim/simulation.h"
#include "core/candidate_search.h"
#include "core/cluster_state.h"
#include "core/placement_search.h"

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
    bool operator>(const Completion& o) const { return t != o.t ? t > o.t : pod > o.pod; }
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
  void Submit(uint32_t id, bool resubmission);
  void ProcessExpiries();
  // Whether a reclaim pass could do anything: some parked bucket has not tried reclaim since the
  // cluster last changed.
  bool ReclaimPassUseful() const;

  // sim_scheduling.cpp
  void Schedule();
  void TryFirst(int b);
  void FillScratch(int b, uint32_t id);
  int FindNode(int b);
  bool FitsNow(int b, int n);
  int BestOf(int b, const std::vector<int>& feasible);
  void Bind(int b, uint32_t id, int n);
  void StopPod(uint32_t id, bool completed);
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

  const SimulationInput& input_;
  SimulationOptions options_;
  SimulationResult* out_;
  ClusterState state_;
  bool reclaim_ = true;
  const DenseNodes* nodes_ = nullptr;          // the state's mirror
  std::unique_ptr<DensePlacement> placement_;  // the core's placement search over it
  std::unique_ptr<SimMetrics> metrics_;
  std::unique_ptr<GroupMetrics> group_metrics_;
  std::vector<int> group_of_;  // by pod id: its GroupMetrics group, -1 for a single pod
  int gpu_dim_ = -1;           // the dimension reported as gpu
  MoreImportantFn more_important_;
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
  std::priority_queue<Completion, std::vector<Completion>, std::greater<>> completions_;
  int64_t now_ = 0;
  int64_t next_reclaim_ms_ = INT64_MAX;
  uint64_t epoch_ = 0;  // bumps on every bind, stop, nomination and expiry

  std::optional<NormalizedPod> scratch_;  // the pod being decided: its bucket's prototype
  int scratch_bucket_ = -1;
};

}  // namespace capext
