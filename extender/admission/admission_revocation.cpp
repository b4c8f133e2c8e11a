// AdmissionLoop's revocations (docs/workloads-live.md#revoking-an-admission): a member admitted
// through the gate whose gang lost its core, without a controller, loses its admission. Record
// first (ClusterState::RevokeAdmission: no hold is derived from the annotation any more), then one
// JSON patch removing admitted-at, then an Event, a log line and a count. A failed patch is retried
// with backoff while the cache still shows the revoked annotation; the record's expiry is renewed
// at each try. Runs on the loop's thread only, and only while this replica acts.
#include <algorithm>
#include <iterator>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "core/reasons.h"
#include "extender/admission/admission_loop.h"
#include "extender/log.h"

namespace capext {

void AdmissionLoop::Revoke(const AdmissionRound& round, int64_t now_ms) {
  if (revoker_ == nullptr) return;
  std::set<std::string> listed;
  for (const GroupTimeout& t : round.timed_out) {
    for (const std::string& key : t.revoke) {
      listed.insert(key);
      // Written already, the watch not showing it yet; or being retried.
      if (revoked_.count(key) != 0 || revoking_.count(key) != 0) continue;
      const int64_t admitted_ms = cache_->Read([&](const ClusterState& state) -> int64_t {
        const NormalizedPod* pod = state.FindPod(key);
        return pod == nullptr ? 0 : pod->admitted_ms;
      });
      if (admitted_ms == 0) continue;
      Revocation r;
      r.admitted_ms = admitted_ms;
      r.note = reasons::AdmissionRevoked(t.group.Display(), t.active, t.min_member);
      r.next_ms = now_ms;
      revoking_.emplace(key, std::move(r));
    }
  }
  for (auto it = revoking_.begin(); it != revoking_.end();) {
    Revocation& r = it->second;
    if (r.next_ms > now_ms) {
      ++it;
      continue;
    }
    // Record first (or renew): from here on no /filter and no round counts the annotation.
    std::optional<Pod> pod = cache_->Write([&](ClusterState& state) -> std::optional<Pod> {
      const NormalizedPod* p = state.FindPod(it->first);
      // Gone, placed, or no longer carrying the admission revoked: nothing left to revoke.
      if (p == nullptr || p->IsBound() || p->IsTerminal() || p->admitted_ms != r.admitted_ms)
        return std::nullopt;
      state.RevokeAdmission(it->first, now_ms + options_.hold_ttl_ms);
      return Pod(*p);
    });
    if (!pod) {
      it = revoking_.erase(it);
      continue;
    }
    const RevocationWriteOutcome out = revoker_->Revoke(*pod, r.admitted_ms);
    if (out.reread) metrics_->Count("capacity_extender_gate_rereads_total");
    switch (out.kind) {
      case RevocationWriteKind::kRevoked:
        metrics_->Count("capacity_extender_admissions_revoked_total");
        Log(LogLevel::kInfo, "admission revoked", {{"pod", pod->Key()}, {"reason", r.note}});
        RevokedEvent(*pod, r.note, now_ms);
        revoked_.insert(it->first);
        it = revoking_.erase(it);
        break;
      case RevocationWriteKind::kNothingToRevoke:
      case RevocationWriteKind::kChanged:
        // The watch settles the record: the annotation gone, or a later admission kept.
        Log(LogLevel::kInfo, "admission not revoked",
            {{"pod", pod->Key()},
             {"why", out.kind == RevocationWriteKind::kChanged ? "admitted-at changed"
                                                               : "nothing to revoke"}});
        revoked_.insert(it->first);
        it = revoking_.erase(it);
        break;
      case RevocationWriteKind::kFailed:
        metrics_->Count("capacity_extender_admission_revoke_failures_total");
        r.backoff_ms = r.backoff_ms == 0 ? options_.revoke_retry_ms
                                         : std::min(r.backoff_ms * 2, options_.max_revoke_retry_ms);
        r.next_ms = now_ms + r.backoff_ms;
        Log(LogLevel::kWarn, "admission revocation failed: retried later",
            {{"pod", pod->Key()},
             {"error", out.error},
             {"retry_in_ms", std::to_string(r.backoff_ms)}});
        ++it;
        break;
    }
  }
  ForgetRevoked(listed);
}

void AdmissionLoop::ForgetRevoked(const std::set<std::string>& listed) {
  for (auto it = revoked_.begin(); it != revoked_.end();)
    it = listed.count(*it) != 0 ? std::next(it) : revoked_.erase(it);
}

void AdmissionLoop::RevokedEvent(const Pod& pod, const std::string& note, int64_t now_ms) {
  if (events_ == nullptr) return;
  const EventWriteResult w = events_->Create(PodEvent(
      pod.ns, pod.name, pod.uid, fmt::format("{}.revoked.{:x}", pod.name, now_ms * 1'000'000),
      "Warning", "AdmissionRevoked", note, now_ms));
  if (w.code != EventWriteCode::kOk)
    Log(LogLevel::kWarn, "revocation event failed", {{"pod", pod.Key()}, {"error", w.error}});
}

}  // namespace capext
