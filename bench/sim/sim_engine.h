// SimEngine: the machinery behind RunSimulation (simulation.h). Internal to bench/: the
// contracts are simulation.h's; this header exists so the engine's parts (setup and event loop
// in sim_engine.cpp, scheduling in sim_scheduling.cpp, reclaim in sim_reclaim.cpp) stay small.
// Thread-safety: none; one engine per simulation.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <queue>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "bench/sim/candidate_order.h"
#include "bench/sim/dense_nodes.h"
#include "bench/sim/pending_queue.h"
#include "bench/sim/sim_metrics.h"
#include "bench/sim/simulation.h"
#include "core/cluster_state.h"
#include "core/victim_selection.h"
#include "policies/victim_order.h"

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
    Pod prototype;  // namespace, priority, requests, affinity: every pod of the bucket alike
    DenseRequest request;
    int tenant = 0;
    int static_class = 0;
    int shape = -1;                 // DenseNodes::ShapeOf the request, for memoised scores
    bool never_fits_quota = false;  // request alone exceeds the quota's max
    bool never_fits_nodes = false;  // no node could hold it even empty
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
    std::map<int32_t, int64_t> bound_by_priority;
    int64_t bound = 0;
  };
  // One tenant's pods of one priority on one node (for reclaim's candidate filter).
  struct NodeTenantUsage {
    static constexpr std::size_t kInlineDims = 4;
    NodeTenantUsage(int t, int32_t p, std::size_t dims) : tenant(t), priority(p), inline_used{} {
      if (dims > kInlineDims) heap_used.assign(dims, 0);
    }
    int tenant;
    int32_t priority;
    int64_t pods = 0;
    // What the pods request per dimension: in the entry itself for a few dimensions (one cache
    // line with tenant and priority), else on the heap.
    int64_t inline_used[kInlineDims];
    std::vector<int64_t> heap_used;
    int64_t* used() { return heap_used.empty() ? inline_used : heap_used.data(); }
    const int64_t* used() const { return heap_used.empty() ? inline_used : heap_used.data(); }
    // Each pod's EffectiveStartMs and request, unordered (a handful per entry).
    std::vector<std::pair<int64_t, const DenseRequest*>> members;
  };
  // What removing victims must free for the preemptor to pass (sim_reclaim.cpp).
  struct ReclaimNeed {
    std::vector<int64_t> quota;  // per dimension, from the quota check with the request alone
    int64_t quota_pods = 0;
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
  // `r` must outlive the pod's stay (a bucket's request, or one in background_requests_).
  void TrackBound(int tenant, int32_t priority, int n, const DenseRequest& r, int sign,
                  int64_t start_ms);
  void NodeFreed(int n);
  void UsageDropped(int tenant);
  void NominationReleased(int n);
  void ParkForQuota(int b);

  // sim_reclaim.cpp
  bool TryReclaim(int b, uint32_t id);
  void ReclaimPass();
  // refine = false: the priority part only (cheap); true: also victim count and start.
  bool VictimBound(int n, const DenseRequest& r, const ReclaimNeed& need, bool refine,
                   CandidateKey* bound) const;
  bool IsVictimEntry(const NodeTenantUsage& u) const;
  bool ComputeReclaimNeed(const PreemptorContext& ctx, ReclaimNeed* need) const;

  const SimulationInput& input_;
  SimulationOptions options_;
  SimulationResult* out_;
  ClusterState state_;
  bool reclaim_ = true;
  std::unique_ptr<DenseNodes> nodes_;
  std::unique_ptr<SimMetrics> metrics_;
  std::unique_ptr<VictimOrder> victim_order_;
  MoreImportantFn more_important_;
  DenseScoring scoring_ = DenseScoring::kLeastAllocated;
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
  std::vector<std::vector<NodeTenantUsage>> node_tenants_;
  // Per node and tenant, pods then request per dimension (all priorities together): a compact
  // necessary condition for VictimBound. Empty when nodes x tenants is too large to keep.
  std::vector<int64_t> tenant_totals_;
  std::size_t tenant_totals_width_ = 0;           // 1 + dimensions
  std::deque<DenseRequest> background_requests_;  // stable addresses for the snapshot's pods
  std::unordered_map<std::string, const DenseRequest*> background_request_of_;  // by uid
  std::map<std::string, OurNomination> nominations_;                            // by uid
  std::multiset<int64_t> expiries_;  // of the nominations in force
  std::priority_queue<Completion, std::vector<Completion>, std::greater<>> completions_;
  int64_t now_ = 0;
  int64_t next_reclaim_ms_ = INT64_MAX;
  uint64_t epoch_ = 0;  // bumps on every bind, stop, nomination and expiry

  Pod scratch_;
  int scratch_bucket_ = -1;
  std::vector<int> feasible_;
  std::vector<int> victim_tenants_;
  std::vector<char> is_victim_tenant_;        // by tenant index, in step with victim_tenants_
  bool victims_below_priority_only_ = false;  // victims must have priority < the preemptor's
  std::vector<std::string> candidate_names_;
};

}  // namespace capext
