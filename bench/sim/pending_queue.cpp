#include "bench/sim/pending_queue.h"

#include <algorithm>

namespace capext {

int PendingQueue::AddBucket(int tenant, int32_t priority) {
  Bucket b;
  b.tenant = tenant;
  b.priority = priority;
  buckets_.push_back(std::move(b));
  return static_cast<int>(buckets_.size()) - 1;
}

void PendingQueue::Push(int b) {
  Bucket& bucket = buckets_[b];
  const auto& first = *bucket.pods.begin();
  heap_.push(HeapEntry{-bucket.priority, first.first, first.second, b, ++bucket.heap_version});
}

void PendingQueue::SetParked(int b, Park park) {
  Bucket& bucket = buckets_[b];
  if (park == Park::kNodes || park == Park::kQuotaMax || park == Park::kQuotaAggregate) {
    parked_.insert(b);
  } else {
    parked_.erase(b);
  }
  if (park == Park::kQuotaMax || park == Park::kQuotaAggregate) {
    quota_parked_.insert(b);
  } else {
    quota_parked_.erase(b);
  }
  bucket.park = park;
}

void PendingQueue::Add(int b, int64_t creation_ms, uint32_t pod) {
  Bucket& bucket = buckets_[b];
  const bool was_empty = bucket.pods.empty();
  const bool new_first = was_empty || std::make_pair(creation_ms, pod) < *bucket.pods.begin();
  bucket.pods.emplace(creation_ms, pod);
  if (bucket.park == Park::kIdle) {
    SetParked(b, Park::kActive);
    Push(b);
  } else if (bucket.park == Park::kActive && new_first) {
    Push(b);  // the heap entry must carry the new first pod
  }
}

bool PendingQueue::Top(int* b) {
  while (!heap_.empty()) {
    const HeapEntry& top = heap_.top();
    const Bucket& bucket = buckets_[top.bucket];
    if (top.version != bucket.heap_version || bucket.park != Park::kActive) {
      heap_.pop();
      continue;
    }
    *b = top.bucket;
    return true;
  }
  return false;
}

void PendingQueue::PopFirst(int b) {
  Bucket& bucket = buckets_[b];
  bucket.pods.erase(bucket.pods.begin());
  if (bucket.pods.empty()) {
    Unpark(b);
    SetParked(b, Park::kIdle);
    ++bucket.heap_version;
    bucket.wake_list_valid = false;
    bucket.wake_nodes.clear();
    listening_.erase(b);
    return;
  }
  if (bucket.park == Park::kActive) Push(b);
}

void PendingQueue::Remove(int b, int64_t creation_ms, uint32_t pod) {
  Bucket& bucket = buckets_[b];
  auto it = bucket.pods.find({creation_ms, pod});
  if (it == bucket.pods.end()) return;
  if (it == bucket.pods.begin()) {
    PopFirst(b);
    return;
  }
  bucket.pods.erase(it);
}

void PendingQueue::SetWakeList(int b, bool valid, std::vector<int> nodes) {
  Bucket& bucket = buckets_[b];
  bucket.wake_list_valid = valid;
  bucket.wake_nodes = valid ? std::move(nodes) : std::vector<int>();
  if (valid) {
    listening_.insert(b);
  } else {
    listening_.erase(b);
  }
}

void PendingQueue::ParkForNodes(int b) {
  Unpark(b);
  SetParked(b, Park::kNodes);
  ++buckets_[b].heap_version;
}

void PendingQueue::ParkForQuota(int b, bool per_tenant, const std::string& resource,
                                int64_t threshold) {
  Unpark(b);
  Bucket& bucket = buckets_[b];
  SetParked(b, per_tenant ? Park::kQuotaMax : Park::kQuotaAggregate);
  ++bucket.heap_version;
  bucket.wait_resource = resource;
  bucket.wait_threshold = threshold;
  // A quota-parked bucket has not scanned the nodes: its wake list says nothing.
  bucket.wake_list_valid = false;
  bucket.wake_nodes.clear();
  listening_.erase(b);
  if (per_tenant) {
    max_waiters_[{bucket.tenant, resource}].emplace(threshold, b);
  } else {
    aggregate_waiters_[resource].emplace(threshold, b);
  }
}

// Removes b from whatever it waits on (its waiter entry), without activating it.
void PendingQueue::Unpark(int b) {
  Bucket& bucket = buckets_[b];
  if (bucket.park != Park::kQuotaMax && bucket.park != Park::kQuotaAggregate) return;
  Waiters* waiters = nullptr;
  if (bucket.park == Park::kQuotaMax) {
    auto it = max_waiters_.find({bucket.tenant, bucket.wait_resource});
    if (it != max_waiters_.end()) waiters = &it->second;
  } else {
    auto it = aggregate_waiters_.find(bucket.wait_resource);
    if (it != aggregate_waiters_.end()) waiters = &it->second;
  }
  if (waiters == nullptr) return;
  auto [lo, hi] = waiters->equal_range(bucket.wait_threshold);
  for (auto it = lo; it != hi; ++it) {
    if (it->second == b) {
      waiters->erase(it);
      break;
    }
  }
}

void PendingQueue::Wake(int b) {
  Bucket& bucket = buckets_[b];
  if (bucket.park == Park::kActive || bucket.park == Park::kIdle) return;
  Unpark(b);
  SetParked(b, Park::kActive);
  Push(b);
}

void PendingQueue::OnNodeFreed(int n, const std::function<bool(int)>& fits) {
  for (int b : listening_) {
    if (!fits(b)) continue;
    Bucket& bucket = buckets_[b];
    if (std::find(bucket.wake_nodes.begin(), bucket.wake_nodes.end(), n) ==
        bucket.wake_nodes.end()) {
      bucket.wake_nodes.push_back(n);
    }
    if (bucket.park == Park::kNodes) {
      SetParked(b, Park::kActive);
      Push(b);
    }
  }
}

void PendingQueue::WakeWaiters(Waiters* waiters, int64_t current) {
  // Thresholds are sorted descending: wake from the front while threshold >= current.
  std::vector<int> woken;
  while (!waiters->empty() && waiters->begin()->first >= current) {
    woken.push_back(waiters->begin()->second);
    waiters->erase(waiters->begin());
  }
  for (int b : woken) {
    SetParked(b, Park::kActive);
    Push(b);
  }
}

void PendingQueue::OnUsageDropped(int tenant,
                                  const std::function<int64_t(const std::string&)>& used,
                                  const std::function<int64_t(const std::string&)>& total) {
  for (auto it = max_waiters_.lower_bound({tenant, std::string()});
       it != max_waiters_.end() && it->first.first == tenant; ++it) {
    if (!it->second.empty()) WakeWaiters(&it->second, used(it->first.second));
  }
  for (auto& [resource, waiters] : aggregate_waiters_) {
    if (!waiters.empty()) WakeWaiters(&waiters, total(resource));
  }
}

void PendingQueue::WakeAllQuotaParked() {
  std::vector<int> all(quota_parked_.begin(), quota_parked_.end());
  max_waiters_.clear();
  aggregate_waiters_.clear();
  for (int b : all) {
    SetParked(b, Park::kActive);
    Push(b);
  }
}

std::vector<int> PendingQueue::ParkedInOrder() const {
  std::vector<int> out(parked_.begin(), parked_.end());
  std::sort(out.begin(), out.end(), [&](int a, int b) {
    const Bucket& x = buckets_[a];
    const Bucket& y = buckets_[b];
    if (x.priority != y.priority) return x.priority > y.priority;
    return *x.pods.begin() < *y.pods.begin();
  });
  return out;
}

}  // namespace capext
