// ConnectionDeadline: when a connection's current step (read a request, write a response, connect,
// wait for the next piece of a watch) must be over, movable without a system call.
//
// Why not beast::tcp_stream's timeout: it re-arms an Asio timer before every read and write. A
// re-arm that makes the timer the process's earliest costs a timerfd_settime, and the cancelled
// wait completes as one more turn of the event loop (an epoll_wait). On bench_podcost_bench (500
// nodes, the API-server double) that was 8 timerfd_settime and 32 epoll_wait of the extender's 75
// system calls per scheduled pod. Here Set() only stores the time. The connection's one timer is
// re-armed only when a deadline comes earlier than the time it waits for, or when it wakes to find
// the deadline moved later (at most once per timeout period of a busy connection).
//
// Contract: `expired` runs on the timer's executor once the deadline set last has passed: never
// before it, and after it by no more than the timer's own latency. Set(kNever) suspends the
// deadline; Cancel() ends it for good (the connection is closing). `expired` runs only while
// `owner` is alive, so the owner may hold this object as a member and be destroyed at any time.
// Thread-safety: none; every call on the executor's thread (the connection's strand).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <utility>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/steady_timer.hpp>

namespace capext::http {

class ConnectionDeadline {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr Clock::time_point kNever = Clock::time_point::max();

  explicit ConnectionDeadline(const boost::asio::any_io_executor& executor) : timer_(executor) {}

  // Call once before the first Set.
  void Init(std::weak_ptr<void> owner, std::function<void()> expired) {
    owner_ = std::move(owner);
    expired_ = std::move(expired);
  }

  void Set(Clock::time_point deadline) {
    if (cancelled_) return;
    deadline_ = deadline;
    if (deadline < armed_) Arm(deadline);
  }
  void SetAfter(Clock::duration timeout) { Set(Clock::now() + timeout); }

  // How many times the timer was set: what moving the deadline costs (tests, measurements).
  std::uint64_t arms() const { return arms_; }

  void Cancel() {
    cancelled_ = true;
    deadline_ = kNever;
    armed_ = kNever;
    timer_.cancel();
  }

 private:
  void Arm(Clock::time_point at) {
    armed_ = at;
    ++arms_;
    timer_.expires_at(at);  // a wait in progress completes with operation_aborted
    timer_.async_wait([this, owner = owner_](const boost::system::error_code& ec) {
      if (ec) return;  // re-armed or cancelled: `this` may be gone, touch nothing
      const auto alive = owner.lock();
      if (alive) OnTimer();
    });
  }

  void OnTimer() {
    const Clock::time_point now = Clock::now();
    // A wait that had completed when a re-arm came: the re-armed wait stands.
    if (cancelled_ || armed_ > now) return;
    armed_ = kNever;
    if (deadline_ <= now) {
      deadline_ = kNever;
      expired_();
    } else if (deadline_ != kNever) {
      Arm(deadline_);
    }
  }

  boost::asio::steady_timer timer_;
  std::weak_ptr<void> owner_;
  std::function<void()> expired_;
  Clock::time_point deadline_ = kNever;
  Clock::time_point armed_ = kNever;  // when the pending wait ends; kNever when none is pending
  std::uint64_t arms_ = 0;
  bool cancelled_ = false;
};

}  // namespace capext::http
