// PendingIndex: the pending pods of quota namespaces the reclaim loop tracks, indexed by what can
// change their verdict, and the queue of those it must plan again. After a pod is planned the
// loop gives it a WakeRule (what it waits for); a change the ClusterState's journal reports then
// wakes exactly the pods whose rule names it (reclaim_controller.h has the rule per verdict).
// A woken pod joins the back of the queue unless it is already queued (it keeps its place): the
// loop plans the longest-queued pods first, so a burst of changes delays pods but starves none.
// Pods woken together (one change, one wave) join in scheduling order: priority, then creation.
// Thread-safety: none; the reclaim loop is its only user.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "core/declared_changes.h"

namespace capext {

// What wakes a pod besides a change of the pod itself (which always does): flags of WakeRule::on,
// the changes the plugins its verdict waits on declare (core/declared_changes.h).
enum WakeOn : uint32_t {
  kWakeOnQuota = kChangesInTree,             // the usage, ElasticQuota or nominations of its
                                             // namespace, or of any namespace of its quota tree
                                             // (the caller's reach)
  kWakeOnClusterQuota = kChangesInAnyQuota,  // the same in any quota namespace (the sums of used
                                             // and of min, which quotas borrow, the nominated sums)
  kWakeOnAnyNode = kChangesOnAnyNode,        // any node's spec, or anything holding room on it
  kWakeOnWatchedNode = kChangesOnOneNode,    // the same on WakeRule::node only
  kWakeOnPdbs = kChangesToPdbs,              // any PodDisruptionBudget
};

struct WakeRule {
  uint32_t on = 0;    // WakeOn flags
  std::string node;   // kWakeOnWatchedNode
  int64_t at_ms = 0;  // also wake once this time is reached (0 = no timer)
};

class PendingIndex {
 public:
  // Tracks the pod `uid` of namespace `ns` with its scheduling order (its rule is empty until
  // SetRule, so only a change of its own wakes it: the caller wakes a pod it starts tracking), or
  // updates them. Returns true when it was not tracked before.
  bool Track(const std::string& uid, const std::string& ns, int32_t priority, int64_t creation_ms);
  // Stops tracking the pod (and drops it from the queue).
  void Untrack(const std::string& uid);
  bool Tracks(const std::string& uid) const { return pods_.contains(uid); }
  std::size_t size() const { return pods_.size(); }
  // The tracked pods of `ns`, and of every namespace.
  std::vector<std::string> PodsOf(const std::string& ns) const;
  std::vector<std::string> All() const;

  // What the pod waits for, from now on. REQUIRES: the pod is tracked.
  void SetRule(const std::string& uid, WakeRule rule);
  // The pod's rule, or nullptr when it is not tracked.
  const WakeRule* RuleOf(const std::string& uid) const;

  // --- waking (each queues the pods it concerns) -----------------------------------------
  void Wake(const std::string& uid);
  // Each of `uids` (tracked or not), the wave in scheduling order.
  void Wake(const std::vector<std::string>& uids);
  void WakeQuota(const std::string& ns);  // pods of `ns` with kWakeOnQuota
  void WakeQuotaEverywhere();             // pods of every namespace with kWakeOnQuota
  void WakeClusterQuota();                // pods with kWakeOnClusterQuota
  // kWakeOnAnyNode when `nodes` is not empty, and kWakeOnWatchedNode of each of `nodes`.
  void WakeNodes(const std::vector<std::string>& nodes);
  void WakePdbs();
  void WakeAll();
  // Pods whose timer is at or before `now_ms`.
  void WakeDue(int64_t now_ms);

  // Up to `max` queued pods, longest queued first; they leave the queue.
  std::vector<std::string> TakeQueued(std::size_t max);
  std::size_t queued() const { return queue_.size(); }
  bool IsQueued(const std::string& uid) const;

 private:
  struct Entry {
    std::string ns;
    int32_t priority = 0;
    int64_t creation_ms = 0;
    WakeRule rule;
    uint64_t queued = 0;  // its key in queue_, 0 when not queued
  };
  using UidSet = std::unordered_set<std::string>;

  void Subscribe(const std::string& uid, const Entry& entry);
  void Unsubscribe(const std::string& uid, const Entry& entry);
  // Queues the pods of `uids` not queued yet, in scheduling order.
  template <typename Uids>
  void WakeWave(const Uids& uids);

  std::unordered_map<std::string, Entry> pods_;           // by uid
  std::unordered_map<std::string, UidSet> by_namespace_;  // every tracked pod
  UidSet cluster_quota_, any_node_, pdbs_;
  std::unordered_map<std::string, UidSet> watchers_;  // kWakeOnWatchedNode, by node
  // Timers; an entry is current while its pod's rule still says that time (others are skipped).
  std::multimap<int64_t, std::string> timers_;
  std::map<uint64_t, std::string> queue_;  // by arrival
  uint64_t next_arrival_ = 1;
};

}  // namespace capext
