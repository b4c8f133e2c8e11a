// FilterPacer (extender/filter_pacer.h): a /filter answer goes at once while the Binding queue is
// at most hold_above long, and is held otherwise until the queue is back at it (oldest first) or
// its hold_limit passes; hold_limit 0 never holds; destruction sends what is still held. No test
// asserts on time: the limit's release is told apart by its counter.
#include "extender/filter_pacer.h"

#include <chrono>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

namespace capext {
namespace filter_pacer_test {
namespace {

using namespace std::chrono_literals;

// Records the bodies of the answers sent, in order.
struct Sent {
  std::mutex mutex;
  std::vector<std::string> bodies;
  http::Responder Responder() {
    return [this](http::Response r) {
      std::lock_guard lock(mutex);
      bodies.push_back(r.body);
    };
  }
  std::vector<std::string> Bodies() {
    std::lock_guard lock(mutex);
    return bodies;
  }
};

http::Response Answer(const std::string& body) {
  return {200, "application/json", body, {}};
}

bool Renders(const Metrics& metrics, const std::string& line) {
  return metrics.Render().find(line + "\n") != std::string::npos;
}

TEST_CASE("filter pacing: an answer goes at once while the queue is no longer than hold_above",
          "[pacer]") {
  Metrics metrics;
  FilterPacer pacer({2, 60s}, &metrics);
  Sent sent;
  pacer.QueuedBindingsChanged(+2);
  pacer.Answer(Answer("a"), sent.Responder());
  CHECK(sent.Bodies() == std::vector<std::string>{"a"});
  CHECK(pacer.held() == 0);
  CHECK(Renders(metrics, "capacity_extender_filter_held_total 0"));
}

TEST_CASE(
    "filter pacing: above hold_above an answer waits until the queue is back at it, "
    "oldest first",
    "[pacer]") {
  Metrics metrics;
  FilterPacer pacer({1, 60s}, &metrics);
  Sent sent;
  pacer.QueuedBindingsChanged(+3);
  pacer.Answer(Answer("first"), sent.Responder());
  pacer.Answer(Answer("second"), sent.Responder());
  CHECK(sent.Bodies().empty());
  CHECK(pacer.held() == 2);
  pacer.QueuedBindingsChanged(-1);  // 2: still above
  CHECK(sent.Bodies().empty());
  pacer.QueuedBindingsChanged(-1);  // 1: back at it
  CHECK(sent.Bodies() == std::vector<std::string>{"first", "second"});
  CHECK(pacer.held() == 0);
  CHECK(Renders(metrics, "capacity_extender_filter_held_total 2"));
  CHECK(Renders(metrics, "capacity_extender_filter_held_to_limit_total 0"));
  CHECK(Renders(metrics, "capacity_extender_filter_hold_seconds_count 2"));
  // The queue short again: the next answer goes at once.
  pacer.Answer(Answer("third"), sent.Responder());
  CHECK(sent.Bodies().size() == 3);
}

TEST_CASE("filter pacing: hold_limit sends an answer the queue still holds back", "[pacer]") {
  Metrics metrics;
  FilterPacer pacer({0, 20ms}, &metrics);
  pacer.QueuedBindingsChanged(+5);
  std::promise<std::string> answered;
  auto got = answered.get_future();
  pacer.Answer(Answer("late"), [&](http::Response r) { answered.set_value(r.body); });
  REQUIRE(got.wait_for(30s) == std::future_status::ready);
  CHECK(got.get() == "late");
  CHECK(pacer.held() == 0);
  CHECK(Renders(metrics, "capacity_extender_filter_held_to_limit_total 1"));
  // The queue shortening later finds nothing to send twice.
  pacer.QueuedBindingsChanged(-5);
  CHECK(Renders(metrics, "capacity_extender_filter_hold_seconds_count 1"));
}

TEST_CASE("filter pacing: hold_limit 0 never holds", "[pacer]") {
  Metrics metrics;
  FilterPacer pacer({0, 0ms}, &metrics);
  Sent sent;
  pacer.QueuedBindingsChanged(+100);
  pacer.Answer(Answer("a"), sent.Responder());
  CHECK(sent.Bodies() == std::vector<std::string>{"a"});
  CHECK(Renders(metrics, "capacity_extender_filter_held_total 0"));
}

TEST_CASE("filter pacing: destruction sends every answer still held", "[pacer]") {
  Metrics metrics;
  Sent sent;
  {
    FilterPacer pacer({0, 60s}, &metrics);
    pacer.QueuedBindingsChanged(+1);
    pacer.Answer(Answer("a"), sent.Responder());
    pacer.Answer(Answer("b"), sent.Responder());
    CHECK(sent.Bodies().empty());
  }
  CHECK(sent.Bodies() == std::vector<std::string>{"a", "b"});
}

}  // namespace
}  // namespace filter_pacer_test
}  // namespace capext
