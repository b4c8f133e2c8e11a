// RetrySchedule (docs/architecture.md#staying-in-sync-with-the-api-server): growing jittered waits,
// Retry-After, probing while the server is away, the bound on probe-woken retries.
#include "extender/kube/informer_retry.h"

#include <catch2/catch.hpp>
#include <chrono>
#include <random>

namespace capext::kube {
namespace informer_retry_test {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

TEST_CASE("RetrySchedule: waits double from 500 ms to 30 s, each drawn in [50%, 100%]",
          "[kube][retry]") {
  std::mt19937_64 random(7);
  RetrySchedule retry(RetryOptions{}, &random);
  const long ceilings[] = {500, 1000, 2000, 4000, 8000, 16000, 30000, 30000, 30000};
  for (long ceiling : ceilings) {
    const auto wait = retry.AfterFailure(FailureKind::kErrorAnswer);
    INFO("ceiling " << ceiling << " wait " << wait.count());
    CHECK(wait.count() >= ceiling / 2);
    CHECK(wait.count() <= ceiling);
  }
  retry.Succeeded();  // back to the first step
  const auto first = retry.AfterFailure(FailureKind::kErrorAnswer);
  CHECK(first.count() >= 250);
  CHECK(first.count() <= 500);
}

TEST_CASE("RetrySchedule: a Retry-After replaces the step, drawn in [100%, 125%], at most max",
          "[kube][retry]") {
  std::mt19937_64 random(11);
  RetrySchedule retry(RetryOptions{}, &random);
  for (int i = 0; i < 20; ++i) {
    const auto wait = retry.AfterFailure(FailureKind::kErrorAnswer, seconds(2));
    CHECK(wait >= milliseconds(2000));
    CHECK(wait <= milliseconds(2500));
  }
  CHECK(retry.AfterFailure(FailureKind::kErrorAnswer, seconds(600)) == milliseconds(30000));
  // Without an answer there is no Retry-After to honour: the step applies.
  RetrySchedule fresh(RetryOptions{}, &random);
  CHECK(fresh.AfterFailure(FailureKind::kNoAnswer, seconds(20)) <= milliseconds(500));
}

TEST_CASE("RetrySchedule: probes only while the server is away, and wakes on a served probe",
          "[kube][retry]") {
  std::mt19937_64 random(3);
  RetrySchedule retry(RetryOptions{}, &random);
  retry.AfterFailure(FailureKind::kErrorAnswer);
  CHECK_FALSE(retry.ShouldProbe());  // the server answered: waiting is the point

  retry.AfterFailure(FailureKind::kNoAnswer);
  REQUIRE(retry.ShouldProbe());
  for (int i = 0; i < 20; ++i) {
    const auto delay = retry.NextProbeDelay();
    CHECK(delay >= milliseconds(250));
    CHECK(delay <= milliseconds(500));
  }
  CHECK_FALSE(retry.OnProbe(false));  // no answer, or 5xx: still away, keep waiting
  CHECK(retry.ShouldProbe());
  CHECK(retry.OnProbe(true));  // served: retry now
  CHECK_FALSE(retry.ShouldProbe());
}

TEST_CASE("RetrySchedule: a 5xx marks the server away, Retry-After or not; a 429 is waited out",
          "[kube][retry]") {
  CHECK(FailureKindOf(0) == FailureKind::kNoAnswer);
  CHECK(FailureKindOf(503) == FailureKind::kUnavailable);
  CHECK(FailureKindOf(500) == FailureKind::kUnavailable);
  CHECK(FailureKindOf(429) == FailureKind::kErrorAnswer);
  CHECK(FailureKindOf(403) == FailureKind::kErrorAnswer);
  CHECK(FailureKindOf(410) == FailureKind::kErrorAnswer);
  std::mt19937_64 random(9);
  RetrySchedule retry(RetryOptions{}, &random);

  SECTION("a server still starting: /readyz not served, then served, wakes the informer") {
    retry.AfterFailure(FailureKind::kUnavailable);
    REQUIRE(retry.ShouldProbe());
    CHECK_FALSE(retry.OnProbe(false));  // /readyz 500: it is starting
    CHECK(retry.ShouldProbe());
    CHECK(retry.OnProbe(true));  // ready now
  }
  SECTION("a 503 with Retry-After 5 (paths not installed yet): readiness may cut it short") {
    const auto wait = retry.AfterFailure(FailureKind::kUnavailable, seconds(5));
    CHECK(wait >= milliseconds(5000));
    REQUIRE(retry.ShouldProbe());
    CHECK(retry.OnProbe(true));
  }
  SECTION("a 429 with Retry-After: the server throttles, no probing") {
    retry.AfterFailure(FailureKind::kErrorAnswer, seconds(3));
    CHECK_FALSE(retry.ShouldProbe());
  }
  SECTION("a 403 is waited out") {
    retry.AfterFailure(FailureKind::kErrorAnswer);
    CHECK_FALSE(retry.ShouldProbe());
  }
}

TEST_CASE("RetrySchedule: at most 3 probe-woken retries in a row may fail", "[kube][retry]") {
  std::mt19937_64 random(5);
  RetrySchedule retry(RetryOptions{}, &random);
  // A server that answers /readyz but cuts every list off (or answers every list 500).
  for (int i = 0; i < 3; ++i) {
    retry.AfterFailure(FailureKind::kNoAnswer);
    REQUIRE(retry.ShouldProbe());
    CHECK(retry.OnProbe(true));
  }
  retry.AfterFailure(FailureKind::kNoAnswer);
  REQUIRE(retry.ShouldProbe());
  CHECK_FALSE(retry.OnProbe(true));  // waits out its backoff now
  CHECK_FALSE(retry.ShouldProbe());

  SECTION("until the server is seen away again (a new outage)") {
    retry.AfterFailure(FailureKind::kNoAnswer);
    CHECK_FALSE(retry.OnProbe(false));
    CHECK(retry.OnProbe(true));
  }
  SECTION("or a request succeeds") {
    retry.Succeeded();
    retry.AfterFailure(FailureKind::kNoAnswer);
    CHECK(retry.OnProbe(true));
  }
}

TEST_CASE(
    "RetrySchedule: a server back from an outage answering errors (403 before its authorizer has "
    "the roles) stays away, and the step grown while it was gone starts again",
    "[kube][retry]") {
  std::mt19937_64 random(13);
  RetrySchedule retry(RetryOptions{}, &random);
  for (int i = 0; i < 6; ++i)
    retry.AfterFailure(FailureKind::kNoAnswer);  // a long outage: the step is at 16 s and more

  SECTION("the first error answer: the first step again, still probing; later ones grow it") {
    const auto first = retry.AfterFailure(FailureKind::kErrorAnswer);
    CHECK(first <= milliseconds(500));
    CHECK(retry.ShouldProbe());
    const auto second = retry.AfterFailure(FailureKind::kErrorAnswer);
    CHECK(second >= milliseconds(500));
    CHECK(second <= milliseconds(1000));
    CHECK(retry.ShouldProbe());
    CHECK(retry.OnProbe(true));  // /readyz answers: retry now
    // Back: an error answer now is the server's word, waited out from the first step.
    CHECK(retry.AfterFailure(FailureKind::kErrorAnswer) <= milliseconds(500));
    CHECK_FALSE(retry.ShouldProbe());
  }
  SECTION("a probe that wakes the informer starts the step again") {
    CHECK(retry.OnProbe(true));
    CHECK(retry.AfterFailure(FailureKind::kNoAnswer) <= milliseconds(500));
  }
  SECTION("an error answer with Retry-After is waited out, not probed") {
    const auto wait = retry.AfterFailure(FailureKind::kErrorAnswer, seconds(3));
    CHECK(wait >= milliseconds(3000));
    CHECK(wait <= milliseconds(3750));
    CHECK_FALSE(retry.ShouldProbe());
  }
}

}  // namespace
}  // namespace informer_retry_test
}  // namespace capext::kube
