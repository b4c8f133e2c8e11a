// PendingBoard: what GET /pending and /ui show of the reclaim controller. One record per
// pending pod of a quota namespace (its last verdict, set each time the pod is planned; removed
// when the pod binds or goes away), a ring buffer of the last reclaims with their outcome, and
// why the controller holds off (a cache out of sync), if it does.
// Thread-safety: every method may be called from any thread (one mutex; Snapshot copies).
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "extender/reclaim/pod_verdict.h"

namespace capext {

struct PendingPodRecord {
  std::string uid, ns, name;
  std::string quota;  // "namespace/name" of the pod's ElasticQuota
  int32_t priority = 0;
  int64_t creation_ms = 0;  // 0 = unknown
  int64_t verdict_ms = 0;   // when the verdict was reached
  PodVerdict verdict;
  // kGated only: the admission loop's reason ("QuotaExceeded", "QuotaNever", "GangWaiting",
  // "FairShare", "NoPlacement", "OtherGates", or "NotActing" on a follower); the verdict's message
  // names the blocking rule with numbers.
  std::string gate;
};

struct ReclaimHistoryEntry {
  std::string pod_uid, pod;  // pod: "ns/name"
  std::string node;
  std::vector<std::string> victims;
  std::string outcome = "in-flight";  // in-flight, bound, expired, pod-deleted
  int64_t started_ms = 0;
  int64_t ended_ms = 0;  // 0 while in flight; bound: time to bind = ended - started
};

class PendingBoard {
 public:
  explicit PendingBoard(std::size_t history_capacity = 100) : history_capacity_(history_capacity) {}

  void Set(PendingPodRecord record);
  std::optional<PendingPodRecord> Find(const std::string& uid) const;
  // Removes the pod's record, if any.
  void Remove(const std::string& uid);
  // Removes the records of pods for which keep(uid) is false.
  void Retain(const std::function<bool(const std::string& uid)>& keep);

  // Why the reclaim loop does nothing now (a cache out of sync), and since when; nullopt when it
  // works.
  struct Hold {
    std::string reason;
    int64_t since_ms = 0;  // Unix milliseconds
  };
  void SetHold(std::optional<Hold> hold);

  void ReclaimStarted(ReclaimHistoryEntry entry);
  // Sets the outcome of the newest in-flight entry of the pod.
  void ReclaimEnded(const std::string& pod_uid, const std::string& outcome, int64_t ended_ms);

  struct Snapshot {
    std::vector<PendingPodRecord> pending;      // by creation time, then namespace/name
    std::vector<ReclaimHistoryEntry> reclaims;  // newest first
    std::optional<Hold> hold;
  };
  Snapshot Take() const;
  std::size_t size() const;

 private:
  const std::size_t history_capacity_;
  mutable std::mutex mutex_;
  std::map<std::string, PendingPodRecord> records_;  // by uid
  std::deque<ReclaimHistoryEntry> history_;          // oldest first
  std::optional<Hold> hold_;
};

}  // namespace capext
