// ApiGateOpener: the admission loop's GateOpener in live mode: kube::GateLifter (one JSON patch
// from the cached pod that tests and removes our gate and stamps admitted-at; a read and a second
// patch only when the cache was stale: docs/workloads-live.md#the-gate-removal), sent only while
// this replica acts and bounded by the tenure left (Leadership::TimeLeft), like every other
// background write (docs/architecture.md#two-replicas-one-actor).
// Thread-safety: as kube::GateLifter (any thread).
#pragma once

#include <chrono>
#include <memory>
#include <utility>

#include <fmt/format.h>

#include "extender/admission/admission_loop.h"
#include "extender/kube/gate_writes.h"
#include "extender/leadership/leadership.h"

namespace capext {

class ApiGateOpener final : public GateOpener {
 public:
  // `leadership` may be nullptr (always acts); it must outlive this object.
  ApiGateOpener(std::unique_ptr<kube::GateLifter> lifter, const Leadership* leadership)
      : lifter_(std::move(lifter)), leadership_(leadership) {}
  GateOpenOutcome Open(const Pod& pod, int64_t admitted_ms) override {
    constexpr std::chrono::milliseconds kWriteTimeout{30000};
    const std::chrono::milliseconds timeout =
        leadership_ == nullptr ? kWriteTimeout : leadership_->TimeLeft(kWriteTimeout);
    if (timeout.count() <= 0) return {false, "not sent: this replica does not act"};
    const kube::GateLift lift = lifter_->Lift(
        pod.ns, pod.name, pod.uid, pod.patch_basis,
        std::chrono::system_clock::time_point(std::chrono::milliseconds(admitted_ms)), timeout);
    const kube::ApiWriteResult& r = lift.write;
    if (r.ok) return {true, "", lift.read};
    return {false,
            r.http_status == 0 ? r.message
                               : fmt::format("HTTP {} {}: {}", r.http_status, r.reason, r.message),
            lift.read};
  }

 private:
  std::unique_ptr<kube::GateLifter> lifter_;
  const Leadership* leadership_;
};

}  // namespace capext
