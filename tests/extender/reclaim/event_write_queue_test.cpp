// EventWriteQueue (extender/reclaim/event_write_queue.h): the write order (creates oldest first,
// then refreshes least recently written first, merged over namespaces), the refresh cutoff, a
// namespace out of tokens skipped in one step, the due count kept as pods move, and retries.
#include "extender/reclaim/event_write_queue.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

namespace capext {
namespace event_write_queue_test {
namespace {

using Place = EventWriteQueue::Place;
using Visit = EventWriteQueue::Visit;
using Strings = std::vector<std::string>;

// Every due pod in write order, when every write gets a token.
Strings Order(const EventWriteQueue& queue, int64_t cutoff) {
  Strings out;
  queue.Walk(cutoff, [&](const std::string& uid, const std::string&) {
    out.push_back(uid);
    return Visit::kWritten;
  });
  return out;
}

TEST_CASE("event write queue: creates oldest first, then refreshes up to the cutoff",
          "[events][event_write_queue]") {
  EventWriteQueue q;
  q.Put("r-old", "eq2", Place::kRefresh, 100);
  q.Put("c-late", "eq1", Place::kCreate, 300);
  q.Put("r-new", "eq1", Place::kRefresh, 200);
  q.Put("c-early-b", "eq2", Place::kCreate, 50);
  q.Put("c-early-a", "eq1", Place::kCreate, 50);  // same time: by uid
  q.Put("retry", "eq1", Place::kRetry, 10);       // not due until taken back
  CHECK(Order(q, 150) == Strings{"c-early-a", "c-early-b", "c-late", "r-old"});
  CHECK(q.DueCount(150) == 4);
  CHECK(Order(q, 200) == Strings{"c-early-a", "c-early-b", "c-late", "r-old", "r-new"});
  CHECK(q.DueCount(200) == 5);
  CHECK(Order(q, 99) == Strings{"c-early-a", "c-early-b", "c-late"});
  CHECK(q.DueCount(99) == 3);  // the clock went back: counted again
}

TEST_CASE("event write queue: a namespace out of tokens is skipped at once; a stop stops",
          "[events][event_write_queue]") {
  EventWriteQueue q;
  for (int i = 0; i < 100; ++i) {
    for (const char* ns : {"eq1", "eq2", "eq3"}) {
      q.Put(std::string(ns) + "-c" + std::to_string(i), ns, Place::kCreate, i);
      q.Put(std::string(ns) + "-r" + std::to_string(i), ns, Place::kRefresh, i);
    }
  }
  REQUIRE(q.DueCount(1000) == 600);
  SECTION("eq1 takes two writes, the others none: five visits in all") {
    Strings visited;
    int eq1_tokens = 2;
    q.Walk(1000, [&](const std::string& uid, const std::string& ns) {
      visited.push_back(uid);
      if (ns == "eq1" && eq1_tokens > 0) {
        --eq1_tokens;
        return Visit::kWritten;
      }
      return Visit::kNamespaceExhausted;
    });
    CHECK(visited == Strings{"eq1-c0", "eq2-c0", "eq3-c0", "eq1-c1", "eq1-c2"});
  }
  SECTION("an exhausted namespace stays skipped among the refreshes") {
    Strings visited;
    q.Walk(1000, [&](const std::string& uid, const std::string& ns) {
      visited.push_back(uid);
      if (ns != "eq3") return Visit::kNamespaceExhausted;
      return uid == "eq3-c99" || uid.find("-r") != std::string::npos ? Visit::kStop
                                                                     : Visit::kWritten;
    });
    CHECK(visited.size() == 102);  // eq1-c0, eq2-c0, then eq3's 100 creates
    CHECK(visited.back() == "eq3-c99");
  }
  SECTION("no token at all: one visit") {
    int visits = 0;
    q.Walk(1000, [&](const std::string&, const std::string&) {
      ++visits;
      return Visit::kStop;
    });
    CHECK(visits == 1);
  }
}

TEST_CASE("event write queue: moves and removals keep the due count",
          "[events][event_write_queue]") {
  EventWriteQueue q;
  q.Put("a", "eq1", Place::kCreate, 10);
  q.Put("b", "eq1", Place::kRefresh, 20);
  q.Put("c", "eq2", Place::kRefresh, 40);
  CHECK(q.DueCount(30) == 2);
  q.Put("a", "eq1", Place::kRefresh, 25);  // created: now a refresh, due at the cutoff 30
  CHECK(q.DueCount(30) == 2);
  CHECK(Order(q, 30) == Strings{"b", "a"});
  q.Put("b", "eq1", Place::kRefresh, 35);  // written again: not due before 35
  CHECK(q.DueCount(30) == 1);
  q.Remove("a");
  CHECK(q.DueCount(30) == 0);
  CHECK(q.DueCount(40) == 2);
  q.Remove("c");
  q.Remove("c");  // twice: nothing
  CHECK(q.DueCount(40) == 1);
  CHECK_FALSE(q.Contains("a"));
  CHECK(q.Contains("b"));
  q.Put("b", "eq1", Place::kCreate, 1);
  CHECK(q.DueCount(40) == 1);
  CHECK(Order(q, 40) == Strings{"b"});
}

TEST_CASE("event write queue: retries are handed back at their time",
          "[events][event_write_queue]") {
  EventWriteQueue q;
  q.Put("x", "eq1", Place::kRetry, 100);
  q.Put("y", "eq1", Place::kRetry, 200);
  CHECK(q.DueCount(1000) == 0);
  CHECK(q.TakeRetriesDue(99).empty());
  CHECK(q.TakeRetriesDue(150) == Strings{"x"});
  CHECK_FALSE(q.Contains("x"));
  CHECK(q.Contains("y"));
  CHECK(q.TakeRetriesDue(200) == Strings{"y"});
  CHECK(q.TakeRetriesDue(10'000).empty());
}

}  // namespace
}  // namespace event_write_queue_test
}  // namespace capext
