// Tests of ConnectionDeadline (extender/http/connection_deadline.h): expiry never before the
// deadline set last, moving it later costs no timer re-arm, kNever suspends, Cancel and the
// owner's end stop it.
#include "extender/http/connection_deadline.h"

#include <chrono>
#include <memory>
#include <optional>

#include <boost/asio/io_context.hpp>
#include <catch2/catch.hpp>

namespace connection_deadline_test {
namespace {

using capext::http::ConnectionDeadline;
using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

// What a connection holds: the deadline as a member, expiry recorded.
struct Owner {
  explicit Owner(boost::asio::io_context& io) : deadline(io.get_executor()) {}
  ConnectionDeadline deadline;
  std::optional<Clock::time_point> expired_at;
  int expiries = 0;
};

std::shared_ptr<Owner> MakeOwner(boost::asio::io_context& io) {
  auto owner = std::make_shared<Owner>(io);
  owner->deadline.Init(owner, [raw = owner.get()] {
    raw->expired_at = Clock::now();
    ++raw->expiries;
  });
  return owner;
}

// Runs `io` for up to a second and checks the owner's deadline expired once, not before `deadline`.
void RunAndCheckExpiredOnceAfter(boost::asio::io_context& io, const Owner& owner,
                                 Clock::time_point deadline) {
  io.restart();
  io.run_for(1s);
  REQUIRE(owner.expired_at.has_value());
  CHECK(*owner.expired_at >= deadline);
  CHECK(owner.expiries == 1);
}

// Each test's io_context and the owner whose deadline it drives.
struct DeadlineFixture {
  boost::asio::io_context io;
  std::shared_ptr<Owner> owner = MakeOwner(io);
};

TEST_CASE_METHOD(DeadlineFixture, "a deadline expires once, never before the time set last",
                 "[http]") {
  const auto deadline = Clock::now() + 60ms;
  owner->deadline.Set(deadline);
  RunAndCheckExpiredOnceAfter(io, *owner, deadline);
}

TEST_CASE_METHOD(DeadlineFixture, "moving a deadline later re-arms nothing until the timer wakes",
                 "[http]") {
  owner->deadline.SetAfter(40ms);
  Clock::time_point last{};
  for (int i = 0; i < 1000; ++i) {
    last = Clock::now() + 120ms;
    owner->deadline.Set(last);
  }
  CHECK(owner->deadline.arms() == 1);
  io.run_for(1s);
  REQUIRE(owner->expired_at.has_value());
  CHECK(*owner->expired_at >= last);  // not at the first 40 ms
  CHECK(owner->expiries == 1);
  CHECK(owner->deadline.arms() == 2);  // the wake at 40 ms re-armed once, for the last time set
}

TEST_CASE_METHOD(DeadlineFixture, "an earlier deadline re-arms at once", "[http]") {
  const auto started = Clock::now();
  owner->deadline.SetAfter(10s);
  owner->deadline.SetAfter(30ms);
  CHECK(owner->deadline.arms() == 2);
  io.run_for(2s);
  REQUIRE(owner->expired_at.has_value());
  CHECK(*owner->expired_at - started >= 30ms);
  CHECK(*owner->expired_at - started < 5s);
}

TEST_CASE_METHOD(DeadlineFixture, "kNever suspends a deadline and a later one applies again",
                 "[http]") {
  owner->deadline.SetAfter(20ms);
  owner->deadline.Set(ConnectionDeadline::kNever);
  io.run_for(150ms);
  CHECK(owner->expiries == 0);
  const auto deadline = Clock::now() + 20ms;
  owner->deadline.Set(deadline);
  RunAndCheckExpiredOnceAfter(io, *owner, deadline);
}

TEST_CASE_METHOD(DeadlineFixture, "Cancel ends a deadline for good and leaves no wait behind",
                 "[http]") {
  owner->deadline.SetAfter(10s);
  owner->deadline.Cancel();
  owner->deadline.SetAfter(10ms);  // a closing connection's late Set is ignored
  const auto started = Clock::now();
  io.run();  // returns only when no wait is pending
  CHECK(Clock::now() - started < 5s);
  CHECK(owner->expiries == 0);
}

TEST_CASE("an owner gone before its deadline is never called back", "[http]") {
  boost::asio::io_context io;
  int calls = 0;
  {
    auto owner = std::make_shared<Owner>(io);
    owner->deadline.Init(owner, [&calls] { ++calls; });
    owner->deadline.SetAfter(10ms);
  }  // the timer goes with its owner; its wait completes as cancelled
  io.run_for(200ms);
  CHECK(calls == 0);
}

}  // namespace
}  // namespace connection_deadline_test
