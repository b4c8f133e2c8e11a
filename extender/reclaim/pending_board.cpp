#include "extender/reclaim/pending_board.h"

#include <algorithm>
#include <tuple>

namespace capext {

void PendingBoard::Set(PendingPodRecord record) {
  std::lock_guard lock(mutex_);
  std::string uid = record.uid;
  records_[std::move(uid)] = std::move(record);
}

std::optional<PendingPodRecord> PendingBoard::Find(const std::string& uid) const {
  std::lock_guard lock(mutex_);
  auto it = records_.find(uid);
  if (it == records_.end()) return std::nullopt;
  return it->second;
}

void PendingBoard::Remove(const std::string& uid) {
  std::lock_guard lock(mutex_);
  records_.erase(uid);
}

void PendingBoard::Retain(const std::function<bool(const std::string&)>& keep) {
  std::lock_guard lock(mutex_);
  std::erase_if(records_, [&](const auto& entry) { return !keep(entry.first); });
}

void PendingBoard::SetHold(std::optional<Hold> hold) {
  std::lock_guard lock(mutex_);
  hold_ = std::move(hold);
}

void PendingBoard::ReclaimStarted(ReclaimHistoryEntry entry) {
  std::lock_guard lock(mutex_);
  history_.push_back(std::move(entry));
  while (history_.size() > history_capacity_)
    history_.pop_front();
}

void PendingBoard::ReclaimEnded(const std::string& pod_uid, const std::string& outcome,
                                int64_t ended_ms) {
  std::lock_guard lock(mutex_);
  for (auto it = history_.rbegin(); it != history_.rend(); ++it) {
    if (it->pod_uid == pod_uid && it->ended_ms == 0) {
      it->outcome = outcome;
      it->ended_ms = ended_ms;
      return;
    }
  }
}

PendingBoard::Snapshot PendingBoard::Take() const {
  Snapshot out;
  {
    std::lock_guard lock(mutex_);
    out.pending.reserve(records_.size());
    for (const auto& [uid, r] : records_)
      out.pending.push_back(r);
    out.reclaims.assign(history_.rbegin(), history_.rend());
    out.hold = hold_;
  }
  std::sort(out.pending.begin(), out.pending.end(), [](const auto& a, const auto& b) {
    return std::tie(a.creation_ms, a.ns, a.name) < std::tie(b.creation_ms, b.ns, b.name);
  });
  return out;
}

std::size_t PendingBoard::size() const {
  std::lock_guard lock(mutex_);
  return records_.size();
}

}  // namespace capext
