// InformerSync: whether one informer's resource follows the API server, and since when
// (docs/architecture.md#staying-in-sync-with-the-api-server). Fed with the events of the
// informer's list/watch cycle and the time of each; answers for any time. Pure bookkeeping: no
// clock, no lock, no I/O.
//
// In sync: listed, and either a watch from the cache's resourceVersion is established (answered
// 200, then a line or `settle` without an ERROR), or a hand-off (a list just completed, or the
// server ended the last established watch normally) is under way for at most `hand_off`. Out of
// sync otherwise; "since" is then the last moment the cache was known to follow: the completion
// of its last list, or the end of its last established watch. A break (a watch dropped, an ERROR,
// a silent watch, a failed request) ends any hand-off at once.
//
// Thread-safety: none (the informer guards it with its own mutex).
#pragma once

#include <chrono>
#include <string>

namespace capext::kube {

struct SyncState {
  using Clock = std::chrono::steady_clock;
  bool listed = false;   // a first complete list reached the cache
  bool in_sync = false;  // see the file comment
  // In sync: since when (the end of the last out-of-sync period). Out of sync: the last moment
  // the cache was known to follow (the informer's start when never listed).
  Clock::time_point since;
  std::string cause;  // out of sync: why (the latest failure, or what is under way)
};

class InformerSync {
 public:
  using Clock = std::chrono::steady_clock;
  struct Limits {
    std::chrono::milliseconds hand_off{1000};  // a normal gap between lists and watches
    std::chrono::milliseconds settle{200};     // a 200 watch without ERROR this long is established
  };

  InformerSync(Clock::time_point started, Limits limits);

  // A complete list reached the cache.
  void ListCompleted(Clock::time_point now);
  // A watch was answered 200 (not yet established: an ERROR 410 may follow).
  void WatchOpened(Clock::time_point now);
  // The open watch delivered an event or a bookmark (never call it for an ERROR).
  void WatchLine(Clock::time_point now);
  // The watch ended. `normal`: the server ended it at its timeoutSeconds (a hand-off follows);
  // otherwise it broke, and `cause` says how.
  void WatchEnded(Clock::time_point now, bool normal, const std::string& cause);
  // A list or watch request failed: any hand-off is over.
  void Failed(const std::string& cause);
  // What is under way, shown as the cause if the resource is or becomes out of sync.
  void Doing(const std::string& cause);

  SyncState State(Clock::time_point now) const;

 private:
  bool Established(Clock::time_point now) const;
  Clock::time_point EstablishedAt() const;
  // True when, at `at`, a hand-off still counts as following.
  bool InHandOff(Clock::time_point at) const;

  Limits limits_;
  Clock::time_point started_;
  bool listed_ = false;
  Clock::time_point last_current_;  // the last moment known to follow, when not following now
  bool hand_off_ = false;           // the period since last_current_ began as a hand-off
  Clock::time_point in_sync_since_;
  bool watch_open_ = false;
  Clock::time_point open_at_;
  bool confirmed_ = false;  // a line arrived on the open watch
  Clock::time_point confirmed_at_;
  std::string cause_ = "first list under way";
};

}  // namespace capext::kube
