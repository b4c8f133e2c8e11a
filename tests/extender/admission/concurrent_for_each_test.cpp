// ForEachConcurrently (extender/admission/concurrent_for_each.h): every index exactly once, never
// more than `width` calls at once, and with width 1 in order on the calling thread.
#include "extender/admission/concurrent_for_each.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

namespace capext {
namespace concurrent_for_each_test {
namespace {

TEST_CASE("ForEachConcurrently: every index once, at most `width` at a time",
          "[admission_loop][concurrency]") {
  std::mutex mutex;
  std::vector<int> seen(100, 0);
  int inside = 0, most = 0;
  ForEachConcurrently(seen.size(), 4, [&](std::size_t i) {
    {
      std::lock_guard<std::mutex> lock(mutex);
      ++seen[i];
      most = std::max(most, ++inside);
    }
    std::this_thread::sleep_for(std::chrono::microseconds(200));
    std::lock_guard<std::mutex> lock(mutex);
    --inside;
  });
  CHECK(seen == std::vector<int>(100, 1));
  CHECK(most <= 4);
  CHECK(most >= 1);
}

TEST_CASE("ForEachConcurrently: width 1 runs in order on the calling thread",
          "[admission_loop][concurrency]") {
  std::vector<std::size_t> order;
  std::set<std::thread::id> threads;
  ForEachConcurrently(5, 1, [&](std::size_t i) {
    order.push_back(i);
    threads.insert(std::this_thread::get_id());
  });
  CHECK(order == std::vector<std::size_t>{0, 1, 2, 3, 4});
  CHECK(threads == std::set<std::thread::id>{std::this_thread::get_id()});
  ForEachConcurrently(0, 4, [&](std::size_t) { FAIL("no index to run"); });
}

}  // namespace
}  // namespace concurrent_for_each_test
}  // namespace capext
