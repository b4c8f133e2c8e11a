// BindFlights: the binds between their reservation and the end of their Binding POST ("flights",
// at most one per pod), the retries waiting for a flight's outcome, and the pods whose last
// Binding was sent and never answered (docs/architecture.md#how-a-bind-travels, steps 2, 4 and 5).
//
// A retry of a pod in flight joins the flight: it is answered when the flight lands (the caller
// takes the waiters from Land) or, if that comes first, at its own deadline, when the deadline
// handler gets it on the timer thread. Exactly one of the two gets each waiter.
//
// Flights are bounded by the caller (Size() against maxBindsInFlight) under the cache's lock,
// which also orders flights with reservations: Open, Join, Land and the unanswered marks are
// called with the cache's exclusive lock held.
// Thread-safety: every method is thread-safe (one mutex; the deadline handler runs without it).
// Lock order: the cache's lock, then this mutex, then the TimerThread's.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "extender/http/server.h"
#include "extender/timer_thread.h"
#include "extender/wire/extender_wire.h"

namespace capext {

class BindFlights {
 public:
  using Clock = std::chrono::steady_clock;

  // A /bind of a pod whose flight is in the air, waiting for its outcome.
  struct Waiter {
    ExtenderBindingArgs args;
    Clock::time_point received;  // the request's first byte
    Clock::time_point deadline;  // received + bindDeadline
    std::string client;          // the caller's "ip:port"
    http::Responder respond;
  };
  // The flight a waiter joined, as it was when the waiter's deadline came.
  struct FlightView {
    std::string node;
    Clock::time_point opened;
  };
  // A pod whose Binding was sent and never answered: it may be bound.
  struct Unanswered {
    std::string node;
    Clock::time_point at;  // when the Binding gave up waiting
    std::string error;     // why no answer came
  };
  // Runs on the timer thread, without any lock held, with a waiter whose deadline came before
  // its flight landed.
  using DeadlineHandler = std::function<void(Waiter waiter, const FlightView& flight)>;

  explicit BindFlights(DeadlineHandler on_deadline);
  BindFlights(const BindFlights&) = delete;
  BindFlights& operator=(const BindFlights&) = delete;

  std::size_t Size() const;
  std::optional<FlightView> Find(const std::string& key) const;
  // REQUIRES: no flight of `key`.
  void Open(const std::string& key, const std::string& node, Clock::time_point now);
  // Adds a waiter to key's flight. REQUIRES: a flight of `key`.
  void Join(const std::string& key, Waiter waiter);
  // Closes key's flight and returns the waiters still waiting, theirs to answer.
  std::vector<Waiter> Land(const std::string& key);

  void MarkUnanswered(const std::string& key, Unanswered unanswered);
  std::optional<Unanswered> FindUnanswered(const std::string& key) const;
  void ForgetUnanswered(const std::string& key);
  // Forgets the marks of pods `reserved` says hold no reservation any more (the watch settled
  // them, or the reservation expired): the marks never outnumber the reservations.
  void PruneUnanswered(const std::function<bool(const std::string& key)>& reserved);
  std::size_t UnansweredSize() const;

 private:
  struct Flight {
    std::string node;
    Clock::time_point opened;
    std::map<TimerThread::Id, Waiter> waiters;  // by the id of their deadline timer
  };
  void OnDeadline(const std::string& key, TimerThread::Id id);

  DeadlineHandler on_deadline_;
  mutable std::mutex mutex_;
  std::unordered_map<std::string, Flight> flights_;  // by pod store key
  std::unordered_map<std::string, Unanswered> unanswered_;
  TimerThread timers_;  // last: destroyed (joined) first, while the rest still exists
};

}  // namespace capext
