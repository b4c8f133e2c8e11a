// TimerThread: runs callbacks at given instants, on one thread of its own started with it. It
// serves the joined /bind retries, each answered at its own deadline if the Binding it waits for
// has not landed by then (docs/architecture.md#how-a-bind-travels); one thread for all of them, so
// that no thread is created or blocked per bind.
// Callbacks run one at a time, in order of their instants, without any lock of the TimerThread
// held: a callback may call At and Cancel. Callbacks still pending when the TimerThread is
// destroyed never run (they are destroyed on the destroying thread).
// Thread-safety: At and Cancel may be called from any thread, callbacks included.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <thread>
#include <utility>

namespace capext {

class TimerThread {
 public:
  using Clock = std::chrono::steady_clock;
  using Id = uint64_t;
  using Callback = std::function<void(Id)>;  // gets the id At returned for it

  TimerThread();
  ~TimerThread();
  TimerThread(const TimerThread&) = delete;
  TimerThread& operator=(const TimerThread&) = delete;

  // Runs `callback` on the timer thread at `when` (as soon as possible when it has passed).
  // Returns an id for Cancel (never 0).
  Id At(Clock::time_point when, Callback callback);
  // True when the callback had not started yet: it never will. False when it ran, is running, or
  // was cancelled before.
  bool Cancel(Id id);
  // Callbacks waiting to run.
  std::size_t pending() const;

 private:
  void Run();

  mutable std::mutex mutex_;
  std::condition_variable wake_;
  // Ordered by instant, then by id (the order they were added).
  std::map<std::pair<Clock::time_point, Id>, Callback> due_;
  std::map<Id, Clock::time_point> when_;  // id -> instant, for Cancel
  Id next_id_ = 1;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace capext
