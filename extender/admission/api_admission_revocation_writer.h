// ApiAdmissionRevocationWriter: the admission loop's AdmissionRevocationWriter in live mode:
// kube::AdmissionRevoker (one JSON patch from the cached pod that tests its resourceVersion and
// removes admitted-at; a read and a second patch only when the cache was stale:
// docs/workloads-live.md#revoking-an-admission), sent only while this replica acts and bounded by
// the tenure left (Leadership::TimeLeft), like the gate removal.
// Thread-safety: as kube::AdmissionRevoker (any thread).
#pragma once

#include <chrono>
#include <memory>
#include <utility>

#include <fmt/format.h>

#include "extender/admission/admission_loop.h"
#include "extender/kube/gate_writes.h"
#include "extender/leadership/leadership.h"

namespace capext {

class ApiAdmissionRevocationWriter final : public AdmissionRevocationWriter {
 public:
  // `leadership` may be nullptr (always acts); it must outlive this object.
  ApiAdmissionRevocationWriter(std::unique_ptr<kube::AdmissionRevoker> revoker,
                               const Leadership* leadership)
      : revoker_(std::move(revoker)), leadership_(leadership) {}
  RevocationWriteOutcome Revoke(const Pod& pod, int64_t admitted_ms) override {
    constexpr std::chrono::milliseconds kWriteTimeout{30000};
    const std::chrono::milliseconds timeout =
        leadership_ == nullptr ? kWriteTimeout : leadership_->TimeLeft(kWriteTimeout);
    if (timeout.count() <= 0)
      return {RevocationWriteKind::kFailed, "not sent: this replica does not act", false};
    const kube::AdmissionRevocationWrite w =
        revoker_->Revoke(pod.ns, pod.name, pod.uid, pod.patch_basis, admitted_ms, timeout);
    RevocationWriteOutcome out;
    out.reread = w.read;
    switch (w.outcome) {
      case kube::RevokeOutcome::kRevoked:
        out.kind = RevocationWriteKind::kRevoked;
        break;
      case kube::RevokeOutcome::kNothingToRevoke:
        out.kind = RevocationWriteKind::kNothingToRevoke;
        break;
      case kube::RevokeOutcome::kChanged:
        out.kind = RevocationWriteKind::kChanged;
        break;
      case kube::RevokeOutcome::kFailed:
        out.kind = RevocationWriteKind::kFailed;
        out.error = w.write.http_status == 0 ? w.write.message
                                             : fmt::format("HTTP {} {}: {}", w.write.http_status,
                                                           w.write.reason, w.write.message);
        break;
    }
    return out;
  }

 private:
  std::unique_ptr<kube::AdmissionRevoker> revoker_;
  const Leadership* leadership_;
};

}  // namespace capext
