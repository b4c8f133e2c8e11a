// BindFlights (extender/verbs/bind_flights.h): each waiter is handed out exactly once, either by
// Land or, at its deadline, to the deadline handler (never both, whatever the interleaving);
// the unanswered marks are pruned with the reservations.
#include "extender/verbs/bind_flights.h"

#include <atomic>
#include <chrono>
#include <future>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

namespace capext {
namespace bind_flights_test {
namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

BindFlights::Waiter MakeWaiter(const std::string& node, Clock::time_point deadline) {
  ExtenderBindingArgs args;
  args.pod_name = "p";
  args.pod_namespace = "ns";
  args.node = node;
  return BindFlights::Waiter{args, Clock::now(), deadline, "127.0.0.1:50000",
                             [](http::Response) {}};
}

TEST_CASE("bind flights: Land hands the waiters out; a landed flight is gone", "[bind]") {
  std::atomic<int> expired{0};
  BindFlights flights([&](BindFlights::Waiter, const BindFlights::FlightView&) { ++expired; });
  CHECK(flights.Size() == 0);
  flights.Open("k", "n1", Clock::now());
  REQUIRE(flights.Find("k"));
  CHECK(flights.Find("k")->node == "n1");
  flights.Join("k", MakeWaiter("n1", Clock::now() + 1h));
  flights.Join("k", MakeWaiter("n2", Clock::now() + 1h));
  CHECK(flights.Size() == 1);
  const auto waiters = flights.Land("k");
  REQUIRE(waiters.size() == 2);
  CHECK(waiters[0].args.node != waiters[1].args.node);
  CHECK_FALSE(flights.Find("k"));
  CHECK(flights.Land("k").empty());
  CHECK(expired.load() == 0);
}

TEST_CASE("bind flights: a waiter whose deadline comes first goes to the handler, once", "[bind]") {
  std::promise<std::string> got;
  BindFlights flights([&](BindFlights::Waiter waiter, const BindFlights::FlightView& flight) {
    got.set_value(waiter.args.node + "@" + flight.node);
  });
  flights.Open("k", "n1", Clock::now());
  flights.Join("k", MakeWaiter("n2", Clock::now() + 20ms));
  auto future = got.get_future();
  REQUIRE(future.wait_for(5s) == std::future_status::ready);
  CHECK(future.get() == "n2@n1");
  CHECK(flights.Land("k").empty());  // the handler had it
}

TEST_CASE("bind flights: Land racing the deadlines hands each waiter out exactly once",
          "[bind][concurrency]") {
  std::atomic<int> by_handler{0};
  BindFlights flights([&](BindFlights::Waiter, const BindFlights::FlightView&) { ++by_handler; });
  int by_land = 0;
  constexpr int kRounds = 200;
  for (int round = 0; round < kRounds; ++round) {
    const std::string key = "k" + std::to_string(round);
    flights.Open(key, "n1", Clock::now());
    // Deadlines around now: some fire before Land, some race it, some come after.
    flights.Join(key, MakeWaiter("n1", Clock::now() + std::chrono::microseconds(round * 5)));
    if (round % 3 == 0) std::this_thread::sleep_for(std::chrono::microseconds(round * 3));
    by_land += static_cast<int>(flights.Land(key).size());
  }
  // Handlers already started finish; nothing else is pending.
  const auto until = Clock::now() + 5s;
  while (by_land + by_handler.load() < kRounds && Clock::now() < until)
    std::this_thread::sleep_for(1ms);
  CHECK(by_land + by_handler.load() == kRounds);
  CHECK(flights.Size() == 0);
}

TEST_CASE("bind flights: unanswered marks live as long as the reservation", "[bind]") {
  BindFlights flights([](BindFlights::Waiter, const BindFlights::FlightView&) {});
  flights.MarkUnanswered("a", {"n1", Clock::now(), "timed out"});
  flights.MarkUnanswered("b", {"n2", Clock::now(), "connection reset"});
  REQUIRE(flights.FindUnanswered("a"));
  CHECK(flights.FindUnanswered("a")->error == "timed out");
  std::set<std::string> reserved = {"b"};
  flights.PruneUnanswered([&](const std::string& key) { return reserved.count(key) > 0; });
  CHECK_FALSE(flights.FindUnanswered("a"));
  CHECK(flights.FindUnanswered("b"));
  CHECK(flights.UnansweredSize() == 1);
  flights.ForgetUnanswered("b");
  CHECK(flights.UnansweredSize() == 0);
}

}  // namespace
}  // namespace bind_flights_test
}  // namespace capext
