// RetrySchedule: when an informer sends a failed request again
// (docs/architecture.md#staying-in-sync-with-the-api-server, "Retrying without going deaf"). Waits
// grow exponentially, so a struggling server is spared; while the server is away or not ready, the
// informer probes GET /readyz instead and retries as soon as it is, so a wait grown during an
// outage never delays the return.
//   - Every failure: wait a step, initial * 2^n capped at `max`, drawn in [50%, 100%]; a
//     Retry-After of an answer replaces the step, drawn in [100%, 125%], at most `max`.
//   - A failure without an answer (refused, reset, timed out, cut off mid-body), or a 5xx (the
//     server failing: starting, stopping, its storage away), marks the server away, Retry-After
//     or not: its readiness says when to come back. A 429 (the server throttles) and any other
//     error answer (4xx, an undecodable body) are waited out: the server is there and said so.
//   - Except just after an outage: an error answer without Retry-After while the server is away
//     keeps it away, and the first such answer restarts the step from the first (kube-apiserver
//     1.26 answers 403 to everything for a moment after its start, before its authorizer has
//     the roles); later ones grow it again.
//   - While away, probe every `probe_interval` drawn in [50%, 100%]. A probe the
//     server serves (200, or 401/403/404: it serves but will not tell) after it was away wakes
//     the informer at once and restarts the step from the first; one it does not (no answer,
//     5xx) keeps it away and waiting.
//   - At most `max_probe_wakes` probe-woken retries in a row may fail (a server that answers
//     /readyz but keeps cutting lists off); beyond, serving probes stop waking it until a request
//     succeeds or a probe fails again (a new outage).
//   - A success resets everything.
// Pure: the randomness comes from the generator passed in; no clock.
// Thread-safety: none (the informer's client thread).
#pragma once

#include <chrono>
#include <optional>
#include <random>

namespace capext::kube {

enum class FailureKind {
  kNoAnswer,     // no complete HTTP response: refused, reset, timed out, cut off mid-body
  kUnavailable,  // 5xx: the server answers but is failing (starting, stopping, storage away)
  kErrorAnswer,  // 429, any other error status, or a body that does not decode
};

// The kind of a failed request's HTTP status (0: no answer).
FailureKind FailureKindOf(int http_status);

struct RetryOptions {
  std::chrono::milliseconds initial{500};
  std::chrono::milliseconds max{30000};
  std::chrono::milliseconds probe_interval{500};
  int max_probe_wakes = 3;
};

class RetrySchedule {
 public:
  // `random` must outlive the schedule.
  RetrySchedule(RetryOptions options, std::mt19937_64* random);

  // A request failed: the wait before it is sent again. `retry_after` is the server's
  // Retry-After (only used for an error answer).
  std::chrono::milliseconds AfterFailure(FailureKind kind,
                                         std::optional<std::chrono::seconds> retry_after = {});
  // Whether to probe /readyz while waiting, and after how long (drawn afresh per call).
  bool ShouldProbe() const { return away_; }
  std::chrono::milliseconds NextProbeDelay();
  // A probe's outcome; true when the informer should retry now.
  bool OnProbe(bool serving);
  // A request succeeded.
  void Succeeded();

  bool away() const { return away_; }

 private:
  RetryOptions options_;
  std::mt19937_64* random_;
  int step_ = 0;
  bool away_ = false;    // no answer, a 5xx/429, or a probe not served, since the last success
  int probe_wakes_ = 0;  // probe-woken retries since the last success or failed probe
  bool answered_while_away_ = false;  // an error answer came while away, since the last wake
};

}  // namespace capext::kube
