// ApiGateOpener: the admission loop's GateOpener in live mode: kube::GateLifter (GET the pod,
// then one JSON patch that tests and removes our gate and stamps admitted-at).
// Thread-safety: as kube::GateLifter (any thread).
#pragma once

#include <chrono>
#include <memory>
#include <utility>

#include <fmt/format.h>

#include "extender/admission/admission_loop.h"
#include "extender/kube/gate_writes.h"

namespace capext {

class ApiGateOpener final : public GateOpener {
 public:
  explicit ApiGateOpener(std::unique_ptr<kube::GateLifter> lifter) : lifter_(std::move(lifter)) {}
  GateOpenOutcome Open(const Pod& pod, int64_t admitted_ms) override {
    const kube::ApiWriteResult r = lifter_->Lift(
        pod.ns, pod.name, pod.uid,
        std::chrono::system_clock::time_point(std::chrono::milliseconds(admitted_ms)));
    if (r.ok) return {true, ""};
    return {false, r.http_status == 0
                       ? r.message
                       : fmt::format("HTTP {} {}: {}", r.http_status, r.reason, r.message)};
  }

 private:
  std::unique_ptr<kube::GateLifter> lifter_;
};

}  // namespace capext
