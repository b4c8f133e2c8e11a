// The checker of the slow-bind test and benchmark (bench/micro/bind_retry_scheduler.h): on
// hand-made runs, CheckBindRun finds each violation it names, and only it (a Binding reaching the
// API server past its bind's deadline + transit, a pod bound twice, a Binding the API server
// refused, a pod never bound, a pod bound for an attempt answered with an error, a success
// answered for another node, POSTs with no /bind to pair them with), counts the remaining window
// (bound for an attempt that timed out) without failing, and, without the extender's records,
// counts deadlines from the scheduler's attempts. The two parsers read the double's request log
// and the extender's logfmt bind lines as they are written.
#include "bench/micro/bind_run_check.h"

#include <catch2/catch.hpp>
#include <chrono>
#include <string>
#include <vector>

namespace capext::bench {
namespace bind_retry_scheduler_test {
namespace {

using namespace std::chrono_literals;
using Clock = BindRetryScheduler::Clock;
using Outcome = BindRetryScheduler::Outcome;

constexpr auto kDeadline = 800ms;
constexpr auto kTransit = 150ms;

Clock::time_point At(std::chrono::milliseconds ms) {
  return Clock::time_point(std::chrono::duration_cast<Clock::duration>(ms + 1000s));
}

// A run of pods p-0, p-1, ... in namespace "ns", built attempt by attempt with the Bindings the
// API server received and the extender's records of the Bindings it sent.
struct Run {
  std::vector<BindRetryScheduler::Pod> pods;
  BindRetryScheduler::Result result;
  std::vector<BindingPost> posts;
  std::vector<BindOwner> owners;

  explicit Run(int n) {
    for (int i = 0; i < n; ++i)
      pods.push_back({"ns", "p-" + std::to_string(i), "uid-" + std::to_string(i), {"n1", "n2"}});
    result.pods.assign(pods.size(), {});
  }
  void Attempt(std::size_t pod, std::string node, std::chrono::milliseconds start,
               std::chrono::milliseconds end, Outcome outcome, std::string error = "",
               uint16_t port = 0) {
    const int number = ++result.pods[pod].attempts;
    result.attempts.push_back(
        {pod, number, std::move(node), At(start), At(end), outcome, std::move(error), port});
  }
  // A Binding of `pod` to `node` for the /bind that arrived at `received` from `port` (0: the
  // record names no caller): the extender's record and the API server's entry (arrived at
  // `arrived`, answered `status`).
  void Binding(std::size_t pod, std::string node, std::chrono::milliseconds received,
               std::chrono::milliseconds arrived, int status = 201, uint16_t port = 0) {
    const std::string key = pods[pod].ns + "/" + pods[pod].name;
    owners.push_back(
        {key, node, status == 201 ? "bound" : "bind-failed", At(received + kDeadline), port});
    posts.push_back(
        {pods[pod].ns, pods[pod].name, std::move(node), status, At(arrived), At(arrived + 20ms)});
  }
  BindRunCheck Check() const {
    return CheckBindRun(pods, result, posts, owners, kDeadline, kTransit);
  }
};

TEST_CASE("CheckBindRun: a clean run passes, with its counts and waits", "[bench][slow-binds]") {
  Run run(2);
  run.Attempt(0, "n1", 0ms, 100ms, Outcome::kBound);
  run.Binding(0, "n1", 1ms, 60ms);
  // p-1: its first attempt refused at the bound (no Binding), the retry binds on n2.
  run.Attempt(1, "n1", 0ms, 5ms, Outcome::kRefused, "maxBindsInFlight");
  run.Attempt(1, "n2", 1000ms, 1300ms, Outcome::kBound);
  run.Binding(1, "n2", 1002ms, 1250ms);
  const BindRunCheck check = run.Check();
  INFO(check.Describe());
  CHECK(check.ok());
  CHECK(check.posts == 2);
  CHECK(check.created == 2);
  CHECK(check.created_after_timeout == 0);
  CHECK(check.max_send_wait_ms == Approx(250));
  CHECK(check.send_wait_ms.size() == 2);
  CHECK(check.max_past_deadline_ms == Approx(250.0 - 802.0));
}

TEST_CASE("CheckBindRun: a Binding past its deadline + transit is late, at it is not",
          "[bench][slow-binds]") {
  Run run(2);
  run.Attempt(0, "n1", 0ms, 1000ms, Outcome::kBound);
  run.Binding(0, "n1", 10ms, 10ms + kDeadline + kTransit);  // exactly at the limit
  run.Attempt(1, "n1", 0ms, 1000ms, Outcome::kBound);
  run.Binding(1, "n1", 10ms, 10ms + kDeadline + kTransit + 1ms);
  const BindRunCheck check = run.Check();
  INFO(check.Describe());
  REQUIRE(check.sent_late.size() == 1);
  CHECK(check.sent_late[0].starts_with("ns/p-1:"));
  CHECK_FALSE(check.ok());
}

TEST_CASE("CheckBindRun: bound twice, refused by the API server, never bound",
          "[bench][slow-binds]") {
  Run run(3);
  run.Attempt(0, "n1", 0ms, 5000ms, Outcome::kTimedOut);
  run.Binding(0, "n1", 1ms, 100ms);
  run.Attempt(0, "n1", 6000ms, 6100ms, Outcome::kBound);
  run.Binding(0, "n1", 6001ms, 6050ms);  // a second Binding created: bound twice
  run.Attempt(1, "n1", 0ms, 100ms, Outcome::kBound);
  run.Binding(1, "n1", 1ms, 50ms);
  run.Attempt(1, "n1", 1000ms, 1100ms, Outcome::kRefused, "already bound");
  run.Binding(1, "n1", 1001ms, 1050ms, 409);  // a second Binding tried: refused by the API server
  run.Attempt(2, "n1", 0ms, 100ms, Outcome::kRefused, "quota");
  const BindRunCheck check = run.Check();
  INFO(check.Describe());
  CHECK(check.bound_twice == std::vector<std::string>{"ns/p-0: 2"});
  CHECK(check.extra_posts == std::vector<std::string>{"ns/p-1: HTTP 409"});
  CHECK(check.never_bound == std::vector<std::string>{"ns/p-2"});
  CHECK(check.bound_after_error.empty());
  CHECK(check.sent_late.empty());
  CHECK(check.created_after_timeout == 1);
  CHECK_FALSE(check.ok());
}

TEST_CASE("CheckBindRun: bound for an attempt answered with an error, or for another node",
          "[bench][slow-binds]") {
  Run run(2);
  // p-0: the extender answered an error, yet that attempt's Binding was created.
  run.Attempt(0, "n1", 0ms, 300ms, Outcome::kRefused, "binding failed");
  run.Binding(0, "n1", 2ms, 200ms);
  run.Attempt(0, "n1", 1300ms, 1310ms, Outcome::kBound);  // its retry: already bound
  // p-1: answered success for n2, bound to n1.
  run.Attempt(1, "n1", 0ms, 5000ms, Outcome::kTimedOut);
  run.Binding(1, "n1", 3ms, 100ms);
  run.Attempt(1, "n2", 6000ms, 6010ms, Outcome::kBound);
  const BindRunCheck check = run.Check();
  INFO(check.Describe());
  REQUIRE(check.bound_after_error.size() == 1);
  CHECK(check.bound_after_error[0].starts_with("ns/p-0 (attempt 1)"));
  REQUIRE(check.wrong_node.size() == 1);
  CHECK(check.wrong_node[0] == "ns/p-1 (attempt 2): answered success for n2, bound to n1");
  CHECK(check.created_after_timeout == 1);  // p-1's: the remaining window, no violation
  CHECK_FALSE(check.ok());
}

TEST_CASE("CheckBindRun: a POST without its /bind record, or before any attempt, is unattributed",
          "[bench][slow-binds]") {
  Run run(2);
  run.Attempt(0, "n1", 0ms, 100ms, Outcome::kBound);
  run.Binding(0, "n1", 1ms, 50ms);
  run.owners.pop_back();  // the extender logged no sent Binding for p-0
  run.owners.push_back({"ns/p-unrelated", "n1", "bound", At(kDeadline)});  // keeps owners non-empty
  run.Attempt(1, "n1", 100ms, 200ms, Outcome::kBound);
  run.Binding(1, "n1", 50ms, 150ms);  // its /bind arrived before the scheduler sent any
  const BindRunCheck check = run.Check();
  INFO(check.Describe());
  REQUIRE(check.unattributed.size() == 2);
  CHECK(check.unattributed[0] == "ns/p-0: 1 Binding POSTs, 0 sent Bindings logged");
  CHECK(check.unattributed[1] == "ns/p-1: no attempt started before its bind arrived");
  CHECK_FALSE(check.ok());
}

TEST_CASE("CheckBindRun: without the extender's records, deadlines count from the attempts",
          "[bench][slow-binds]") {
  Run run(2);
  run.Attempt(0, "n1", 0ms, 1000ms, Outcome::kBound);
  run.Binding(0, "n1", 500ms, kDeadline + kTransit);  // on time from the attempt's start
  run.Attempt(1, "n1", 0ms, 5000ms, Outcome::kTimedOut);
  run.Attempt(1, "n1", 6000ms, 6100ms, Outcome::kBound);
  run.Binding(1, "n1", 500ms, 4000ms);  // the first attempt's, sent 3.2 s after its deadline
  run.owners.clear();
  const BindRunCheck check = run.Check();
  INFO(check.Describe());
  REQUIRE(check.sent_late.size() == 1);
  CHECK(check.sent_late[0].starts_with("ns/p-1:"));
  CHECK(check.unattributed.empty());
  CHECK(check.created_after_timeout == 1);
}

TEST_CASE("ParseBindingPosts and ParseBindOwners read the double's log and the extender's lines",
          "[bench][slow-binds]") {
  const std::string log =
      R"({"requests":[)"
      R"({"method":"GET","path":"/api/v1/pods","status":200,"arrived":1.0,"answered":1.1,"body":""},)"
      R"({"method":"POST","path":"/api/v1/namespaces/burst/pods/p-00007/binding","status":201,)"
      R"("arrived":12.5,"answered":12.52,"body":"{\"kind\":\"Binding\",\"target\":{\"name\":\"n2\"}}"}]})";
  std::vector<BindingPost> posts;
  REQUIRE(ParseBindingPosts(log, &posts));
  REQUIRE(posts.size() == 1);
  CHECK(posts[0].ns == "burst");
  CHECK(posts[0].name == "p-00007");
  CHECK(posts[0].node == "n2");
  CHECK(posts[0].status == 201);
  CHECK(std::chrono::duration<double>(posts[0].arrived.time_since_epoch()).count() == Approx(12.5));
  CHECK(std::chrono::duration<double>(posts[0].answered - posts[0].arrived).count() ==
        Approx(0.02));
  CHECK_FALSE(ParseBindingPosts("not json", &posts));

  const std::string lines =
      "ts=2026-11-26T20:00:00.000Z level=debug msg=bind pod=burst/p-00007 node=n2 outcome=bound "
      "queued_ms=3 deadline_monotonic_ms=12800.250 client=127.0.0.1:40123 reason=\"\"\n"
      "ts=2026-11-26T20:00:00.001Z level=debug msg=bind pod=burst/p-00008 node=n1 "
      "outcome=expired queued_ms=800 deadline_monotonic_ms=12900.000 reason=\"not sent\"\n"
      "ts=2026-11-26T20:00:00.002Z level=warn msg=bind pod=burst/p-00009 node=n1 "
      "outcome=unanswered queued_ms=0 deadline_monotonic_ms=13000.000 reason=\"timed out\"\n"
      "ts=2026-11-26T20:00:00.003Z level=info msg=bind pod=burst/p-00010 node=n1 "
      "outcome=refused reason=\"quota\"\n";
  const std::vector<BindOwner> owners = ParseBindOwners(lines);
  REQUIRE(owners.size() == 2);  // the sent Bindings only: not the expired one, not the refusal
  CHECK(owners[0].pod == "burst/p-00007");
  CHECK(owners[0].node == "n2");
  CHECK(owners[0].outcome == "bound");
  CHECK(std::chrono::duration<double, std::milli>(owners[0].deadline.time_since_epoch()).count() ==
        Approx(12800.25));
  CHECK(owners[0].client_port == 40123);
  CHECK(owners[1].pod == "burst/p-00009");
  CHECK(owners[1].outcome == "unanswered");
  CHECK(owners[1].client_port == 0);  // a line without its caller
}

TEST_CASE("CheckBindRun: a /bind read after the next attempt began belongs to its caller's port",
          "[bench][slow-binds]") {
  // p-0: attempt 1 (port 40001) times out at 1,000 ms; the extender reads it only at 1,210 ms,
  // after attempt 2 (port 40002) began, and binds it; attempt 2 joins and is refused at its own
  // deadline while that Binding is still in the air.
  const auto play = [](uint16_t record_port) {
    Run run(1);
    run.Attempt(0, "n1", 0ms, 1000ms, Outcome::kTimedOut, "timeout", 40001);
    run.Attempt(0, "n1", 1200ms, 2010ms, Outcome::kRefused, "earlier Binding unanswered", 40002);
    run.Binding(0, "n1", 1210ms, 1300ms, 201, record_port);
    return run.Check();
  };
  const BindRunCheck by_port = play(40001);
  INFO(by_port.Describe());
  CHECK(by_port.ok());
  CHECK(by_port.created_after_timeout == 1);  // the remaining window, no violation
  // Without the caller in the record, the arrival time names attempt 2: a false violation.
  const BindRunCheck by_time = play(0);
  CHECK(by_time.bound_after_error.size() == 1);
  // A record naming the refused attempt's port is a violation, whatever the times say.
  const BindRunCheck refused = play(40002);
  REQUIRE(refused.bound_after_error.size() == 1);
  CHECK(refused.bound_after_error[0].starts_with("ns/p-0 (attempt 2)"));
  // A port no attempt of the pod used pairs with nothing.
  const BindRunCheck stranger = play(40999);
  REQUIRE(stranger.unattributed.size() == 1);
  CHECK(stranger.unattributed[0].starts_with("ns/p-0: no attempt from port 40999"));
}

}  // namespace
}  // namespace bind_retry_scheduler_test
}  // namespace capext::bench
