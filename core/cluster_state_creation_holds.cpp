// ClusterState's creation holds: quota held for a pod admitted before it exists (gate mode's
// admission at creation, docs/workloads-live.md#admission-at-creation), until the pod is stored.
// The rest of ClusterState is in cluster_state.cpp; the invariants are in cluster_state.h.
#include "core/cluster_state.h"

namespace capext {

void ClusterState::HoldAtCreation(const NormalizedPod& pod, int64_t admitted_ms,
                                  int64_t expires_ms) {
  PutCreationHold(CreationHold{pod.ns, admitted_ms, pod.quota_request(), expires_ms});
}

void ClusterState::PutCreationHold(CreationHold hold) {
  ++version_;
  ledger_.ChangeUsage(store_.quota_set(), hold.ns, hold.quota_request, QuotaLedger::Part::kHeld,
                      +1);
  if (journal_) journal_->Record(ChangeJournal::Kind::kUsage, hold.ns);
  auto key = std::make_pair(hold.ns, hold.admitted_ms);
  creation_holds_.emplace(std::move(key), std::move(hold));
}

void ClusterState::EndCreationHold(const NormalizedPod& pod) {
  auto [first, last] = creation_holds_.equal_range(std::make_pair(pod.ns, pod.admitted_ms));
  if (first == last) return;
  // Holds of one namespace and time are interchangeable; the one with the pod's request keeps
  // the accounting exact when another webhook changed nothing after ours.
  auto it = first;
  for (auto same = first; same != last; ++same) {
    if (same->second.quota_request == pod.quota_request()) {
      it = same;
      break;
    }
  }
  EraseCreationHold(it);
}

void ClusterState::ExpireCreationHolds(int64_t now_ms) {
  for (auto it = creation_holds_.begin(); it != creation_holds_.end();) {
    if (it->second.expires_ms > now_ms) {
      ++it;
      continue;
    }
    it = EraseCreationHold(it);
  }
}

ClusterState::CreationHoldMap::iterator ClusterState::EraseCreationHold(
    CreationHoldMap::iterator it) {
  ++version_;
  ledger_.ChangeUsage(store_.quota_set(), it->second.ns, it->second.quota_request,
                      QuotaLedger::Part::kHeld, -1);
  if (journal_) journal_->Record(ChangeJournal::Kind::kUsage, it->second.ns);
  return creation_holds_.erase(it);
}

}  // namespace capext
