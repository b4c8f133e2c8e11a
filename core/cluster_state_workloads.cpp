// ClusterState's workload part (docs/workloads.md): holds without a node and the group index.
// The rest of ClusterState is in cluster_state.cpp; the invariants are in cluster_state.h.
#include <limits>

#include "core/cluster_state.h"
#include "core/group_view.h"

namespace capext {

// --- holds ---------------------------------------------------------------------------------------

void ClusterState::SyncHold(const NormalizedPod& pod) {
  const std::string& key = pod.store_key();
  // A revocation record ends when the pod shows no admitted-at, another one (a later admission:
  // not the one revoked), or is placed or done (docs/workloads.md#2-holds-quota-without-a-node).
  bool revoked = false;
  if (auto r = revocations_.find(key); r != revocations_.end()) {
    if (pod.IsBound() || pod.IsTerminal() || pod.admitted_ms != r->second.admitted_ms) {
      revocations_.erase(r);
    } else {
      revoked = true;
    }
  }
  const bool may_hold =
      !pod.IsBound() && !pod.IsTerminal() && !pod.other_gates && PlacedReservation(key) == nullptr;
  const QuotaHold* held = ledger_.HasHolds() ? ledger_.FindHold(key) : nullptr;  // no lookup
  // Still carrying our gate: only an explicit hold (a gate removal in flight) stays.
  const bool in_flight = pod.quota_gated && held != nullptr && !held->derived;
  if (!may_hold || (pod.quota_gated && !in_flight)) {
    if (held != nullptr) DropHold(key);
    if (pod.IsBound() || pod.IsTerminal()) suspended_holds_.erase(key);
    return;
  }
  if (pod.admitted_ms > 0 && !pod.quota_gated && !revoked) {
    if (held != nullptr && held->derived && held->quota_request == pod.quota_request() &&
        held->held_ms == pod.admitted_ms) {
      return;
    }
    ++version_;
    if (journal_) journal_->ReservationChanged(key, pod.ns, "");
    ledger_.PutHold(store_.quota_set(),
                    QuotaHold{key, pod.ns, pod.quota_request(), pod.admitted_ms,
                              std::numeric_limits<int64_t>::max(), /*derived=*/true});
  } else if (held != nullptr && held->derived) {
    // Revoked, or the annotation is gone: nothing derives this hold any more.
    DropHold(key);
  } else if (held != nullptr && held->quota_request != pod.quota_request()) {
    QuotaHold h = *held;
    h.quota_request = pod.quota_request();
    if (journal_) journal_->ReservationChanged(key, pod.ns, "");
    ledger_.PutHold(store_.quota_set(), std::move(h));
  }
}

void ClusterState::DropHold(std::string_view key) {
  QuotaHold removed;
  if (!ledger_.RemoveHold(store_.quota_set(), key, &removed)) return;
  ++version_;
  if (journal_) journal_->ReservationChanged(removed.uid, removed.ns, "");
}

void ClusterState::Hold(std::string_view key, int64_t held_ms, int64_t expires_ms) {
  const NormalizedPod* pod = store_.FindPod(key);
  // Our own gate does not stop a hold: docs/workloads.md#2-holds-quota-without-a-node, a gate
  // removal in flight.
  if (pod == nullptr || pod->IsBound() || pod->IsTerminal() || pod->other_gates ||
      PlacedReservation(key) != nullptr) {
    return;
  }
  ++version_;
  if (const QuotaHold* existing = ledger_.FindHold(key)) {
    if (existing->derived) return;  // the annotation holds it for as long as it is admitted
    QuotaHold h = *existing;
    h.expires_ms = expires_ms;
    ledger_.PutHold(store_.quota_set(), std::move(h));
    return;
  }
  if (journal_) journal_->ReservationChanged(pod->store_key(), pod->ns, "");
  const std::string owned = pod->store_key();
  ledger_.PutHold(store_.quota_set(), QuotaHold{owned, pod->ns, pod->quota_request(), held_ms,
                                                expires_ms, /*derived=*/false});
  SettleClaims(store_.devices().ClaimsOfPod(owned));  // a held pod holds its claims
  RefreshGroupOfKey(owned);
}

void ClusterState::ReleaseHold(std::string_view key) {
  suspended_holds_.erase(std::string(key));
  if (ledger_.FindHold(key) == nullptr) return;
  DropHold(key);
  SettleClaims(store_.devices().ClaimsOfPod(key));
  RefreshGroupOfKey(key);
}

// --- revoked admissions ----------------------------------------------------------------------

void ClusterState::RevokeAdmission(std::string_view key, int64_t expires_ms) {
  const NormalizedPod* pod = store_.FindPod(key);
  if (pod == nullptr || pod->IsBound() || pod->IsTerminal() || pod->IsGated() ||
      pod->admitted_ms == 0) {
    return;
  }
  ++version_;
  const std::string owned = pod->store_key();
  auto [it, inserted] =
      revocations_.try_emplace(owned, AdmissionRevocation{pod->admitted_ms, expires_ms});
  if (!inserted && it->second.expires_ms != kNoExpiry) it->second.expires_ms = expires_ms;
  const QuotaHold* held = ledger_.FindHold(owned);
  if (held == nullptr || !held->derived) return;  // an explicit hold is not the annotation's
  DropHold(owned);
  SettleClaims(store_.devices().ClaimsOfPod(owned));
  RefreshGroupOfKey(owned);  // no longer admitted, so no longer orphaned
}

void ClusterState::ExpireRevocations(int64_t now_ms) {
  for (auto it = revocations_.begin(); it != revocations_.end();) {
    if (it->second.expires_ms > now_ms) {
      ++it;
      continue;
    }
    const std::string key = it->first;
    it = revocations_.erase(it);
    ++version_;
    const NormalizedPod* pod = store_.FindPod(key);
    if (pod == nullptr) continue;
    SyncHold(*pod);  // still annotated: the hold is derived again
    const QuotaHold* held = ledger_.FindHold(key);
    if (held == nullptr || !held->derived) continue;
    SettleClaims(store_.devices().ClaimsOfPod(key));
    RefreshGroupOfKey(key);
  }
}

// --- groups --------------------------------------------------------------------------------------

void ClusterState::UpsertPodGroup(const PodGroupSpec& spec) {
  ++version_;
  groups_[spec.key].spec = spec;
  RefreshGroup(spec.key);
}

void ClusterState::DeletePodGroup(const GroupKey& key) {
  auto it = groups_.find(key);
  if (it == groups_.end() || !it->second.spec) return;
  ++version_;
  it->second.spec.reset();
  if (it->second.members.empty()) {
    groups_.erase(it);
    return;
  }
  RefreshGroup(key);
}

const GroupView* ClusterState::FindGroup(const GroupKey& key) const {
  auto it = groups_.find(key);
  return it == groups_.end() ? nullptr : &it->second.view;
}

const GroupView* ClusterState::GroupOf(const Pod& pod) const {
  if (pod.group.empty()) return nullptr;
  return FindGroup(GroupKeyOf(pod));
}

void ClusterState::JoinGroup(const GroupKey& group, const std::string& key) {
  groups_[group].members.insert(key);
  RefreshGroup(group);
}

void ClusterState::LeaveGroup(const GroupKey& group, const std::string& key) {
  auto it = groups_.find(group);
  if (it == groups_.end()) return;
  it->second.members.erase(key);
  if (it->second.members.empty() && !it->second.spec) {
    groups_.erase(it);
    return;
  }
  RefreshGroup(group);
}

void ClusterState::RefreshGroupOfKey(std::string_view key) {
  if (groups_.empty()) return;
  const NormalizedPod* pod = store_.FindPod(key);
  if (pod != nullptr && !pod->group.empty()) RefreshGroup(GroupKeyOf(*pod));
}

bool ClusterState::GroupMemberOnNode(std::string_view key) const {
  const NormalizedPod* pod = store_.FindPod(key);
  if (pod == nullptr || pod->group.empty() || pod->IsTerminal()) return false;
  return pod->IsBound() || PlacedReservation(key) != nullptr;
}

// docs/workloads.md#2-holds-quota-without-a-node: a gang below its minMember after a
// member left a node has lost its core. Its explicit holds end at once; its derived holds (gate
// mode) are the admission loop's to end (GroupView::orphaned); with no member left on a node it
// is starting again.
void ClusterState::MemberLeftNode(const GroupKey& group) {
  auto it = groups_.find(group);
  if (it == groups_.end()) return;
  GroupRecord& record = it->second;
  const GroupView& view = record.view;
  if (!view.IsGang() || view.active() >= view.min_member) return;
  ++version_;
  std::vector<std::string> released;
  for (const auto& m : view.members) {
    if (m.state != MemberState::kAdmitted) continue;
    const std::string& key = m.pod->store_key();
    const QuotaHold* h = ledger_.FindHold(key);
    if (h != nullptr && h->derived) {
      // Admitted through the gate: its admission is revoked at once, by a record without expiry
      // (docs/workloads.md#2-holds-quota-without-a-node), and the admission loop removes the
      // annotation (or evicts the pod, when a controller re-creates it gated).
      revocations_[key] = AdmissionRevocation{m.pod->admitted_ms, kNoExpiry};
      record.orphaned.insert(key);
      released.push_back(key);
    } else if (h != nullptr) {
      released.push_back(key);
    }
  }
  for (const auto& key : released)
    DropHold(key);
  for (const auto& key : record.members)
    suspended_holds_.erase(key);
  if (view.bound + view.reserved == 0) record.complete = false;
  RefreshGroup(group);
  // The released pods no longer hold their claims
  // (docs/devices.md#5-a-shared-claim-is-charged-once).
  std::vector<std::string> claims;
  for (const auto& key : released) {
    const std::vector<std::string>& of_pod = store_.devices().ClaimsOfPod(key);
    claims.insert(claims.end(), of_pod.begin(), of_pod.end());
  }
  SettleClaims(claims);
}

void ClusterState::RefreshGroup(const GroupKey& group) {
  auto it = groups_.find(group);
  if (it == groups_.end()) return;
  GroupRecord& record = it->second;
  std::vector<const NormalizedPod*> members;
  for (const auto& key : record.members) {
    if (const NormalizedPod* pod = store_.FindPod(key)) members.push_back(pod);
  }
  record.view = BuildGroupView(group, record.spec ? &*record.spec : nullptr, members, ledger_,
                               record.complete);
  if (record.view.IsGang() && record.view.bound >= record.view.min_member) record.complete = true;
  if (record.view.members.empty()) record.complete = false;
  record.view.complete = record.complete;
  // An orphaned member stays one while its revocation stands (the annotation is still on it).
  for (auto o = record.orphaned.begin(); o != record.orphaned.end();) {
    if (record.members.count(*o) != 0 && revocations_.count(*o) != 0) {
      record.view.orphaned.push_back(*o);
      ++o;
    } else {
      o = record.orphaned.erase(o);
    }
  }
}

}  // namespace capext
