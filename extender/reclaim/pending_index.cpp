#include "extender/reclaim/pending_index.h"

#include <algorithm>

namespace capext {

bool PendingIndex::Track(const std::string& uid, const std::string& ns, int32_t priority,
                         int64_t creation_ms) {
  auto [it, added] = pods_.try_emplace(uid);
  it->second.priority = priority;
  it->second.creation_ms = creation_ms;
  if (!added) {
    if (it->second.ns == ns) return false;
    Unsubscribe(uid, it->second);
    if (auto set = by_namespace_.find(it->second.ns); set != by_namespace_.end()) {
      set->second.erase(uid);
      if (set->second.empty()) by_namespace_.erase(set);
    }
  }
  it->second.ns = ns;
  by_namespace_[ns].insert(uid);
  Subscribe(uid, it->second);
  return added;
}

void PendingIndex::Untrack(const std::string& uid) {
  auto it = pods_.find(uid);
  if (it == pods_.end()) return;
  Unsubscribe(uid, it->second);
  if (auto set = by_namespace_.find(it->second.ns); set != by_namespace_.end()) {
    set->second.erase(uid);
    if (set->second.empty()) by_namespace_.erase(set);
  }
  if (it->second.queued != 0) queue_.erase(it->second.queued);
  pods_.erase(it);
}

std::vector<std::string> PendingIndex::PodsOf(const std::string& ns) const {
  auto it = by_namespace_.find(ns);
  if (it == by_namespace_.end()) return {};
  return {it->second.begin(), it->second.end()};
}

std::vector<std::string> PendingIndex::All() const {
  std::vector<std::string> out;
  out.reserve(pods_.size());
  for (const auto& [uid, entry] : pods_)
    out.push_back(uid);
  return out;
}

void PendingIndex::SetRule(const std::string& uid, WakeRule rule) {
  auto it = pods_.find(uid);
  if (it == pods_.end()) return;
  Unsubscribe(uid, it->second);
  it->second.rule = std::move(rule);
  Subscribe(uid, it->second);
  if (it->second.rule.at_ms != 0) timers_.emplace(it->second.rule.at_ms, uid);
}

const WakeRule* PendingIndex::RuleOf(const std::string& uid) const {
  auto it = pods_.find(uid);
  return it == pods_.end() ? nullptr : &it->second.rule;
}

// The namespace index (by_namespace_) serves kWakeOnQuota; the other flags have sets of their own.
void PendingIndex::Subscribe(const std::string& uid, const Entry& entry) {
  const WakeRule& rule = entry.rule;
  if (rule.on & kWakeOnClusterQuota) cluster_quota_.insert(uid);
  if (rule.on & kWakeOnAnyNode) any_node_.insert(uid);
  if (rule.on & kWakeOnPdbs) pdbs_.insert(uid);
  if (rule.on & kWakeOnWatchedNode) watchers_[rule.node].insert(uid);
}

void PendingIndex::Unsubscribe(const std::string& uid, const Entry& entry) {
  const WakeRule& rule = entry.rule;
  if (rule.on & kWakeOnClusterQuota) cluster_quota_.erase(uid);
  if (rule.on & kWakeOnAnyNode) any_node_.erase(uid);
  if (rule.on & kWakeOnPdbs) pdbs_.erase(uid);
  if (rule.on & kWakeOnWatchedNode) {
    if (auto it = watchers_.find(rule.node); it != watchers_.end()) {
      it->second.erase(uid);
      if (it->second.empty()) watchers_.erase(it);
    }
  }
}

void PendingIndex::Wake(const std::string& uid) {
  auto it = pods_.find(uid);
  if (it == pods_.end() || it->second.queued != 0) return;
  it->second.queued = next_arrival_++;
  queue_.emplace(it->second.queued, uid);
}

void PendingIndex::Wake(const std::vector<std::string>& uids) {
  WakeWave(uids);
}

template <typename Uids>
void PendingIndex::WakeWave(const Uids& uids) {
  std::vector<std::pair<const std::string*, const Entry*>> wave;
  for (const auto& uid : uids) {
    auto it = pods_.find(uid);
    if (it != pods_.end() && it->second.queued == 0) wave.emplace_back(&it->first, &it->second);
  }
  std::sort(wave.begin(), wave.end(), [](const auto& a, const auto& b) {
    if (a.second->priority != b.second->priority) return a.second->priority > b.second->priority;
    if (a.second->creation_ms != b.second->creation_ms) {
      return a.second->creation_ms < b.second->creation_ms;
    }
    return *a.first < *b.first;
  });
  for (const auto& [uid, entry] : wave)
    Wake(*uid);
}

void PendingIndex::WakeQuota(const std::string& ns) {
  auto it = by_namespace_.find(ns);
  if (it == by_namespace_.end()) return;
  std::vector<std::string> subscribed;
  for (const auto& uid : it->second) {
    auto pod = pods_.find(uid);
    if (pod != pods_.end() && (pod->second.rule.on & kWakeOnQuota)) subscribed.push_back(uid);
  }
  WakeWave(subscribed);
}

void PendingIndex::WakeQuotaEverywhere() {
  std::vector<std::string> subscribed;
  for (const auto& [uid, entry] : pods_) {
    if (entry.rule.on & kWakeOnQuota) subscribed.push_back(uid);
  }
  WakeWave(subscribed);
}

void PendingIndex::WakeClusterQuota() {
  WakeWave(cluster_quota_);
}

void PendingIndex::WakeNodes(const std::vector<std::string>& nodes) {
  if (nodes.empty()) return;
  WakeWave(any_node_);
  for (const auto& node : nodes) {
    if (auto it = watchers_.find(node); it != watchers_.end()) WakeWave(it->second);
  }
}

void PendingIndex::WakePdbs() {
  WakeWave(pdbs_);
}

void PendingIndex::WakeAll() {
  WakeWave(All());
}

void PendingIndex::WakeDue(int64_t now_ms) {
  while (!timers_.empty() && timers_.begin()->first <= now_ms) {
    auto node = timers_.extract(timers_.begin());
    const WakeRule* rule = RuleOf(node.mapped());
    if (rule != nullptr && rule->at_ms == node.key()) Wake(node.mapped());
  }
}

std::vector<std::string> PendingIndex::TakeQueued(std::size_t max) {
  std::vector<std::string> out;
  while (!queue_.empty() && out.size() < max) {
    auto node = queue_.extract(queue_.begin());
    if (auto it = pods_.find(node.mapped()); it != pods_.end()) it->second.queued = 0;
    out.push_back(std::move(node.mapped()));
  }
  return out;
}

bool PendingIndex::IsQueued(const std::string& uid) const {
  auto it = pods_.find(uid);
  return it != pods_.end() && it->second.queued != 0;
}

}  // namespace capext
