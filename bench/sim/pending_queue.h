// PendingQueue: the simulator's scheduling queue, kube-scheduler's activeQ/unschedulable split
// made cheap for a million pods.
//
// Pending pods are grouped in buckets of identical pods: same tenant, priority, requests and
// static constraints. Two pods of one bucket get the same answer from node fit and from the
// quota check (nominations count against a pod by priority, which is part of the key), so when a
// bucket's first pod fails, every pod behind it would fail too, and the whole bucket is parked.
//
// Active buckets sit in a heap ordered by their first pod in kube-scheduler's activeQ order:
// priority descending, then creation time, then pod id (name order). A parked bucket waits for
// the one kind of change that can let its first pod in, and is woken only then:
//  - parked for nodes (quota passed, no node fits): a node freeing resources on which the pod
//    now fits by resources (nominations ignored, so the test never misses a real chance). The
//    woken nodes are collected in the bucket's wake list: after a failed scan of every node, the
//    nodes it can fit on are exactly among those, so the next attempt scans the list only. The
//    list is every node the bucket's pods fit by resources, nominations aside, never only the
//    nodes its first pod fits: a nomination is counted against every pod but its nominee, so the
//    nominee, further back in the bucket, fits the node its nomination holds, where the first
//    pod did not;
//  - parked for a quota dimension `r` at threshold T: the quota check failed because
//    used[r] + add > limit; it can only pass once used[r] <= T = limit - add. `used` is the
//    tenant's usage (max check) or the cluster-wide quota usage (aggregated-min check);
//  - any release of a nomination wakes every quota-parked bucket (it changes `add`).
// Thread-safety: none.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <queue>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace capext {

class PendingQueue {
 public:
  enum class Park { kActive, kIdle, kNodes, kQuotaMax, kQuotaAggregate };

  struct Bucket {
    int tenant = 0;
    int32_t priority = 0;
    std::set<std::pair<int64_t, uint32_t>> pods;  // (creation_ms, pod id): queue order
    Park park = Park::kIdle;
    bool wake_list_valid = false;  // wake_nodes covers every node the first pod could fit
    std::vector<int> wake_nodes;
    uint64_t heap_version = 0;
    // kQuotaMax / kQuotaAggregate: where this bucket waits.
    std::string wait_resource;
    int64_t wait_threshold = 0;
    uint64_t reclaim_failed_epoch = UINT64_MAX;  // see SimEngine::TryReclaim
    int64_t reclaim_retry_after_ms = INT64_MIN;  // no reclaim attempt before this time
  };

  // Creates an empty bucket and returns its id.
  int AddBucket(int tenant, int32_t priority);
  Bucket& bucket(int b) { return buckets_[b]; }
  const Bucket& bucket(int b) const { return buckets_[b]; }
  int num_buckets() const { return static_cast<int>(buckets_.size()); }

  // Adds a pod. An idle bucket becomes active; a parked one stays parked (the new pod is
  // identical to the one that failed).
  void Add(int b, int64_t creation_ms, uint32_t pod);
  // The active bucket whose first pod comes first; false when none is active.
  bool Top(int* b);
  // Removes the first pod of bucket b (it was bound or rejected); b stays active if non-empty.
  void PopFirst(int b);
  // Removes a pod wherever it stands in bucket b (it was deleted while pending); no-op when the
  // bucket does not hold it.
  void Remove(int b, int64_t creation_ms, uint32_t pod);
  // The id of bucket b's first pod. REQUIRES: the bucket is not empty.
  uint32_t First(int b) const { return buckets_[b].pods.begin()->second; }

  // Records whether bucket b's wake list covers every node its first pod could fit on, and the
  // list. A bucket with a valid list listens to OnNodeFreed.
  void SetWakeList(int b, bool valid, std::vector<int> nodes);

  // REQUIRES: the bucket's wake list is valid (a scan just found no node).
  void ParkForNodes(int b);
  // `per_tenant`: the max check (waits on the tenant's usage) or the aggregated-min check.
  void ParkForQuota(int b, bool per_tenant, const std::string& resource, int64_t threshold);
  // Activates a parked bucket (no-op when active or idle).
  void Wake(int b);

  // Node n freed resources: for every bucket with a valid wake list for which `fits(b)`,
  // records n and wakes it.
  void OnNodeFreed(int n, const std::function<bool(int bucket)>& fits);
  // Usage fell: wakes buckets of `tenant` waiting on its own usage with threshold >= used(r),
  // and buckets waiting on the cluster-wide quota usage with threshold >= total(r).
  void OnUsageDropped(int tenant, const std::function<int64_t(const std::string&)>& used,
                      const std::function<int64_t(const std::string&)>& total);
  void WakeAllQuotaParked();
  bool HasQuotaParked() const { return !quota_parked_.empty(); }

  // Buckets currently parked, in queue order of their first pod.
  std::vector<int> ParkedInOrder() const;
  bool HasParked() const { return !parked_.empty(); }
  // Buckets currently parked, by id.
  const std::set<int>& parked() const { return parked_; }

 private:
  struct HeapEntry {
    int32_t neg_priority;
    int64_t creation_ms;
    uint32_t pod;
    int bucket;
    uint64_t version;
    bool operator>(const HeapEntry& o) const {
      if (neg_priority != o.neg_priority) return neg_priority > o.neg_priority;
      if (creation_ms != o.creation_ms) return creation_ms > o.creation_ms;
      return pod > o.pod;
    }
  };
  using Waiters = std::multimap<int64_t, int, std::greater<>>;  // threshold -> bucket

  void Push(int b);
  void Unpark(int b);
  void SetParked(int b, Park park);
  void WakeWaiters(Waiters* waiters, int64_t current);

  std::vector<Bucket> buckets_;
  std::priority_queue<HeapEntry, std::vector<HeapEntry>, std::greater<>> heap_;
  std::set<int> listening_;                                     // buckets with a valid wake list
  std::map<std::pair<int, std::string>, Waiters> max_waiters_;  // (tenant, resource)
  std::map<std::string, Waiters> aggregate_waiters_;            // resource
  std::set<int> quota_parked_;
  std::set<int> parked_;
};

}  // namespace capext
