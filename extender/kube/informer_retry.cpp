#include "extender/kube/informer_retry.h"

#include <algorithm>

namespace capext::kube {
namespace {

std::chrono::milliseconds Draw(std::chrono::milliseconds base, double low, double high,
                               std::mt19937_64* random) {
  std::uniform_real_distribution<double> factor(low, high);
  return std::chrono::milliseconds(
      static_cast<int64_t>(static_cast<double>(base.count()) * factor(*random)));
}

}  // namespace

FailureKind FailureKindOf(int http_status) {
  if (http_status == 0) return FailureKind::kNoAnswer;
  if (http_status >= 500) return FailureKind::kUnavailable;
  return FailureKind::kErrorAnswer;
}

RetrySchedule::RetrySchedule(RetryOptions options, std::mt19937_64* random)
    : options_(options), random_(random) {}

std::chrono::milliseconds RetrySchedule::AfterFailure(
    FailureKind kind, std::optional<std::chrono::seconds> retry_after) {
  const bool asked = kind != FailureKind::kNoAnswer && retry_after && retry_after->count() >= 0;
  if (kind == FailureKind::kErrorAnswer && away_ && !asked) {
    // The first answers of a server back from an outage may be errors it cannot help yet
    // (kube-apiserver answers 403 until its authorizer has the roles): it stays away, probed,
    // and the step grown while it was gone starts again, once: error answers that go on grow it
    // (a server that answers 403 and never /readyz is not asked twice a second for ever).
    if (!answered_while_away_) step_ = 0;
    answered_while_away_ = true;
  } else {
    away_ = kind != FailureKind::kErrorAnswer;
  }
  auto ceiling = options_.initial;
  for (int i = 0; i < step_ && ceiling < options_.max; ++i)
    ceiling *= 2;
  ceiling = std::min(ceiling, options_.max);
  ++step_;
  if (asked) {
    const auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(*retry_after);
    return std::min(Draw(wait, 1.0, 1.25, random_), options_.max);
  }
  return Draw(ceiling, 0.5, 1.0, random_);
}

std::chrono::milliseconds RetrySchedule::NextProbeDelay() {
  return std::max(std::chrono::milliseconds(1), Draw(options_.probe_interval, 0.5, 1.0, random_));
}

bool RetrySchedule::OnProbe(bool serving) {
  if (!serving) {
    away_ = true;
    probe_wakes_ = 0;  // away again: a new outage, whose end may wake us
    return false;
  }
  away_ = false;
  if (probe_wakes_ >= options_.max_probe_wakes) return false;
  ++probe_wakes_;
  step_ = 0;  // back: a step grown while the server was gone says nothing about it now
  answered_while_away_ = false;
  return true;
}

void RetrySchedule::Succeeded() {
  step_ = 0;
  answered_while_away_ = false;
  away_ = false;
  probe_wakes_ = 0;
}

}  // namespace capext::kube
