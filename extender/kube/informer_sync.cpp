#include "extender/kube/informer_sync.h"

#include <algorithm>

namespace capext::kube {

InformerSync::InformerSync(Clock::time_point started, Limits limits)
    : limits_(limits), started_(started), last_current_(started), in_sync_since_(started) {}

bool InformerSync::Established(Clock::time_point now) const {
  return watch_open_ && (confirmed_ || now - open_at_ >= limits_.settle);
}

InformerSync::Clock::time_point InformerSync::EstablishedAt() const {
  const Clock::time_point settled = open_at_ + limits_.settle;
  return confirmed_ ? std::min(confirmed_at_, settled) : settled;
}

bool InformerSync::InHandOff(Clock::time_point at) const {
  return listed_ && hand_off_ && at - last_current_ <= limits_.hand_off;
}

SyncState InformerSync::State(Clock::time_point now) const {
  SyncState state;
  state.listed = listed_;
  if (!listed_) {
    state.since = started_;
    state.cause = cause_;
    return state;
  }
  if (Established(now)) {
    const Clock::time_point at = EstablishedAt();
    state.in_sync = true;
    // Established after a gap that was not a short hand-off: a new in-sync period.
    state.since = InHandOff(at) ? in_sync_since_ : at;
    return state;
  }
  if (InHandOff(now)) {
    state.in_sync = true;
    state.since = in_sync_since_;
    return state;
  }
  state.since = last_current_;
  state.cause = cause_;
  return state;
}

void InformerSync::ListCompleted(Clock::time_point now) {
  if (!InHandOff(now)) in_sync_since_ = now;
  listed_ = true;
  last_current_ = now;
  hand_off_ = true;  // the list -> watch hand-off
  watch_open_ = false;
  confirmed_ = false;
  cause_ = "opening the watch after a list";
}

void InformerSync::WatchOpened(Clock::time_point now) {
  watch_open_ = true;
  open_at_ = now;
  confirmed_ = false;
}

void InformerSync::WatchLine(Clock::time_point now) {
  if (watch_open_ && !confirmed_) {
    confirmed_ = true;
    confirmed_at_ = now;
  }
}

void InformerSync::WatchEnded(Clock::time_point now, bool normal, const std::string& cause) {
  if (listed_ && Established(now)) {
    in_sync_since_ = State(now).since;
    last_current_ = now;
    hand_off_ = normal;
  } else if (!normal) {
    hand_off_ = false;
  }
  watch_open_ = false;
  confirmed_ = false;
  cause_ = normal ? "reopening the watch" : cause;
}

void InformerSync::Failed(const std::string& cause) {
  hand_off_ = false;
  cause_ = cause;
}

void InformerSync::Doing(const std::string& cause) {
  cause_ = cause;
}

}  // namespace capext::kube
