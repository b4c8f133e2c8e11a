// EventWriteQueue: the pods whose current Event series waits for a write, in the order the
// EventRecorder writes them, so that a Flush costs what it writes rather than what it tracks
// (with 20,000 pending pods the rate limits allow a handful of writes a second; sorting every
// series at every Flush cost most of the extender's CPU at rest).
// Each pod is in at most one place:
//   create   its series has no Event yet: due now, oldest verdict first (`at` = its verdict's
//   time); refresh  its series has an Event: due once `at` (its last write) is at or before the
//   cutoff
//            (now - the refresh interval), least recently written first;
//   retry    a write failed: nothing is due before `at`; TakeRetriesDue hands it back to the
//            caller, which puts it where it belongs.
// Pods are kept by namespace so that the walk skips a namespace out of tokens in one step: it
// merges the namespaces' queues (creates of every namespace before any refresh), and costs
// O((visited + namespaces) log namespaces).
// Thread-safety: none; the EventRecorder's lock guards it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace capext {

class EventWriteQueue {
 public:
  enum class Place { kCreate, kRefresh, kRetry };

  // Puts the pod `uid` of namespace `ns` in `place` at `at_ms` (moving it if it was elsewhere).
  void Put(const std::string& uid, const std::string& ns, Place place, int64_t at_ms);
  // Takes the pod out (nothing is due for it).
  void Remove(const std::string& uid);
  bool Contains(const std::string& uid) const { return pods_.contains(uid); }

  // Takes out the pods whose retry time is at or before `now_ms`.
  std::vector<std::string> TakeRetriesDue(int64_t now_ms);

  // The writes due with refreshes due at or before `refresh_cutoff_ms`: every create, and the
  // refreshes up to the cutoff. REQUIRES: the cutoff never goes back (else it is recounted).
  std::size_t DueCount(int64_t refresh_cutoff_ms);

  // What the visitor of Walk says about a pod.
  enum class Visit {
    kWritten,             // a write was taken for it: go on
    kNamespaceExhausted,  // its namespace has no token: skip the rest of that namespace
    kStop,                // no token at all: stop
  };
  // Visits the due pods in write order, creates then refreshes (up to `refresh_cutoff_ms`), each
  // part oldest first (then by uid), skipping namespaces the visitor declared exhausted. The
  // visitor must not change the queue. visit(uid, ns) -> Visit.
  template <typename Visitor>
  void Walk(int64_t refresh_cutoff_ms, Visitor&& visit) const;

 private:
  using Key = std::pair<int64_t, std::string>;  // (at, uid)
  struct Queues {
    std::set<Key> create, refresh;
  };
  struct Where {
    std::string ns;
    Place place = Place::kCreate;
    int64_t at_ms = 0;
  };
  void CountRefresh(int64_t at_ms, int delta);

  std::unordered_map<std::string, Where> pods_;  // by uid
  std::map<std::string, Queues, std::less<>> namespaces_;
  std::set<Key> retries_;
  std::size_t creates_ = 0;
  // Refreshes by last write time, and how many are at or before refresh_cutoff_.
  std::map<int64_t, std::size_t> refresh_times_;
  int64_t refresh_cutoff_ = INT64_MIN;
  std::size_t refreshes_due_ = 0;
};

template <typename Visitor>
void EventWriteQueue::Walk(int64_t refresh_cutoff_ms, Visitor&& visit) const {
  std::set<std::string_view> exhausted;
  for (const bool refresh : {false, true}) {
    // One cursor per namespace, merged by (at, uid) through an ordered set of heads.
    using Cursor = std::set<Key>::const_iterator;
    struct Head {
      const Key* key;
      const std::string* ns;
      Cursor next, end;
      bool operator<(const Head& o) const { return *key != *o.key ? *key < *o.key : *ns < *o.ns; }
    };
    std::set<Head> heads;
    auto push = [&](const std::string* ns, Cursor it, Cursor end) {
      if (it == end || (refresh && it->first > refresh_cutoff_ms)) return;
      heads.insert(Head{&*it, ns, std::next(it), end});
    };
    for (const auto& [ns, queues] : namespaces_) {
      if (exhausted.contains(ns)) continue;
      const auto& set = refresh ? queues.refresh : queues.create;
      push(&ns, set.begin(), set.end());
    }
    while (!heads.empty()) {
      const Head head = *heads.begin();
      heads.erase(heads.begin());
      switch (visit(head.key->second, *head.ns)) {
        case Visit::kWritten:
          push(head.ns, head.next, head.end);
          break;
        case Visit::kNamespaceExhausted:
          exhausted.insert(*head.ns);
          break;
        case Visit::kStop:
          return;
      }
    }
  }
}

}  // namespace capext
