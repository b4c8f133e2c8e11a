#include "extender/reclaim/event_write_queue.h"

namespace capext {

void EventWriteQueue::Put(const std::string& uid, const std::string& ns, Place place,
                          int64_t at_ms) {
  Remove(uid);
  pods_.emplace(uid, Where{ns, place, at_ms});
  switch (place) {
    case Place::kCreate:
      namespaces_[ns].create.emplace(at_ms, uid);
      ++creates_;
      break;
    case Place::kRefresh:
      namespaces_[ns].refresh.emplace(at_ms, uid);
      CountRefresh(at_ms, +1);
      break;
    case Place::kRetry:
      retries_.emplace(at_ms, uid);
      break;
  }
}

void EventWriteQueue::Remove(const std::string& uid) {
  auto it = pods_.find(uid);
  if (it == pods_.end()) return;
  const Where& where = it->second;
  const Key key{where.at_ms, uid};
  if (where.place == Place::kRetry) {
    retries_.erase(key);
  } else {
    auto queues = namespaces_.find(where.ns);
    if (queues != namespaces_.end()) {
      if (where.place == Place::kCreate) {
        creates_ -= queues->second.create.erase(key);
      } else if (queues->second.refresh.erase(key) != 0) {
        CountRefresh(where.at_ms, -1);
      }
      if (queues->second.create.empty() && queues->second.refresh.empty())
        namespaces_.erase(queues);
    }
  }
  pods_.erase(it);
}

std::vector<std::string> EventWriteQueue::TakeRetriesDue(int64_t now_ms) {
  std::vector<std::string> out;
  while (!retries_.empty() && retries_.begin()->first <= now_ms) {
    out.push_back(retries_.begin()->second);
    Remove(out.back());
  }
  return out;
}

void EventWriteQueue::CountRefresh(int64_t at_ms, int delta) {
  if (delta > 0) {
    ++refresh_times_[at_ms];
    if (at_ms <= refresh_cutoff_) ++refreshes_due_;
    return;
  }
  auto it = refresh_times_.find(at_ms);
  if (it == refresh_times_.end()) return;
  if (--it->second == 0) refresh_times_.erase(it);
  if (at_ms <= refresh_cutoff_) --refreshes_due_;
}

std::size_t EventWriteQueue::DueCount(int64_t refresh_cutoff_ms) {
  if (refresh_cutoff_ms < refresh_cutoff_) {  // the clock went back: count again
    refresh_cutoff_ = INT64_MIN;
    refreshes_due_ = 0;
  }
  // Only the write times the cutoff passed since the last count.
  for (auto it = refresh_times_.upper_bound(refresh_cutoff_);
       it != refresh_times_.end() && it->first <= refresh_cutoff_ms; ++it) {
    refreshes_due_ += it->second;
  }
  refresh_cutoff_ = refresh_cutoff_ms;
  return creates_ + refreshes_due_;
}

}  // namespace capext
