// TimerThread (extender/timer_thread.h): callbacks run once, in order of their instants, on the
// timer's own thread, with their own id; Cancel stops one that has not started; a callback may
// add another; pending callbacks never run after destruction.
#include "extender/timer_thread.h"

#include <atomic>
#include <chrono>
#include <future>
#include <mutex>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

namespace capext {
namespace timer_thread_test {
namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

TEST_CASE("timer thread: callbacks run in order of their instants, with their ids", "[timer]") {
  TimerThread timers;
  std::mutex mutex;
  std::vector<int> order;
  std::vector<TimerThread::Id> ids(3), seen(3);
  std::promise<void> last;
  const auto now = Clock::now();
  const std::thread::id test_thread = std::this_thread::get_id();
  std::atomic<bool> on_test_thread{false};
  auto record = [&](int which) {
    return [&, which](TimerThread::Id id) {
      if (std::this_thread::get_id() == test_thread) on_test_thread = true;
      std::lock_guard lock(mutex);
      order.push_back(which);
      seen[which] = id;
      if (order.size() == 3) last.set_value();
    };
  };
  ids[2] = timers.At(now + 60ms, record(2));
  ids[0] = timers.At(now - 1s, record(0));  // already due
  ids[1] = timers.At(now + 30ms, record(1));
  REQUIRE(last.get_future().wait_for(5s) == std::future_status::ready);
  CHECK(order == std::vector<int>{0, 1, 2});
  CHECK(seen == ids);
  CHECK_FALSE(on_test_thread.load());
  CHECK(Clock::now() >= now + 60ms);
  CHECK(timers.pending() == 0);
}

TEST_CASE("timer thread: Cancel stops a callback that has not started", "[timer]") {
  TimerThread timers;
  std::atomic<int> ran{0};
  const TimerThread::Id id = timers.At(Clock::now() + 50ms, [&](TimerThread::Id) { ++ran; });
  CHECK(timers.pending() == 1);
  CHECK(timers.Cancel(id));
  CHECK_FALSE(timers.Cancel(id));  // once
  CHECK(timers.pending() == 0);
  std::promise<void> after;
  timers.At(Clock::now() + 80ms, [&](TimerThread::Id) { after.set_value(); });
  REQUIRE(after.get_future().wait_for(5s) == std::future_status::ready);
  CHECK(ran.load() == 0);
}

TEST_CASE("timer thread: a callback may add and cancel others; pending ones die unrun", "[timer]") {
  std::atomic<int> ran{0};
  std::promise<void> chained;
  {
    TimerThread timers;
    timers.At(Clock::now(), [&](TimerThread::Id) {
      const TimerThread::Id far = timers.At(Clock::now() + 1h, [&](TimerThread::Id) { ++ran; });
      CHECK(timers.Cancel(far));
      timers.At(Clock::now() + 10ms, [&](TimerThread::Id) { chained.set_value(); });
    });
    REQUIRE(chained.get_future().wait_for(5s) == std::future_status::ready);
    timers.At(Clock::now() + 1h, [&](TimerThread::Id) { ++ran; });
    CHECK(timers.pending() == 1);
  }  // destroyed with one callback pending: it never runs
  CHECK(ran.load() == 0);
}

}  // namespace
}  // namespace timer_thread_test
}  // namespace capext
