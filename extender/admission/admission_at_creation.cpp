// Gate mode's admission at creation (docs/workloads-live.md#admission-at-creation): /mutate admits
// a pod before it exists, instead of gating it, when the admission loop would lift its gate at
// once. The quota is held by a creation hold until the watch shows the pod.
#include <chrono>

#include <fmt/format.h>

#include "core/quota_admission.h"
#include "extender/admission/admission_loop.h"
#include "extender/kube/api_writes.h"

namespace capext {
namespace {

// The tenure a replica must have left to admit at creation (the pod's store after the answer).
constexpr std::chrono::milliseconds kCreationTenureMargin{2000};

CreationAdmission Gate(std::string why) {
  return CreationAdmission{CreationAdmission::Verdict::kGate, 0, "", std::move(why)};
}

}  // namespace

CreationAdmission AdmissionLoop::AdmitAtCreation(Pod pod) {
  if (!options_.admit_at_creation) return Gate("admitAtCreation is off");
  // A follower's hold would be invisible to the replica that admits.
  if (!Acts()) return Gate("this replica does not act");
  // The pod is stored after this answer, and the next replica to act starts only after this
  // tenure ends: a tenure about to end could let it decide before the pod is there.
  if (leadership_ != nullptr &&
      leadership_->TimeLeft(kCreationTenureMargin) < kCreationTenureMargin) {
    return Gate("this replica's tenure ends within 2 s");
  }
  if (const std::string hold = cache_->SyncReport().Hold(); !hold.empty()) {
    return Gate("the cache is out of sync: " + hold);
  }
  const int64_t now_ms = cache_->NowMs();
  CreationAdmission out = cache_->Write([&](ClusterState& state) {
    if (pod.admitted_ms != 0) {
      // A re-invoked webhook sees the annotation it added; any other admitted-at is not ours
      // and admits nothing.
      if (state.creation_holds().count({pod.ns, pod.admitted_ms}) > 0) {
        return CreationAdmission{CreationAdmission::Verdict::kAlreadyAdmitted, pod.admitted_ms, "",
                                 ""};
      }
      return Gate("carries an admitted-at annotation of no admission at creation");
    }
    // Nothing passes a pod that waits (whatever the queue's order would say).
    if (const std::size_t queued = state.queued_gated_pods(); queued > 0) {
      return Gate(fmt::format("{} pods wait in the admission queue", queued));
    }
    const NormalizedPod normalized = state.Normalize(std::move(pod));
    // The admission loop's own rule for a single pod (core/admission_queue.h).
    if (Status s = CheckQuota(state, normalized); !s.ok()) return Gate(s.message());
    state.HoldAtCreation(normalized, now_ms, now_ms + options_.hold_ttl_ms);
    return CreationAdmission{CreationAdmission::Verdict::kAdmit, now_ms, "", ""};
  });
  if (out.verdict == CreationAdmission::Verdict::kAdmit) {
    out.admitted_at = kube::Rfc3339Millis(
        std::chrono::system_clock::time_point(std::chrono::milliseconds(out.admitted_ms)));
    metrics_->Count("capacity_extender_admissions_at_creation_total");
  }
  return out;
}

}  // namespace capext
